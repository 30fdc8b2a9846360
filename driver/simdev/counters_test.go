package simdev

import (
	"bytes"
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

// placementRefused registers an MR over a buffer of its own, clears the
// buffer's DMA window (slot 2: the arena has 0, the pair's buffer 1) and
// has the stack RDMA Write 5000 octets into it: the device refuses the
// placement (DMA_REFUSED, what for placement) and writes nothing there.
// It returns the buffer's octets and the DMA_REFUSED events for placement.
func placementRefused(t *testing.T, b driver.Backend) ([]byte, []hostif.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := newStackPair(t, ctx, b, true)
	buf2, err := sp.d.AllocDMA(16 << 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf2.Mem {
		buf2.Mem[i] = byte(i*3 + 1)
	}
	before := append([]byte(nil), buf2.Mem...)
	mr2, err := sp.pd.RegisterMR(buf2, 0, uint64(len(buf2.Mem)), hostif.AccessLocalRead|hostif.AccessRemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.d.Exec(hostif.DMAWindow{Slot: 2}); err != nil {
		t.Fatal(err)
	}
	sp.sendFirst(t, ctx, b)
	pw := make([]byte, 5000)
	for i := range pw {
		pw[i] = byte(i*11 + 5)
	}
	if err := sp.vqp.PostSend(ctx, verbs.SendWR{Op: verbs.OpWrite, Data: pw, RemoteSTag: mr2.STag,
		RemoteTO: mr2.TO + 3, Unsignaled: true}); err != nil {
		t.Fatal(err)
	}
	// Events until the first refusal, then 200 ms more (what the engines
	// still had of the Write: the device refuses each burst, the stream
	// ends at the first error).
	var refused []hostif.Event
	var settle time.Time
	for settle.IsZero() || time.Now().Before(settle) {
		evs, err := sp.d.Events()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type == hostif.EventDMARefused && e.Detail == hostif.DMAForPlacement {
				refused = append(refused, e)
				if settle.IsZero() {
					settle = time.Now().Add(200 * time.Millisecond)
				}
				if e.Address < buf2.Addr || e.Address+uint64(e.Value) > buf2.Addr+uint64(len(buf2.Mem)) {
					t.Errorf("DMA_REFUSED %+v outside the buffer at %#x", e, buf2.Addr)
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("DMA_REFUSED for placement: %v after 60 s; memory written: %v", refused,
				!bytes.Equal(buf2.Mem, before))
		case <-time.After(5 * time.Millisecond):
		}
	}
	if !bytes.Equal(buf2.Mem, before) {
		t.Error("a placement into a cleared DMA window was written")
	}
	return buf2.Mem, refused
}

// A placement write into an MR whose DMA window was cleared after
// MR_WRITE: neither the simulated device (rnic_dma_wr's pass-through
// check) nor the model writes an octet of it, and both raise DMA_REFUSED
// for placement inside the MR's memory (the device one per AXI burst, the
// model one per DDP segment).
func TestSimPlacementWindow(t *testing.T) {
	sim := start(t, Config{MemSize: 4 << 20})
	_, got := placementRefused(t, sim)
	m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
		SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, want := placementRefused(t, m)
	t.Logf("sim DMA_REFUSED %v; model %v", got, want)
}
