package simdev

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// errOutcome is what a QP failure left: the events (EXCEPTION events
// aside: errRun's last step checks them on their own), the send and
// receive CQEs (each in its own order: rnic_sq and rnic_rq complete into
// the CQ in an interleaving of their own, the model send side first), the
// Terminate the software stack received from the device (nil if none),
// and what the stack's QP found.
type errOutcome struct {
	events     []hostif.Event
	send, recv []hostif.CQE
	term       *rdmap.Terminate
	stackErr   string
	// The run's buffer addresses, which the Terminate's copied headers
	// carry as TOs: the device's MR (its TO) and the stack's MR (the
	// Read's sink). The sim and the model hand out different device
	// addresses, and the stack's buffer is new each run.
	devTO, stackTO uint64
}

// normTerm returns t with the TOs its copied headers carry made relative
// to the run's buffers: a tagged DDP header's TO (RFC 5041 4.2: octets
// 6..13) to the device's MR, a Read Request header's sink TO (RFC 5040
// 4.4: octets 4..11) to the stack's MR and its source TO (20..27) to the
// device's. Everything else stays as the device sent it.
func normTerm(t *rdmap.Terminate, devTO, stackTO uint64) *rdmap.Terminate {
	if t == nil {
		return nil
	}
	n := *t
	sub := func(b []byte, off int, base uint64) []byte {
		c := append([]byte(nil), b...)
		binary.BigEndian.PutUint64(c[off:], binary.BigEndian.Uint64(c[off:])-base)
		return c
	}
	if n.D && len(n.DDPHeader) == 14 {
		n.DDPHeader = sub(n.DDPHeader, 6, devTO)
	}
	if n.R && len(n.RDMAHeader) == rdmap.ReadRequestLen {
		n.RDMAHeader = sub(sub(n.RDMAHeader, 4, stackTO), 20, devTO)
	}
	return &n
}

// The QP failures errRun provokes on a device (sim or model) connected to
// the software stack.
const (
	errPeerTerminate = "peer-terminate" // the device Reads through a bad STag: the stack's Terminate
	errBadSTag       = "write-bad-stag" // the stack Writes through a bad STag of the device's
	errLongSend      = "send-too-long"  // the stack Sends more than the posted receive holds
	errReadBounds    = "read-bounds"    // the stack Reads past the end of the device's MR
	errCQOverrun     = "cq-overrun"     // 64 Writes fill the CQ, the stack's Send overruns it
)

// errRun connects a device to the software stack, lets the device send a
// first Write (MPA's Initiator sends first), posts two receives (16 and
// 64 octets), then provokes the failure kind names and waits for its
// completions and events.
func errRun(t *testing.T, b driver.Backend, kind string) errOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := newStackPair(t, ctx, b, false)
	d, qp, mr, vqp, vmr := sp.d, sp.qp, sp.mr, sp.vqp, sp.vmr
	if err := qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 10, ID: 1, LKey: mr.STag,
		LocalTO: mr.TO, RKey: vmr.STag, RemoteTO: vmr.Addr}); err != nil {
		t.Fatal(err)
	}
	first := sp.waitCQEs(t, ctx, b, 1)
	for i, n := range []uint32{16, 64} {
		if err := qp.PostRecv(hostif.RQE{ID: uint64(100 + i), LKey: mr.STag, Length: n,
			LocalTO: mr.TO + 4096*uint64(i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until both receives are posted (the device fetched them):
	// a Send of 1 octet would complete one; instead the RQ engine's
	// fetch is given time, as the model's is immediate.
	time.Sleep(200 * time.Millisecond)
	badKey := func(stag uint32) uint32 { return stag&^0xff | (stag+0x5a)&0xff }
	want := 2 // the receives, flushed or failed
	switch kind {
	case errPeerTerminate:
		// RFC 5040 7: the stack finds the source STag invalid and
		// terminates the stream; the device's Read completes REMOTE.
		if err := qp.PostSend(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 100, ID: 7, LKey: mr.STag,
			LocalTO: mr.TO + 64<<10, RKey: badKey(vmr.STag), RemoteTO: vmr.Addr}); err != nil {
			t.Fatal(err)
		}
		want++
	case errBadSTag:
		if err := vqp.PostSend(ctx, verbs.SendWR{ID: 1, Op: verbs.OpWrite, Data: make([]byte, 100),
			RemoteSTag: badKey(mr.STag), RemoteTO: mr.TO}); err != nil {
			t.Fatal(err)
		}
	case errLongSend:
		if err := vqp.PostSend(ctx, verbs.SendWR{ID: 1, Op: verbs.OpSend, Data: make([]byte, 100)}); err != nil {
			t.Fatal(err)
		}
	case errReadBounds:
		if err := vqp.PostSend(ctx, verbs.SendWR{ID: 1, Op: verbs.OpRead, RemoteSTag: mr.STag,
			RemoteTO: mr.TO + uint64(len(sp.buf.Mem)) - 10, Sink: vmr, Len: 100}); err != nil {
			t.Fatal(err)
		}
	case errCQOverrun:
		// The CQ (64 entries, one consumed) fills with the Writes'
		// completions; the Send's is one too many: CQ_OVERRUN, and the
		// QP fails as for a local fault (the model's complete()); the
		// flushed receive's CQE is lost with the CQ.
		for i := 0; i < 64; i++ {
			if err := qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 1, ID: uint64(10 + i),
				LKey: mr.STag, LocalTO: mr.TO, RKey: vmr.STag, RemoteTO: vmr.Addr + uint64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		if err := vqp.PostSend(ctx, verbs.SendWR{ID: 1, Op: verbs.OpSend, Data: make([]byte, 5)}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-vqp.Dead():
		case <-ctx.Done():
			t.Fatalf("the stack's QP is still up; relay %v", sp.relay.Err())
		}
		want = 64
	default:
		t.Fatalf("errRun: no failure %q", kind)
	}
	got := sp.waitCQEs(t, ctx, b, want)
	out := errOutcome{devTO: mr.TO, stackTO: vmr.Addr}
	for _, c := range append(first, got...) {
		if c.Op == hostif.OpRecv {
			out.recv = append(out.recv, c)
		} else {
			out.send = append(out.send, c)
		}
	}
	// The stack's QP ends too: with the device's Terminate, or (the peer
	// Terminate case) with its own.
	select {
	case <-vqp.Dead():
	case <-ctx.Done():
		t.Fatalf("the stack's QP is still up; relay %v", sp.relay.Err())
	}
	var qe *verbs.QPError
	if err := vqp.Err(); errors.As(err, &qe) {
		out.term = qe.Remote
		out.stackErr = err.Error()
	}
	wantEv := 1
	if kind == errCQOverrun {
		wantEv = 2
	}
	for len(out.events) < wantEv {
		evs, err := d.Events()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type != hostif.EventException {
				out.events = append(out.events, e)
			}
		}
		if len(out.events) < wantEv {
			select {
			case <-time.After(10 * time.Millisecond):
			case <-ctx.Done():
				t.Fatalf("events %+v: the failure's are not all in", out.events)
			}
		}
	}
	// Nothing more completes.
	time.Sleep(100 * time.Millisecond)
	if e, ok, err := sp.cq.Poll(); err != nil || ok {
		t.Fatalf("a CQE after the failure's: %+v, %v", e, err)
	}
	return out
}

// The device's error paths against the model's (driver/model/datapath.go
// fail), each through the software stack over loopback TCP: the peer's
// Terminate (TERMINATE_RECEIVED; the outstanding Read completes REMOTE
// with the Terminate's layer/etype and code; nothing sent back), an RDMA
// Write through a bad STag (QP_ERROR DDP Tagged Buffer Invalid STag, the
// Terminate naming it, every receive FLUSHED), a Send longer than the
// posted receive (DDP Untagged Buffer message too long; that receive
// completes PROTOCOL with the Terminate's octets), a Read past the MR's
// end (the Read responder's RDMAP Remote Protection base/bounds error).
// Events, CQEs (status, Terminate octets) and the Terminate on the wire
// are the model's, the Terminate field by field (iwarp/rdmap's
// ParseTerminate of both): layer, etype, code, and what it copies (RFC
// 5040 4.8): M with the segment length, D with the offending DDP header,
// R with the Read Request header (ddp_rx's m_err, the Read responder's
// fail_*, rnic_sq's payload), octet for octet but for the TOs in those
// headers, each compared relative to its own run's buffer (normTerm).
func TestSimErrorsAgainstModel(t *testing.T) {
	for _, kind := range []string{errPeerTerminate, errBadSTag, errLongSend, errReadBounds, errCQOverrun} {
		t.Run(kind, func(t *testing.T) {
			sim := start(t, Config{MemSize: 4 << 20})
			got := errRun(t, sim, kind)
			m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
				SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			want := errRun(t, m, kind)
			t.Logf("model: events %+v send %d CQEs, last %+v, recv %+v; stack: %s", want.events, len(want.send),
				want.send[len(want.send)-1], want.recv, want.stackErr)
			if fmt.Sprint(got.events) != fmt.Sprint(want.events) {
				t.Errorf("events: sim %+v, model %+v", got.events, want.events)
			}
			if fmt.Sprint(got.send) != fmt.Sprint(want.send) {
				t.Errorf("send CQEs: sim %+v, model %+v", got.send, want.send)
			}
			if fmt.Sprint(got.recv) != fmt.Sprint(want.recv) {
				t.Errorf("receive CQEs: sim %+v, model %+v", got.recv, want.recv)
			}
			if kind == errCQOverrun {
				if len(want.events) != 2 || want.events[0].Type != hostif.EventCQOverrun ||
					want.events[1].Type != hostif.EventQPError {
					t.Errorf("the model's events %+v: not CQ_OVERRUN, QP_ERROR", want.events)
				}
			} else if len(want.events) != 1 || (want.events[0].Type != hostif.EventQPError) == (kind != errPeerTerminate) {
				t.Errorf("the model's events %+v: not the one failure expected", want.events)
			}
			switch {
			case (got.term == nil) != (want.term == nil):
				t.Errorf("the Terminate on the wire: sim %v, model %v", got.term, want.term)
			case got.term != nil:
				got.term = normTerm(got.term, got.devTO, got.stackTO)
				want.term = normTerm(want.term, want.devTO, want.stackTO)
				if got.term.Layer != want.term.Layer || got.term.EType != want.term.EType ||
					got.term.Code != want.term.Code || got.term.M != want.term.M || got.term.D != want.term.D ||
					got.term.R != want.term.R || got.term.SegmentLen != want.term.SegmentLen ||
					!bytes.Equal(got.term.DDPHeader, want.term.DDPHeader) ||
					!bytes.Equal(got.term.RDMAHeader, want.term.RDMAHeader) ||
					got.term.SwappedBitfields != want.term.SwappedBitfields {
					t.Errorf("the Terminate: sim %v, model %v", got.term, want.term)
				}
				// The cases that copy headers do copy them (the model's
				// Terminate for the peer's stream errors), so the
				// comparison above covers them.
				if want.term.D != (kind == errBadSTag || kind == errLongSend || kind == errReadBounds) ||
					want.term.R != (kind == errReadBounds) {
					t.Errorf("the model's Terminate %v: not the copies this case is meant to compare", want.term)
				}
			}
		})
	}
}
