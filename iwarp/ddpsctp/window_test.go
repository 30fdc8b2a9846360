package ddpsctp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/sctp"
)

// Flow control from the ULP back to the peer: the segments in DDP-SSN
// order that wait for Receive stay charged to the association's receive
// window (RFC 9260 6.2) until the ULP takes them; chunks held ahead of a
// gap do not, so that the chunk filling the gap always gets in
// (Config.MaxHeld bounds them instead).

// chargedPipe is a Pipe end that keeps a receive window's books as
// package sctp's RecvMsgHeld does: each message comes charged.
type chargedPipe struct {
	*PipeEnd
	mu      sync.Mutex
	charged int
}

func (p *chargedPipe) Receive(ctx context.Context) (Message, error) {
	m, err := p.PipeEnd.Receive(ctx)
	if err == nil {
		p.mu.Lock()
		p.charged += len(m.Data)
		p.mu.Unlock()
	}
	return m, err
}

func (p *chargedPipe) Credit(n int) { p.Charge(-n) }

func (p *chargedPipe) Charge(n int) {
	p.mu.Lock()
	p.charged += n
	p.mu.Unlock()
}

func (p *chargedPipe) window() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.charged
}

// eventually polls cond until it holds (the layer reads asynchronously);
// the deadline only stops a hung run.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWindowCharges: what stays charged to the window is exactly what
// waits for Receive. Session Control messages and chunks held ahead of a
// gap are credited as they come; the held chunks are charged when the gap
// closes; Receive credits what it takes; CloseRead credits the rest and
// everything that comes after.
func TestWindowCharges(t *testing.T) {
	peer, local := Pipe(PipeConfig{Adaptation: [2]*uint32{ddp(), ddp()}})
	w := &chargedPipe{PipeEnd: local}
	c, err := New(w, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &raw{t: t, peer: peer, c: c}
	s := r.accept(1)
	if n := w.window(); n != 0 {
		t.Fatalf("%d octets charged after the Initiate", n)
	}
	seg := func(ssn uint16) Payload { return Segment(ssn, bytes.Repeat([]byte{byte(ssn)}, 700)) }
	chunk := SSNLen + 700
	books := func(what string, window, queued, held int) {
		t.Helper()
		eventually(t, what, func() bool { return w.window() == window && c.Queued() == queued && c.Held() == held })
	}

	r.send(1, seg(2))
	r.send(1, seg(3))
	books("DDP-SSNs 2 and 3 held ahead of the gap, not charged", 0, 0, 2*chunk)
	r.send(1, seg(1))
	books("the gap closed: 1 to 3 wait for Receive, charged", 3*chunk, 3*chunk, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if b, err := s.Receive(ctx); err != nil || len(b) != 700 || b[0] != 1 {
		t.Fatalf("Receive: %d octets, %v", len(b), err)
	}
	books("Receive took one", 2*chunk, 2*chunk, 0)
	s.CloseRead()
	books("CloseRead dropped the rest", 0, 0, 0)
	if _, err := s.Receive(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Receive after CloseRead: %v, want ErrClosed", err)
	}
	r.send(1, seg(4))
	r.send(1, Control(5, FuncTerminate, nil))
	// An Initiate behind them: once it is in, they were handled (one
	// reader, and this pipe keeps the order).
	r.send(2, Control(0, FuncInitiate, nil))
	if _, err := c.Listen(ctx); err != nil {
		t.Fatal(err)
	}
	books("after CloseRead, segments are credited as they come", 0, 0, 0)
	if err := s.Err(); err != nil {
		t.Errorf("the session's checks failed on a legal sequence after CloseRead: %v", err)
	}
}

// sctpOf is the association of package sctp under c.
func sctpOf(c *Conn) *sctp.Association { return c.Association().(*sctpAssoc).a }

// quickRTO makes zero window probes come every few hundred milliseconds
// rather than every minute.
func quickRTO(cfg sctp.Config) sctp.Config {
	cfg.RTOInitial, cfg.RTOMin, cfg.RTOMax = 100*time.Millisecond, 20*time.Millisecond, 400*time.Millisecond
	cfg.SACKDelay = 20 * time.Millisecond
	return cfg
}

// A small window and send buffer, so that a peer outruns them quickly.
const (
	window  = 64 << 10
	sendBuf = 128 << 10
)

// tight returns both ends' layers over a real association on loopback UDP
// with the small window and send buffer and quick probes.
func tight(t *testing.T) (*Conn, *Conn) {
	return loopback(t, quickRTO(sctp.Config{ReceiveBuffer: window, SendBuffer: sendBuf}))
}

// numbered fills seg with a pattern that names segment i.
func numbered(seg []byte, i int) {
	binary.BigEndian.PutUint32(seg, uint32(i))
	for j := 4; j < len(seg); j++ {
		seg[j] = byte(i*7 + j)
	}
}

// sendAll sends count numbered segments of size octets on s, counting
// them in sent, and reports how it ended.
func sendAll(ctx context.Context, s *Session, count, size int, sent *atomic.Int64) <-chan error {
	done := make(chan error, 1)
	go func() {
		seg := make([]byte, size)
		for i := range count {
			numbered(seg, i)
			if err := s.Send(ctx, seg); err != nil {
				done <- err
				return
			}
			sent.Add(1)
		}
		done <- nil
	}()
	return done
}

// receiveAll takes count numbered segments of size octets from s and
// checks each is whole and in order.
func receiveAll(ctx context.Context, s *Session, count, size int) error {
	want := make([]byte, size)
	for i := range count {
		got, err := s.Receive(ctx)
		if err != nil {
			return err
		}
		numbered(want, i)
		if !bytes.Equal(got, want) {
			return fmt.Errorf("stream %d, segment %d of %d: %d octets, not the ones sent there (out of order or damaged)", s.Stream(), i, count, len(got))
		}
	}
	return nil
}

// stalled waits until the receiving association has refused DATA for
// want of window and the sender has probed the closed window, checking
// on the way that what the receiver queues stays within the window and
// one message.
func stalled(t *testing.T, rx, tx *Conn, window, msg int) {
	t.Helper()
	most := 0
	eventually(t, "the window closes and the sender probes it", func() bool {
		most = max(most, rx.Queued(), sctpOf(rx).Stats().Held)
		if most > window+msg {
			t.Fatalf("the receiver queued %d octets, more than the %d-octet window and one %d-octet message", most, window, msg)
		}
		if err := tx.Err(); err != nil {
			t.Fatalf("the sender's association failed: %v", err)
		}
		return sctpOf(rx).Stats().DroppedChunks > 0 && sctpOf(tx).Stats().T3Timeouts >= 3
	})
}

// TestSlowULPClosesWindowOverSCTP: a ULP that does not call Receive while
// the peer sends far more than the receive window, over the userspace
// association on loopback UDP. The peer's Send waits (its send buffer
// full, the window closed) instead of the receiver's queue growing past
// the window and one message; a Send with a deadline ends with it. When
// the ULP comes back every segment arrives, whole and in order.
func TestSlowULPClosesWindowOverSCTP(t *testing.T) {
	const total = 1 << 20
	a, b := tight(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tx, rx := open(t, a, b, 1)
	tx2, _ := open(t, a, b, 2)
	size := a.MULPDU()
	count := total / size
	var sent atomic.Int64
	done := sendAll(ctx, tx, count, size, &sent)

	stalled(t, b, a, window, SSNLen+size)
	if n := int(sent.Load()); n >= count || n*(SSNLen+size) > window+sendBuf+size {
		t.Fatalf("the sender had %d of %d segments taken against a %d-octet window and a %d-octet send buffer", n, count, window, sendBuf)
	}
	short, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	err := tx2.Send(short, make([]byte, size))
	stop()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send on another session of the stalled association: %v, want its context's end", err)
	}

	if err := receiveAll(ctx, rx, count, size); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Send: %v", err)
	}
	if q := b.Queued(); q != 0 {
		t.Errorf("%d octets queued after everything was received", q)
	}
	eventually(t, "the window is given back", func() bool { return sctpOf(b).Stats().Held == 0 })
}

// TestSlowSessionOverSCTP: one session's ULP does not read while another's
// does, on one association. The slow session's segments fill the window,
// so the other's wait behind them (head-of-line blocking across the
// association's sessions), but nothing is lost: when the slow ULP reads
// again, or gives up reading (CloseRead), the other session's segments all
// arrive, whole and in order.
func TestSlowSessionOverSCTP(t *testing.T) {
	const total = 512 << 10
	for _, giveUp := range []bool{false, true} {
		name := "slow ULP reads again"
		if giveUp {
			name = "slow ULP calls CloseRead"
		}
		t.Run(name, func(t *testing.T) {
			a, b := tight(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			slowTx, slowRx := open(t, a, b, 1)
			fastTx, fastRx := open(t, a, b, 2)
			size := a.MULPDU()
			count := total / size
			var slowSent, fastSent atomic.Int64
			slowDone := sendAll(ctx, slowTx, count, size, &slowSent)
			stalled(t, b, a, window, SSNLen+size)
			fastDone := sendAll(ctx, fastTx, count, size, &fastSent)
			fastGot := make(chan error, 1)
			go func() { fastGot <- receiveAll(ctx, fastRx, count, size) }()

			if giveUp {
				slowRx.CloseRead()
			} else if err := receiveAll(ctx, slowRx, count, size); err != nil {
				t.Fatal(err)
			}
			if err := <-fastGot; err != nil {
				t.Fatal(err)
			}
			for _, d := range []<-chan error{slowDone, fastDone} {
				if err := <-d; err != nil {
					t.Fatalf("Send: %v", err)
				}
			}
			eventually(t, "the window is given back", func() bool { return b.Queued() == 0 && sctpOf(b).Stats().Held == 0 })
		})
	}
}

// TestGapFillerGetsInOverSCTP: chunks held ahead of a DDP-SSN gap are not
// charged to the window, so twice the window's worth of them cannot shut
// it on the chunk that fills the gap. Charged, they would: the window
// closed, the filler (a TSN above every one received) would be refused
// for ever. It gets in, and the ULP receives everything in order.
func TestGapFillerGetsInOverSCTP(t *testing.T) {
	const segLen = 1000
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hp := newSCTPPeer(t, ctx, quickRTO(sctp.Config{ReceiveBuffer: window}), Config{MaxHeld: 4 * window})
	c, send := hp.c, hp.send
	s := hp.accept()
	seg := func(ssn uint16) Payload { return Segment(ssn, bytes.Repeat([]byte{byte(ssn)}, segLen)) }
	last := uint16(2*window/(SSNLen+segLen) + 1)
	for ssn := uint16(2); ssn <= last; ssn++ {
		send(seg(ssn))
	}
	eventually(t, "twice the window held ahead of the gap", func() bool {
		return c.Held() == int(last-1)*(SSNLen+segLen)
	})
	send(seg(1))
	for ssn := uint16(1); ssn <= last; ssn++ {
		got, err := s.Receive(ctx)
		if err != nil {
			t.Fatalf("DDP-SSN %d: %v", ssn, err)
		}
		if len(got) != segLen || got[0] != byte(ssn) {
			t.Fatalf("DDP-SSN %d: %d octets of %#x", ssn, len(got), got[0])
		}
	}
	eventually(t, "the window is given back", func() bool {
		return c.Held() == 0 && c.Queued() == 0 && sctpOf(c).Stats().Held == 0
	})
}
