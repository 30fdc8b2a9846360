package simdev

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// rqWindowRun registers an MR over a buffer of its own, clears the
// buffer's DMA window (slot 2: the arena has 0, the pair's buffer 1),
// posts a receive into it and one into the pair's MR, and has the stack
// Send 20 octets. It returns the receive CQEs (with the buffer's
// address: the CQEs name none) and the events.
func rqWindowRun(t *testing.T, b driver.Backend) ([]hostif.CQE, []hostif.Event, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := newStackPair(t, ctx, b, true)
	buf2, err := sp.d.AllocDMA(16 << 10)
	if err != nil {
		t.Fatal(err)
	}
	mr2, err := sp.pd.RegisterMR(buf2, 0, uint64(len(buf2.Mem)), hostif.AccessLocalRead|hostif.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.d.Exec(hostif.DMAWindow{Slot: 2}); err != nil {
		t.Fatal(err)
	}
	sp.sendFirst(t, ctx, b)
	if err := sp.qp.PostRecv(hostif.RQE{ID: 0x51, LKey: mr2.STag, Length: 64, LocalTO: mr2.TO + 100}); err != nil {
		t.Fatal(err)
	}
	if err := sp.qp.PostRecv(hostif.RQE{ID: 0x52, LKey: sp.mr.STag, Length: 64, LocalTO: sp.mr.TO + 4096}); err != nil {
		t.Fatal(err)
	}
	// The first receive's completion comes at its post (LOCAL_ACCESS on
	// both); the Send goes into the second.
	recv := sp.waitCQEs(t, ctx, b, 1)
	if err := sp.vqp.PostSend(ctx, verbs.SendWR{ID: 9, Op: verbs.OpSend, Data: make([]byte, 20)}); err != nil {
		t.Fatal(err)
	}
	recv = append(recv, sp.waitCQEs(t, ctx, b, 1)...)
	var evs []hostif.Event
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		e, err := sp.d.Events()
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e...)
	}
	return recv, evs, buf2.Addr
}

// A receive buffer outside every DMA window (its window cleared after
// MR_WRITE): the simulated device's RQ engine refuses it when it is
// posted, as the model's runRQ (hostMem): DMA_REFUSED for placement (the
// QP, the buffer's address and length) and the entry completes
// LOCAL_ACCESS; the QP stays up and the next receive takes the Send.
func TestSimRQWindowAgainstModel(t *testing.T) {
	sim := start(t, Config{MemSize: 4 << 20})
	got, gotEv, gotAddr := rqWindowRun(t, sim)
	m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
		SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want, wantEv, wantAddr := rqWindowRun(t, m)
	if len(want) != 2 || want[0].Status != hostif.StatusLocalAccess || want[1].Status != hostif.StatusSuccess ||
		len(wantEv) != 1 || wantEv[0].Type != hostif.EventDMARefused || wantEv[0].Detail != hostif.DMAForPlacement {
		t.Fatalf("model: CQEs %v, events %v: not LOCAL_ACCESS, SUCCESS and one DMA_REFUSED", want, wantEv)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("receive CQEs: sim %+v, model %+v", got, want)
	}
	// The buffers' addresses are each backend's own: the events are
	// compared with the address as an offset into the buffer.
	off := func(evs []hostif.Event, base uint64) []hostif.Event {
		out := append([]hostif.Event(nil), evs...)
		for i := range out {
			if out[i].Type == hostif.EventDMARefused {
				out[i].Address -= base
			}
		}
		return out
	}
	if g, w := off(gotEv, gotAddr), off(wantEv, wantAddr); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("events (DMA_REFUSED addresses as offsets into the buffer):\nsim   %v\nmodel %v", g, w)
	}
}
