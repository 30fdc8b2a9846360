package driver_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// fakeRx is a device's receive side as docs/device.md describes it, for
// one QP: it takes a segment that starts at or before rcv_nxt and runs
// past it (the new octets go on the stream), and hands back every other
// one on an exception ring of 16 buffers of 2 KiB that overwrites its
// oldest buffer when it wraps; the handed-back buffers become visible
// (their EXCEPTION events) only lag calls of Events later, as a device
// that runs on its own shows them late.
type fakeRx struct {
	qpn    uint16
	next   uint32
	stream []byte
	ring   []driver.Exception // written, oldest first (at most 16 kept)
	lost   int                // buffers overwritten before they were read
	seen   int                // buffers Events has announced
	lag    int
	calls  int
	inErr  bool
	lie    bool // hand the next taken segment back as out of order
	refuse bool // SegIn fails, taking nothing (a closed device, a mirror that found a difference)
	drop   bool // the next out-of-order segment is not handed back (a device bug)
	polls  int  // Events fails after this many calls, if set (a host that would wait for ever)
}

const fakeRoom = 1<<driver.ExcBufLog2 - hostif.ExcHeaderLen

func (f *fakeRx) excp(s driver.Segment, why hostif.ExcReason) {
	for off := 0; off == 0 || off < len(s.Octets); off += fakeRoom {
		n := min(fakeRoom, len(s.Octets)-off)
		f.ring = append(f.ring, driver.Exception{ExcHeader: hostif.ExcHeader{QPN: s.QPN, Length: uint16(n), Seq: s.Seq + uint32(off), Reason: why},
			Octets: append([]byte(nil), s.Octets[off:off+n]...)})
		if len(f.ring) > 1<<driver.ExcLog2 {
			f.ring, f.lost = f.ring[1:], f.lost+1
			f.seen = max(f.seen-1, 0)
		}
	}
}

func (f *fakeRx) SegIn(s driver.Segment) error {
	if f.refuse {
		return errors.New("fake: the device is closed")
	}
	end := s.Seq + uint32(len(s.Octets))
	switch {
	case f.drop && int32(s.Seq-f.next) > 0:
		f.drop = false
	case f.inErr:
		f.excp(s, hostif.ExcInError)
	case len(s.Octets) == 0:
		f.excp(s, hostif.ExcEmpty)
	case int32(s.Seq-f.next) > 0 || f.lie:
		f.lie = false
		f.excp(s, hostif.ExcOutOfOrder)
	case int32(end-f.next) <= 0:
		f.excp(s, hostif.ExcDuplicate)
	default:
		f.stream = append(f.stream, s.Octets[f.next-s.Seq:]...)
		f.next = end
	}
	return nil
}

func (f *fakeRx) SegOut() <-chan driver.Segment { return nil }
func (f *fakeRx) Sent() uint64                  { return 0 }

// Events announces the buffers written lag calls ago.
func (f *fakeRx) Events() ([]hostif.Event, error) {
	f.calls++
	if f.polls > 0 && f.calls > f.polls {
		return nil, errStillWaiting
	}
	if f.calls%(f.lag+1) == 0 {
		f.seen = len(f.ring)
	}
	return nil, nil
}

func (f *fakeRx) Exceptions() ([]driver.Exception, error) {
	x := f.ring[:f.seen]
	f.ring, f.seen = f.ring[f.seen:], 0
	return x, nil
}

// Reasm against the fake: a stream cut into pieces of 1 octet up to 5000,
// shuffled, some delivered twice or as partial copies, exception buffers
// seen late: the device ends up with every octet once, in order; nothing
// is held or expected at the end, no buffer was overwritten unread (SegIn
// waits for room), duplicates were dropped.
func TestWireReasmFake(t *testing.T) {
	for _, lag := range []int{0, 3} {
		rng := rand.New(rand.NewPCG(7, uint64(lag)))
		want := make([]byte, 60000)
		for i := range want {
			want[i] = byte(rng.Uint32())
		}
		const base = 0xffff_f000 // the sequence numbers wrap
		var segs []driver.Segment
		for off := 0; off < len(want); {
			n := min(len(want)-off, 1+rng.IntN(5000))
			if rng.IntN(3) == 0 {
				n = min(len(want)-off, 1+rng.IntN(3))
			}
			segs = append(segs, driver.Segment{QPN: 2, Seq: base + uint32(off), Octets: want[off : off+n]})
			if rng.IntN(5) == 0 {
				lo := off + rng.IntN(n)
				hi := min(len(want), lo+1+rng.IntN(3000))
				segs = append(segs, driver.Segment{QPN: 2, Seq: base + uint32(lo), Octets: want[lo:hi]})
			}
			off += n
		}
		segs = append(segs, segs[3], driver.Segment{QPN: 2, Seq: base + 9})
		rng.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
		f := &fakeRx{qpn: 2, next: base, lag: lag}
		r := driver.NewReasmOn(f, f)
		r.Poll = 0
		r.Add(2, base)
		for _, s := range segs {
			if err := r.SegIn(s); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Settle(100); err != nil {
			t.Fatal(err)
		}
		st := r.Stats()
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		if f.lost != 0 || !bytes.Equal(f.stream, want) || r.Held(2) != 0 || r.Next(2) != base+uint32(len(want)) {
			t.Fatalf("lag %d: %d buffers overwritten unread, stream of %d octets (equal %v), %d held, next %#x; %+v",
				lag, f.lost, len(f.stream), bytes.Equal(f.stream, want), r.Held(2), r.Next(2), st)
		}
		if st.OutOfOrder == 0 || st.Reoffered == 0 || st.Duplicate+st.Dropped == 0 || (lag > 0 && st.Waits == 0) {
			t.Fatalf("lag %d: the stream did not exercise the reassembler: %+v", lag, st)
		}
	}
}

// A segment longer than the exception ring holds is cut by the host
// before the device could overwrite its first buffers; a device that
// hands back what the host expected it to take is reported; a QP in error
// drops what comes back for it.
func TestWireReasmFakeEdges(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 4000) // 64000 octets: 32 buffers
	f := &fakeRx{qpn: 1, next: 100}
	r := driver.NewReasmOn(f, f)
	r.Poll = 0
	r.Add(1, 100)
	if err := r.SegIn(driver.Segment{QPN: 1, Seq: 110, Octets: big}); err != nil {
		t.Fatal(err)
	}
	if err := r.SegIn(driver.Segment{QPN: 1, Seq: 100, Octets: []byte("0123456789")}); err != nil {
		t.Fatal(err)
	}
	if err := r.Settle(10); err != nil {
		t.Fatal(err)
	}
	if f.lost != 0 || len(f.stream) != 64010 || !bytes.Equal(f.stream[10:], big) || r.Err() != nil {
		t.Fatalf("%d lost, %d octets, %v", f.lost, len(f.stream), r.Err())
	}

	f.lie = true
	r.SegIn(driver.Segment{QPN: 1, Seq: 64110, Octets: []byte("x")})
	r.Service()
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "with reason out of order, the host expected none") {
		t.Fatalf("a device that hands back what it should take: %v", err)
	}

	f2 := &fakeRx{qpn: 1, next: 0}
	r2 := driver.NewReasmOn(f2, f2)
	r2.Add(1, 0)
	r2.SegIn(driver.Segment{QPN: 1, Seq: 5, Octets: []byte("later")})
	f2.inErr = true
	r2.SegIn(driver.Segment{QPN: 1, Seq: 0, Octets: []byte("first")})
	r2.Service()
	if st := r2.Stats(); st.InError != 1 || st.OutOfOrder != 1 || r2.Held(1) != 0 || r2.Pending() != 0 || r2.Err() != nil {
		t.Fatalf("QP in error: %+v, %d held, %d pending, %v", st, r2.Held(1), r2.Pending(), r2.Err())
	}
}

// The relay gives the socket's octets to the device through a Reasm
// (UseReasm): the software stack's Write and Send reach the model, the
// Reasm follows the QP's stream octet for octet and nothing comes back.
func TestWireRelayThroughReasm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e := newEnd(t, 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pd := verbs.NewDevice().AllocPD()
	cfg := mpa.Config{Markers: true, IRD: 2, ORD: 2}
	vqpc := make(chan *verbs.QP, 1)
	go func() {
		qp, err := verbs.Accept(ctx, pd, ln, verbs.QPConfig{MPA: cfg, EMSS: 1460})
		if err != nil {
			t.Error(err)
		}
		vqpc <- qp
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rts, p, err := driver.StartMPA(ctx, c, mpa.Initiator, cfg, e.qp.N, 1460)
	if err != nil {
		t.Fatal(err)
	}
	vqp := <-vqpc
	if vqp == nil {
		t.FailNow()
	}
	defer vqp.Close()
	x := driver.NewReasm(e.d)
	relay := driver.NewRelay(e.m.Network())
	relay.UseReasm(x)
	relay.Add(c, rts, p)
	defer relay.Close()
	if err := e.qp.RTS(rts); err != nil {
		t.Fatal(err)
	}
	if err := relay.Start(e.qp.N); err != nil {
		t.Fatal(err)
	}
	if err := e.qp.PostRecv(hostif.RQE{ID: 9, LKey: e.mr.STag, Length: 100, LocalTO: e.mr.TO + 50000}); err != nil {
		t.Fatal(err)
	}
	// The stack is the Responder: it sends once the model's first FPDU
	// came (RFC 5044 7.1.3 rule 4).
	vbuf := make([]byte, 64)
	vmr, _ := pd.RegisterMR(vbuf, verbs.RemoteWrite)
	if err := e.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Length: 4, LKey: e.mr.STag, LocalTO: e.mr.TO + 60000, RKey: vmr.STag, RemoteTO: vmr.Addr}); err != nil {
		t.Fatal(err)
	}
	src := bytes.Repeat([]byte("wire"), 5000)
	if err := vqp.PostSend(ctx, verbs.SendWR{Op: verbs.OpWrite, Data: src, RemoteSTag: e.mr.STag, RemoteTO: e.mr.TO, Unsignaled: true}); err != nil {
		t.Fatal(err)
	}
	if err := vqp.PostSend(ctx, verbs.SendWR{ID: 1, Op: verbs.OpSend, Data: src[:100]}); err != nil {
		t.Fatal(err)
	}
	for {
		if c, ok, err := e.cq.Poll(); err != nil || ok {
			if err != nil || c.ID != 9 || c.Length != 100 {
				t.Fatalf("CQE %+v, %v", c, err)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no receive CQE: %v", relay.Err())
		case <-time.After(time.Millisecond):
		}
	}
	if err := x.Service(); err != nil {
		t.Fatal(err)
	}
	st := x.Stats()
	if !bytes.Equal(e.mr.Buf[:len(src)], src) || st.Fed == 0 || st.OutOfOrder+st.Duplicate != 0 || x.Err() != nil ||
		int32(x.Next(e.qp.N)-rts.RxSeq) < int32(len(src)) {
		t.Fatalf("through the Reasm: %+v, next %d from %d, %v", st, x.Next(e.qp.N), rts.RxSeq, x.Err())
	}
}

var errStillWaiting = errors.New("fake: the host still reads the exception ring after its polls")

// A segment the device refuses (a closed device; a mirror that found a
// difference refuses every later input) was not taken: Reasm neither
// expects its exception buffers back nor moves rcv_nxt past it. It used to
// do both, and the next SegIn that needed room in the exception ring
// waited for ever for buffers that would never come (issue 30: the
// mirrored wire test hung instead of reporting the mirror's difference).
func TestReasmRefusedSegment(t *testing.T) {
	f := &fakeRx{qpn: 3, next: 1000, polls: 1000}
	r := driver.NewReasmOn(f, f)
	r.Poll = time.Microsecond
	r.Add(3, 1000)
	f.refuse = true
	if err := r.SegIn(driver.Segment{QPN: 3, Seq: 1000, Octets: make([]byte, 100)}); err == nil {
		t.Fatal("SegIn took a segment the device refused")
	}
	for i := range 1 << driver.ExcLog2 {
		if err := r.SegIn(driver.Segment{QPN: 3, Seq: 5000 + uint32(i)*100, Octets: make([]byte, 100)}); err == nil {
			t.Fatal("SegIn took a segment the device refused")
		}
	}
	if n, p := r.Next(3), r.Pending(); n != 1000 || p != 0 {
		t.Fatalf("after refused segments the host follows rcv_nxt %d and expects %d buffers back; want 1000 and 0", n, p)
	}
	f.refuse = false
	for i := range 2 << driver.ExcLog2 { // more than the ring holds: room is waited for, and comes
		if err := r.SegIn(driver.Segment{QPN: 3, Seq: 5000 + uint32(i)*100, Octets: make([]byte, 100)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.SegIn(driver.Segment{QPN: 3, Seq: 1000, Octets: make([]byte, 4000)}); err != nil {
		t.Fatal(err)
	}
	if err := r.Settle(100); err != nil {
		t.Fatal(err)
	}
	if f.next != 5000+(2<<driver.ExcLog2)*100 || r.Held(3) != 0 || r.Err() != nil {
		t.Fatalf("the device is at %d, %d octets held, %v", f.next, r.Held(3), r.Err())
	}
}

// A device that does not hand back a buffer the host expects (the fake
// drops one) shows it by the next buffer, which is not the one expected:
// a SegIn waiting for room in the exception ring then returns that error
// instead of waiting for ever (the fake's Events fails after 1000 polls,
// which is what a host without the check meets).
func TestReasmStopsWaitingOnAMismatch(t *testing.T) {
	f := &fakeRx{qpn: 3, next: 1000, polls: 1000, drop: true}
	r := driver.NewReasmOn(f, f)
	r.Poll = time.Microsecond
	r.Add(3, 1000)
	var err error
	for i := 0; i <= 2<<driver.ExcLog2 && err == nil; i++ {
		err = r.SegIn(driver.Segment{QPN: 3, Seq: 5000 + uint32(i)*100, Octets: make([]byte, 100)})
	}
	if err == nil || errors.Is(err, errStillWaiting) || !strings.Contains(err.Error(), "the host expected") {
		t.Fatalf("SegIn with a buffer missing: %v; want the mismatch Reasm found", err)
	}
}
