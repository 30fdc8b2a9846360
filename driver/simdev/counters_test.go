package simdev

import (
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regs"
)

// counters reads every counter of b's counters block (what `rnic-loader
// stats` prints), by name.
func counters(t *testing.T, b driver.Backend) map[string]uint64 {
	t.Helper()
	d, err := driver.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := d.Map.Counters(b)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]uint64, len(cs))
	for _, c := range cs {
		out[c.Name] = c.Value
	}
	return out
}

// cntExc gives b one segment for a QP that is not enabled (QP 5: the
// stack pair's QP is another) and waits until the exception counter
// counts it: the EXCEPTION event is handed on after the buffer's write.
func cntExc(t *testing.T, b driver.Backend, before uint64) {
	t.Helper()
	if err := b.Network().SegIn(driver.Segment{QPN: 5, Seq: 1000, Octets: excBig()[:100]}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); counters(t, b)["rx_exc_not_enabled"] == before; {
		if time.Now().After(deadline) {
			t.Fatal("the segment for a QP not enabled did not reach the exception ring in 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The simulated device's counters block against the model's after the
// same traffic, every counter by name: both directions against the
// software stack with markers and CRC on (txRun: Writes and Sends out,
// the Read's Read Responses and the stack's Write in; rxRun: the stack's
// Sends into posted buffers and its Reads through the Read responder),
// and a segment for a QP not enabled (the exception ring).
func TestSimCountersAgainstModel(t *testing.T) {
	runs := []struct {
		name string
		run  func(t *testing.T, b driver.Backend)
	}{
		{"send", func(t *testing.T, b driver.Backend) {
			txRun(t, b, true, []int{1, 63, 1000, 4096, 9000, 65536})
			cntExc(t, b, 0)
		}},
		{"receive", func(t *testing.T, b driver.Backend) {
			rxRun(t, b, true)
			cntExc(t, b, 0)
		}},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			sim := start(t, Config{MemSize: 4 << 20})
			r.run(t, sim)
			got := counters(t, sim)
			m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
				SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			r.run(t, m)
			want := counters(t, m)
			if len(got) != len(want) || len(got) == 0 {
				t.Fatalf("sim counters %v, model %v", got, want)
			}
			// The traffic did happen: a comparison of zeros proves nothing.
			for _, n := range []string{"tx_fpdus", "tx_octets", "rx_fpdus", "rx_octets", "rx_exc_not_enabled",
				"dma_reads", "dma_writes"} {
				if want[n] == 0 {
					t.Errorf("model counter %s is 0 after the traffic", n)
				}
			}
			t.Logf("sim %v", got)
			t.Logf("model %v", want)
			for _, c := range regs.Counters {
				if got[c.Name] != want[c.Name] {
					t.Errorf("counter %s: sim %d, model %d", c.Name, got[c.Name], want[c.Name])
				}
			}
		})
	}
}
