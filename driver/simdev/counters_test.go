package simdev

import (
	"context"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/verbs"
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

// drainRun consumes entries of both rings of a stack pair's QP (three
// signalled RDMA Writes; two receives the stack's Sends complete), then
// drains and destroys the QP: QP_DRAIN's output words, how far the SQ and
// RQ engines consumed the rings.
func drainRun(t *testing.T, b driver.Backend) hostif.DrainResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := newStackPair(t, ctx, b, true)
	for i := range 3 {
		if err := sp.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 100, ID: uint64(i),
			LKey: sp.mr.STag, LocalTO: sp.mr.TO, RKey: sp.vmr.STag, RemoteTO: sp.vmr.Addr}); err != nil {
			t.Fatal(err)
		}
	}
	sp.waitCQEs(t, ctx, b, 3)
	for i := range 2 {
		if err := sp.qp.PostRecv(hostif.RQE{ID: uint64(10 + i), LKey: sp.mr.STag, Length: 64,
			LocalTO: sp.mr.TO + 4096}); err != nil {
			t.Fatal(err)
		}
		if err := sp.vqp.PostSend(ctx, verbs.SendWR{ID: uint64(i), Op: verbs.OpSend, Data: []byte("drain")}); err != nil {
			t.Fatal(err)
		}
		if c := sp.waitCQEs(t, ctx, b, 1)[0]; c.ID != uint64(10+i) || c.Status != hostif.StatusSuccess {
			t.Fatalf("receive CQE %+v", c)
		}
	}
	res, err := sp.qp.Destroy()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// QP_DRAIN's output words (ARG0 the SQ's consumer index, ARG1 the RQ's)
// from the simulated device's engines, as the model answers them.
func TestSimDrainIndices(t *testing.T) {
	sim := start(t, Config{MemSize: 4 << 20})
	got := drainRun(t, sim)
	m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
		SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := drainRun(t, m)
	if want != (hostif.DrainResult{SQIndex: 3, RQIndex: 2}) {
		t.Fatalf("the model drained at %+v, want SQ 3, RQ 2", want)
	}
	if got != want {
		t.Fatalf("QP_DRAIN: sim %+v, model %+v", got, want)
	}
}
