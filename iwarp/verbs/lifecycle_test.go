package verbs

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// Regression: an Accept whose context was cancelled left the listener's
// deadline in the past, so the next Accept on it failed at once.
func TestAcceptAfterCancelledAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pd := NewDevice().AllocPD()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := Accept(ctx, pd, ln, QPConfig{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Accept: %v; want context.Canceled", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	ch := make(chan error, 1)
	go func() {
		qp, err := Dial(ctx2, NewDevice().AllocPD(), ln.Addr().String(), QPConfig{})
		if err == nil {
			defer qp.Close()
		}
		ch <- err
	}()
	qp, err := Accept(ctx2, pd, ln, QPConfig{})
	if err != nil {
		t.Fatalf("Accept after a cancelled Accept: %v", err)
	}
	if err := <-ch; err != nil {
		t.Fatalf("Dial: %v", err)
	}
	qp.Close()
}

// Regression: Close on a queue pair that never connected waited 10 s and
// then panicked on the nil connection. It returns at once, completes what
// was posted with ErrQPClosed, and the queue pair cannot be established
// afterwards.
func TestCloseNeverConnected(t *testing.T) {
	pd := NewDevice().AllocPD()
	qp := CreateQP(pd, QPConfig{})
	if err := qp.PostSend(context.Background(), SendWR{ID: 3, Op: OpSend, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- qp.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Close of a queue pair that never connected did not return")
	}
	c, ok := qp.SendCQ().TryPoll()
	if !ok || c.ID != 3 || !errors.Is(c.Err, ErrQPClosed) {
		t.Fatalf("completion %+v %v; want the posted Send completed with ErrQPClosed", c, ok)
	}
	a, b := net.Pipe()
	defer b.Close()
	if err := qp.Establish(context.Background(), a, mpa.Initiator); !errors.Is(err, ErrQPClosed) {
		t.Fatalf("Establish after Close: %v; want ErrQPClosed", err)
	}
	if err := qp.PostSend(context.Background(), SendWR{Op: OpSend}); !errors.Is(err, ErrQPClosed) {
		t.Fatalf("PostSend after Close: %v; want ErrQPClosed", err)
	}
}

// Regression: SendDepth below 1024 was silently raised to 1024. It bounds
// the send work requests posted and not yet completed: with a depth of 2
// and no connection yet, the third PostSend waits (here until its context
// ends).
func TestSendDepthBoundsPostedWork(t *testing.T) {
	pd := NewDevice().AllocPD()
	qp := CreateQP(pd, QPConfig{SendDepth: 2})
	defer qp.Close()
	for i := 0; i < 2; i++ {
		if err := qp.PostSend(context.Background(), SendWR{ID: uint64(i), Op: OpSend}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := qp.PostSend(ctx, SendWR{ID: 2, Op: OpSend}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third PostSend with SendDepth 2: %v; want it to wait for a slot", err)
	}
}

// Completions free send queue slots: a depth of 1 runs any number of work
// requests one after the other, Reads included.
func TestSendDepthOneRunsManyRequests(t *testing.T) {
	p := connect(t, QPConfig{SendDepth: 1}, QPConfig{})
	src, _ := p.spd.RegisterMR(make([]byte, 4096), RemoteRead|RemoteWrite)
	sink, _ := p.cpd.RegisterMR(make([]byte, 4096), RemoteWrite)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 50; i++ {
		wr := SendWR{ID: uint64(i), Op: OpWrite, Data: make([]byte, 100), RemoteSTag: src.STag, RemoteTO: src.Addr, Unsignaled: i%2 == 0}
		if i%3 == 0 {
			wr = SendWR{ID: uint64(i), Op: OpRead, Sink: sink, Len: 100, RemoteSTag: src.STag, RemoteTO: src.Addr}
		}
		if err := p.client.PostSend(ctx, wr); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	for {
		c := poll(t, p.client.SendCQ())
		if c.Err != nil {
			t.Fatalf("completion %+v", c)
		}
		if c.ID == 48 { // the last Read
			return
		}
	}
}

// Regression: when the Responder's first FPDU from the Initiator failed
// its CRC, the Responder still sent a Terminate. RFC 5044 7.1.3 rule 4: a
// Responder sends no FPDU before it has received and validated one; it
// closes the connection instead (section 8: closing is the ULP's duty).
func TestResponderSendsNothingAfterBadFirstFPDU(t *testing.T) {
	peer, qp, _ := dialRaw(t, QPConfig{}, mpa.Config{})
	f := peer.fpdus(rdmap.NewSend(1, []byte("hello")), 1<<14)
	f[len(f)-1] ^= 0xff // break the CRC
	peer.write(f)
	waitDead(t, qp)
	var qe *QPError
	if !errors.As(qp.Err(), &qe) || qe.Local == nil || qe.Local.Layer != rdmap.LayerLLP || qe.Local.Code != rdmap.CodeMPACRC {
		t.Fatalf("queue pair error %v; want the local MPA CRC error", qp.Err())
	}
	if b := peer.readAll(); len(b) != 0 {
		t.Fatalf("the Responder sent %d octets (% x) after an invalid first FPDU; want none", len(b), b[:min(len(b), 32)])
	}
}

// Once it has received a valid FPDU, the Responder reports a later CRC
// error in a Terminate as usual.
func TestResponderTerminatesAfterValidFirstFPDU(t *testing.T) {
	peer, qp, _ := dialRaw(t, QPConfig{}, mpa.Config{})
	qp.PostRecv(1, make([]byte, 16))
	good := peer.fpdus(rdmap.NewSend(1, []byte("hello")), 1<<14)
	bad := peer.fpdus(rdmap.NewSend(2, []byte("again")), 1<<14)
	bad[len(bad)-1] ^= 0xff
	peer.write(append(good, bad...))
	term := peer.terminate()
	if term.Layer != rdmap.LayerLLP || term.Code != rdmap.CodeMPACRC {
		t.Fatalf("Terminate %v; want the MPA CRC error", &term)
	}
}

// Regression: QPError did not expose the peer's Terminate through
// errors.As.
func TestPeerTerminateThroughErrorsAs(t *testing.T) {
	p := connect(t, QPConfig{}, QPConfig{})
	p.client.PostSend(context.Background(), SendWR{Op: OpSend, Data: []byte("no buffer posted")})
	waitDead(t, p.client)
	var term *rdmap.Terminate
	if !errors.As(p.client.Err(), &term) || term.Layer != rdmap.LayerDDP || term.Code != rdmap.CodeDDPNoBuffer {
		t.Fatalf("errors.As(%v, *rdmap.Terminate) = %v", p.client.Err(), term)
	}
	var re *rdmap.Error
	if !errors.As(p.server.Err(), &re) || re.Code != rdmap.CodeDDPNoBuffer {
		t.Fatalf("errors.As(%v, *rdmap.Error) = %v", p.server.Err(), re)
	}
}

// Regression: Close took no context and always returned nil. Shutdown
// is bounded by its context and reports a peer that does not close its
// half in time; Close reports why the queue pair ended when it was not
// a graceful end.
func TestShutdownAndCloseReport(t *testing.T) {
	// A graceful end: both sides close.
	p := connect(t, QPConfig{}, QPConfig{})
	go p.server.Close()
	if err := p.client.Shutdown(context.Background()); err != nil {
		t.Fatalf("graceful Shutdown: %v", err)
	}
	// A peer that never closes its half: Shutdown gives up when its
	// context ends and says so.
	peer, qp, _ := dialRaw(t, QPConfig{}, mpa.Config{})
	_ = peer
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := qp.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown against a peer that keeps its half open: %v; want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %v with a 200ms context", d)
	}
	// A queue pair that failed: Close returns its error.
	p = connect(t, QPConfig{}, QPConfig{})
	p.client.PostSend(context.Background(), SendWR{Op: OpSend, Data: []byte("no buffer posted")})
	waitDead(t, p.client)
	var term *rdmap.Terminate
	if err := p.client.Close(); !errors.As(err, &term) {
		t.Fatalf("Close after the peer's Terminate: %v; want the Terminate", err)
	}
}
