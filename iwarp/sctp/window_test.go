package sctp

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond until it holds or ctx ends (no assertion on time:
// the condition is the test's, the deadline only stops a hung run).
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestHeldMessagesCloseTheWindow: messages taken with RecvMsgHeld stay
// charged to the receive window until Credit (RFC 9260 6.2), so a
// consumer that does not keep up closes the window on the peer: the
// sender's SendMsg waits once its send buffer is full, the receiver holds
// no more than its window, and the sender's zero window probes, answered
// by SACKs that keep the window shut, do not count towards giving the
// peer up (6.1 rule A, 8.1) however long the consumer is away. When the
// consumer comes back every message arrives, whole and in order.
func TestHeldMessagesCloseTheWindow(t *testing.T) {
	const (
		window  = 64 << 10
		sendBuf = 128 << 10
		size    = 8 << 10
		count   = 128 // 1 MiB: several times the window and the send buffer
		maxRtx  = 2
	)
	lcfg := fastConfig()
	lcfg.ReceiveBuffer = window
	dcfg := fastConfig()
	dcfg.SendBuffer = sendBuf
	dcfg.MaxRetransmissions = maxRtx
	s, c, _ := pair(t, lcfg, dcfg, nil)
	ctx := testCtx(t)

	var sent atomic.Int64
	sendErr := make(chan error, 1)
	go func() {
		msg := make([]byte, size)
		for i := range count {
			fill(msg, i)
			if err := c.SendMsg(ctx, 1, 0x10, false, msg); err != nil {
				sendErr <- err
				return
			}
			sent.Add(1)
		}
		sendErr <- nil
	}()

	// The consumer's queue: taken from SCTP, not credited.
	var queue [][]byte
	queued := 0
	maxHeld := 0
	take := func() {
		m, err := s.RecvMsgHeld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, m.Data)
		queued += len(m.Data)
		maxHeld = max(maxHeld, s.Stats().Held)
	}
	for queued+size <= window {
		take()
	}
	// The window is full of what the consumer holds: the sender probes
	// it, again and again, past its retransmission limit.
	waitFor(t, ctx, "zero window probes past the retransmission limit", func() bool {
		if err := c.Err(); err != nil {
			t.Fatalf("the sender gave the peer up while its window was closed: %v", err)
		}
		return c.Stats().T3Timeouts > maxRtx+2
	})
	if n := int(sent.Load()); n*size > window+sendBuf+size || n == count {
		t.Fatalf("the sender queued %d of %d messages (%d octets) against a closed %d-octet window and a %d-octet send buffer", n, count, n*size, window, sendBuf)
	}
	st := s.Stats()
	if st.Held > window || maxHeld > window {
		t.Fatalf("the receiver holds %d octets (at most %d seen) for a %d-octet window", st.Held, maxHeld, window)
	}
	if st.DroppedChunks == 0 {
		t.Error("no DATA chunk was refused for want of window: the window never closed")
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err := c.SendMsg(short, 1, 0x10, false, make([]byte, size))
	cancel()
	if err == nil {
		t.Fatal("SendMsg took a message past a full send buffer and a closed window")
	}

	// The consumer comes back: it reads and credits everything.
	got := 0
	check := func(b []byte) {
		want := make([]byte, size)
		fill(want, got)
		if !bytes.Equal(b, want) {
			t.Fatalf("message %d: %d octets, not what was sent", got, len(b))
		}
		got++
		s.Credit(len(b))
		s.Release(b)
	}
	for _, b := range queue {
		check(b)
	}
	for got < count {
		m, err := s.RecvMsgHeld(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check(m.Data)
	}
	if err := <-sendErr; err != nil {
		t.Fatalf("SendMsg: %v", err)
	}
	if h := s.Stats().Held; h != 0 {
		t.Errorf("%d octets still charged to the window after everything was credited", h)
	}
	// Loopback loses nothing: the chunks the receiver dropped were zero
	// window probes, which go again when a SACK opens the window, not as
	// losses (no fast retransmit, no halved cwnd).
	if st := c.Stats(); st.FastRetransmits != 0 {
		t.Errorf("%d fast retransmits of probes the receiver dropped for want of window", st.FastRetransmits)
	}
}

// TestChargeAndCredit: Charge overdraws the window (a_rwnd 0), Credit
// gives it back, never below nothing; RecvMsg credits as it returns.
func TestChargeAndCredit(t *testing.T) {
	s, c, _ := pair(t, fastConfig(), fastConfig(), nil)
	ctx := testCtx(t)
	if err := c.SendMsg(ctx, 0, 0, true, []byte("abcd")); err != nil {
		t.Fatal(err)
	}
	m, err := s.RecvMsgHeld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h := s.Stats().Held; h != len(m.Data) {
		t.Fatalf("held %d after RecvMsgHeld of %d octets", h, len(m.Data))
	}
	s.Charge(10)
	if h := s.Stats().Held; h != 14 {
		t.Fatalf("held %d after Charge(10), want 14", h)
	}
	s.Credit(100)
	if h := s.Stats().Held; h != 0 {
		t.Fatalf("held %d after crediting more than was charged, want 0", h)
	}
	if err := c.SendMsg(ctx, 0, 0, true, []byte("efgh")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecvMsg(ctx); err != nil {
		t.Fatal(err)
	}
	if h := s.Stats().Held; h != 0 {
		t.Fatalf("held %d after RecvMsg, want 0", h)
	}
}
