package ddpsctp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

func ddp() *uint32 { v := AdaptationDDP; return &v }

// pair returns a Conn on each end of a pipe that indicates DDP both ways.
func pair(t *testing.T, cfg PipeConfig) (*Conn, *Conn) {
	t.Helper()
	cfg.Adaptation = [2]*uint32{ddp(), ddp()}
	ea, eb := Pipe(cfg)
	a, err := New(ea, Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(eb, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// open runs an accepted session on stream: a active, b passive.
func open(t *testing.T, a, b *Conn, stream uint16) (*Session, *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make(chan *Session, 1)
	go func() {
		r, err := b.Listen(ctx)
		if err != nil {
			t.Error(err)
			got <- nil
			return
		}
		s, err := r.Accept(ctx, []byte("yes"))
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	sa, err := a.Initiate(ctx, stream, []byte("hi"))
	if err != nil {
		t.Fatal(err)
	}
	sb := <-got
	if sb == nil {
		t.FailNow()
	}
	return sa, sb
}

// TestAccepted: the sequence of 6.2 with private data both ways, segments
// both ways, and a Terminate that each side's Receive sees as io.EOF.
func TestAccepted(t *testing.T) {
	a, b := pair(t, PipeConfig{Reorder: 4, Seed: 1})
	ctx := context.Background()
	got := make(chan *Request, 1)
	go func() { r, _ := b.Listen(ctx); got <- r }()
	done := make(chan *Session, 1)
	go func() {
		r := <-got
		if r.Stream() != 5 || string(r.PrivateData()) != "hello" {
			t.Errorf("request on stream %d with %q", r.Stream(), r.PrivateData())
		}
		s, err := r.Accept(ctx, []byte("welcome"))
		if err != nil {
			t.Error(err)
		}
		// The passive side may send at once: its segments follow its
		// Accept in DDP-SSN order.
		s.Send(ctx, []byte("from passive"))
		done <- s
	}()
	sa, err := a.Initiate(ctx, 5, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if string(sa.PeerPrivateData()) != "welcome" || !sa.Active() || sa.Stream() != 5 {
		t.Fatalf("accepted session: %q active %v stream %d", sa.PeerPrivateData(), sa.Active(), sa.Stream())
	}
	sb := <-done
	if seg, err := sa.Receive(ctx); err != nil || string(seg) != "from passive" {
		t.Fatalf("active got %q, %v", seg, err)
	}
	for _, m := range []string{"one", "two", "three"} {
		if err := sa.Send(ctx, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	sa.Close(ctx)
	for _, m := range []string{"one", "two", "three"} {
		if seg, err := sb.Receive(ctx); err != nil || string(seg) != m {
			t.Fatalf("passive got %q, %v; want %q", seg, err, m)
		}
	}
	if _, err := sb.Receive(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the Terminate: %v, want io.EOF", err)
	}
	if err := sa.Send(ctx, []byte("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
	sb.Close(ctx)
	if _, err := sa.Receive(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("active after the passive's Terminate: %v, want io.EOF", err)
	}
}

// TestRejected: 6.3, the Reject's private data reaches the active side.
func TestRejected(t *testing.T) {
	a, b := pair(t, PipeConfig{})
	ctx := context.Background()
	go func() {
		r, err := b.Listen(ctx)
		if err == nil {
			r.Reject(ctx, []byte("no room"))
		}
	}()
	_, err := a.Initiate(ctx, 1, nil)
	var re *RejectError
	if !errors.As(err, &re) || string(re.PrivateData) != "no room" || re.Stream != 1 {
		t.Fatalf("Initiate: %v, want a RejectError with \"no room\"", err)
	}
}

// TestNonULPRejected: 6.4, Initiates beyond the pending limit are answered
// with a Terminate, which the active side reports as TerminatedError.
func TestNonULPRejected(t *testing.T) {
	ea, eb := Pipe(PipeConfig{Adaptation: [2]*uint32{ddp(), ddp()}})
	a, _ := New(ea, Config{})
	b, _ := New(eb, Config{MaxPending: 1})
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() { _, err := a.Initiate(ctx, 1, nil); first <- err }()
	// Wait until the first is pending, so the second finds the limit.
	for len(b.pending) == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := a.Initiate(ctx, 2, nil)
	var te *TerminatedError
	if !errors.As(err, &te) || te.Stream != 2 {
		t.Fatalf("second Initiate: %v, want TerminatedError on stream 2", err)
	}
	r, _ := b.Listen(ctx)
	if _, err := r.Accept(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first Initiate: %v", err)
	}
}

// TestSeveralStreams: sessions on several DDP Streams of one association
// run side by side, each in its own order.
func TestSeveralStreams(t *testing.T) {
	a, b := pair(t, PipeConfig{Reorder: 16, Seed: 9})
	ctx := context.Background()
	var as, bs []*Session
	for st := uint16(1); st <= 4; st++ {
		x, y := open(t, a, b, st)
		as, bs = append(as, x), append(bs, y)
	}
	for i := range 50 {
		for k, s := range as {
			if err := s.Send(ctx, []byte{byte(k), byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k, s := range bs {
		for i := range 50 {
			seg, err := s.Receive(ctx)
			if err != nil || !bytes.Equal(seg, []byte{byte(k), byte(i)}) {
				t.Fatalf("stream %d segment %d: % x, %v", s.Stream(), i, seg, err)
			}
		}
	}
	if st, err := a.FreeStream(); err != nil || st != 0 {
		t.Fatalf("FreeStream: %d, %v", st, err)
	}
}

// TestAdaptationIndication: section 11.1, no DDP without the indication.
func TestAdaptationIndication(t *testing.T) {
	other := uint32(7)
	for _, c := range []struct {
		name    string
		ind     *uint32
		present bool
	}{{"none", nil, false}, {"other", &other, true}} {
		t.Run(c.name, func(t *testing.T) {
			ea, _ := Pipe(PipeConfig{Adaptation: [2]*uint32{ddp(), c.ind}})
			_, err := New(ea, Config{})
			var ae *AdaptationError
			if !errors.As(err, &ae) || ae.Present != c.present {
				t.Fatalf("New: %v, want AdaptationError (present %v)", err, c.present)
			}
			if c.ind != nil && ae.Indication != other {
				t.Fatalf("indication %d", ae.Indication)
			}
		})
	}
}

// TestSizes: the MULPDU (section 9) and the private data limit (5.2.3).
func TestSizes(t *testing.T) {
	ctx := context.Background()
	if got := MULPDU(1452); got != 1452-2-16 {
		t.Errorf("MULPDU(1452) = %d", got)
	}
	if got := MULPDU(300); got != MinMULPDU {
		t.Errorf("MULPDU(300) = %d, want the 516 minimum", got)
	}
	ea, _ := Pipe(PipeConfig{Adaptation: [2]*uint32{ddp(), ddp()}})
	var se *SizeError
	if _, err := New(ea, Config{MULPDU: 515}); !errors.As(err, &se) {
		t.Errorf("MULPDU 515: %v", err)
	}
	a, b := pair(t, PipeConfig{})
	if _, err := a.Initiate(ctx, 1, make([]byte, 513)); !errors.As(err, &se) {
		t.Errorf("513 octets of private data: %v", err)
	}
	sa, _ := open(t, a, b, 2)
	if err := sa.Send(ctx, make([]byte, sa.MULPDU()+1)); !errors.As(err, &se) || se.Max != 1434 {
		t.Errorf("segment over MULPDU: %v", err)
	}
	if err := sa.Send(ctx, make([]byte, sa.MULPDU())); err != nil {
		t.Errorf("segment of MULPDU: %v", err)
	}
	var ste *StreamError
	if _, err := a.Initiate(ctx, 2, nil); !errors.As(err, &ste) || !ste.Used {
		t.Errorf("stream reused: %v", err)
	}
	if _, err := a.Initiate(ctx, 16, nil); !errors.As(err, &ste) || ste.Used {
		t.Errorf("stream 16 of 16: %v", err)
	}
}

// raw is a passive Conn driven by a test that plays the peer by hand.
type raw struct {
	t    *testing.T
	peer *PipeEnd
	c    *Conn
}

func newRaw(t *testing.T) *raw { return newRawConfig(t, Config{}) }

// newRawConfig is newRaw with the layer configured by cfg.
func newRawConfig(t *testing.T, cfg Config) *raw {
	t.Helper()
	peer, local := Pipe(PipeConfig{Adaptation: [2]*uint32{ddp(), ddp()}})
	c, err := New(local, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &raw{t: t, peer: peer, c: c}
}

func (r *raw) send(stream uint16, p Payload) {
	b, err := p.Append(nil)
	if err != nil {
		// Malformed on purpose: write the fields as they are.
		b = append([]byte{byte(p.SSN >> 8), byte(p.SSN), byte(p.Func >> 8), byte(p.Func)}, p.PrivateData...)
	}
	r.peer.SendUnordered(context.Background(), stream, p.PPID, b)
}

// next returns what the layer sent next.
func (r *raw) next() (uint16, Payload) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := r.peer.Receive(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	if !m.Unordered {
		r.t.Fatalf("the layer sent an ordered chunk")
	}
	p, err := ParsePayload(m.PPID, m.Data)
	if err != nil {
		r.t.Fatal(err)
	}
	return m.Stream, p
}

// TestIllegalSequences: chunks outside the legal sequences of section 6,
// or failing the DDP-SSN validity check of section 10, terminate the
// session: the layer sends a Terminate and the session's Receive reports a
// SequenceError.
func TestIllegalSequences(t *testing.T) {
	seg := func(ssn uint16) Payload { return Segment(ssn, []byte{0xc1, 0x40}) }
	ctl := func(ssn uint16, f FunctionCode) Payload { return Control(ssn, f, nil) }
	for _, c := range []struct {
		name   string
		accept bool      // accept the Initiate before the rest
		then   []Payload // sent after an Initiate at DDP-SSN 0
	}{
		{"second Initiate", true, []Payload{ctl(1, FuncInitiate)}},
		{"Accept from the active side", true, []Payload{ctl(1, FuncAccept)}},
		{"Reject inside a session", true, []Payload{ctl(1, FuncReject)}},
		{"segment before the Accept", false, []Payload{seg(1)}},
		{"DDP-SSN outside the window", true, []Payload{seg(40000)}},
		{"duplicate DDP-SSN", true, []Payload{seg(3), seg(3)}},
		{"segment after the Terminate", true, []Payload{seg(1), ctl(2, FuncTerminate), seg(3)}},
		{"segment held beyond the Terminate", true, []Payload{seg(3), ctl(2, FuncTerminate), seg(1)}},
		{"Terminate with private data", true, []Payload{Control(1, FuncTerminate, []byte{1})}},
		{"unknown function code", true, []Payload{ctl(1, 9)}},
		{"unknown PPID", true, []Payload{{PPID: 0x12, SSN: 1, Segment: []byte{1}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRaw(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r.send(3, ctl(0, FuncInitiate))
			req, err := r.c.Listen(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var s *Session
			if c.accept {
				if s, err = req.Accept(ctx, nil); err != nil {
					t.Fatal(err)
				}
				if st, p := r.next(); st != 3 || p.Func != FuncAccept || p.SSN != 0 {
					t.Fatalf("sent %d %+v, want the Accept", st, p)
				}
			} else {
				s = req.s
			}
			for _, p := range c.then {
				r.send(3, p)
			}
			st, p := r.next()
			if st != 3 || p.PPID != PPIDControl || p.Func != FuncTerminate || len(p.PrivateData) != 0 {
				t.Fatalf("sent %d %+v, want a Terminate", st, p)
			}
			var want uint16
			if c.accept {
				want = 1
			}
			if p.SSN != want {
				t.Fatalf("Terminate at DDP-SSN %d, want %d (no gaps, 6.1)", p.SSN, want)
			}
			var serr *SequenceError
			for {
				_, err := s.Receive(ctx)
				if err == nil {
					continue
				}
				if !errors.As(err, &serr) || serr.Stream != 3 {
					t.Fatalf("Receive: %v, want a SequenceError", err)
				}
				t.Log(err)
				break
			}
		})
	}
}

// TestNoSessionStream: anything but an Initiate on a stream without a
// session is answered with a Terminate at DDP-SSN 0; so is an ordered
// chunk.
func TestNoSessionStream(t *testing.T) {
	r := newRaw(t)
	r.send(4, Segment(0, []byte{1}))
	if st, p := r.next(); st != 4 || p.Func != FuncTerminate || p.SSN != 0 {
		t.Fatalf("sent %d %+v", st, p)
	}
	b, _ := (&Payload{PPID: PPIDControl, Func: FuncInitiate}).Append(nil)
	r.peer.SendOrdered(6, PPIDControl, b)
	if st, p := r.next(); st != 6 || p.Func != FuncTerminate {
		t.Fatalf("ordered Initiate answered with %d %+v", st, p)
	}
}

// TestAssociationLost: the association's end ends every session and a
// waiting Listen.
func TestAssociationLost(t *testing.T) {
	a, b := pair(t, PipeConfig{})
	sa, _ := open(t, a, b, 1)
	a.Association().Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := sa.Receive(ctx); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("Receive after the association ended: %v", err)
	}
	if _, err := b.Listen(ctx); err == nil {
		t.Fatal("Listen after the association ended")
	}
}

// TestInitiateAbandoned: an active side that gives up waiting for the
// answer ends the session with a Terminate that follows its Initiate (6.6:
// sent once the Initiate cannot be overtaken); a passive side that accepts
// meanwhile sees the session end.
func TestInitiateAbandoned(t *testing.T) {
	a, b := pair(t, PipeConfig{})
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := a.Initiate(short, 7, []byte("slow")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Initiate: %v, want the context's end", err)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	// The Terminate is in before the ULP answers (the order that the
	// sequence check must not take for a violation).
	for {
		b.mu.Lock()
		s := b.streams[7]
		in := s != nil && s.rxFinal
		b.mu.Unlock()
		if in {
			break
		}
		time.Sleep(time.Millisecond)
	}
	r, err := b.Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Accept(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Receive(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("the passive side after the abandoned Initiate: %v, want the Terminate (io.EOF)", err)
	}
	var ste *StreamError
	if _, err := a.Initiate(ctx, 7, nil); !errors.As(err, &ste) || !ste.Used {
		t.Fatalf("stream 7 again: %v", err)
	}
}
