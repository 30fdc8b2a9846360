package ddpsctp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/sctp"
)

// Chunks that arrive ahead of a gap in the DDP-SSNs are held until it
// closes (RFC 5041 3 item 5; draft-ietf-rddp-sctp section 10). SCTP does
// not bound them: the association hands every message over at once and
// opens its window again. Config.MaxHeld does, per association.

// accept has the peer initiate a session on stream and accepts it.
func (r *raw) accept(stream uint16) *Session {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.send(stream, Control(0, FuncInitiate, nil))
	req, err := r.c.Listen(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	s, err := req.Accept(ctx, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	if st, p := r.next(); st != stream || p.PPID != PPIDControl || p.Func != FuncAccept {
		r.t.Fatalf("the layer answered with %s on stream %d", p.describe(), st)
	}
	return s
}

// waitHeld waits until the layer holds want octets (the pipe hands the
// chunks over asynchronously).
func waitHeld(t *testing.T, c *Conn, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); c.Held() != want; {
		if time.Now().After(deadline) {
			t.Fatalf("the layer holds %d octets, want %d", c.Held(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHeldBound: a peer that leaves DDP-SSN 1 out and sends on is cut off
// at Config.MaxHeld octets: its session is terminated with a HeldError
// naming the bound, the layer's Terminate goes to it, and what was held is
// freed. A gap that closes within the bound delivers everything in order.
func TestHeldBound(t *testing.T) {
	const limit = 5000
	payload := bytes.Repeat([]byte{0xc1}, 1000)
	chunk := SSNLen + len(payload) // 1002 octets held per segment
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	t.Run("gap that closes", func(t *testing.T) {
		r := newRawConfig(t, Config{MaxHeld: limit})
		s := r.accept(1)
		for ssn := uint16(2); ssn <= 5; ssn++ { // 4 × 1002 = 4008 held
			r.send(1, Segment(ssn, append([]byte{byte(ssn)}, payload[1:]...)))
		}
		waitHeld(t, r.c, 4*chunk)
		r.send(1, Segment(1, append([]byte{1}, payload[1:]...)))
		for want := byte(1); want <= 5; want++ {
			seg, err := s.Receive(ctx)
			if err != nil || len(seg) != len(payload) || seg[0] != want {
				t.Fatalf("segment %d: %d octets starting %v, %v", want, len(seg), seg[:min(1, len(seg))], err)
			}
		}
		if h := r.c.Held(); h != 0 {
			t.Errorf("%d octets still held once the gap closed", h)
		}
	})

	t.Run("gap left open", func(t *testing.T) {
		r := newRawConfig(t, Config{MaxHeld: limit})
		s := r.accept(1)
		for ssn := uint16(2); ssn <= 5; ssn++ {
			r.send(1, Segment(ssn, payload))
		}
		waitHeld(t, r.c, 4*chunk)
		r.send(1, Segment(6, payload)) // 5010 > 5000
		st, p := r.next()
		if st != 1 || p.PPID != PPIDControl || p.Func != FuncTerminate || p.SSN != 1 {
			t.Fatalf("the layer sent %s at DDP-SSN %d on stream %d, want its Terminate at 1 on 1", p.describe(), p.SSN, st)
		}
		_, err := s.Receive(ctx)
		var he *HeldError
		if !errors.As(err, &he) {
			t.Fatalf("Receive: %v, want a HeldError", err)
		}
		want := HeldError{Stream: 1, SSN: 6, Next: 1, Octets: chunk, Held: 4 * chunk, Limit: limit}
		if *he != want {
			t.Errorf("HeldError %+v, want %+v", *he, want)
		}
		for _, w := range []string{"Config.MaxHeld", "5000 octets", "missing DDP-SSN 1", "section 10"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q does not say %q", err, w)
			}
		}
		if h := r.c.Held(); h != 0 {
			t.Errorf("%d octets held after the session was terminated", h)
		}
		// What the peer sends on, the gap filler included, is dropped,
		// not held.
		for ssn := uint16(7); ssn < 20; ssn++ {
			r.send(1, Segment(ssn, payload))
		}
		r.send(1, Segment(1, payload))
		// An Initiate behind them: once it is in, they were handled (one
		// reader, and this pipe keeps the order).
		r.send(2, Control(0, FuncInitiate, nil))
		if _, err := r.c.Listen(ctx); err != nil {
			t.Fatal(err)
		}
		if h := r.c.Held(); h != 0 {
			t.Errorf("%d octets held for a terminated session", h)
		}
	})

	t.Run("before the ULP accepts", func(t *testing.T) {
		// Chunks ahead of a gap are held from the Initiate on; a ULP
		// that answers a session the bound ended learns why.
		r := newRawConfig(t, Config{MaxHeld: limit})
		r.send(1, Control(0, FuncInitiate, nil))
		for ssn := uint16(2); ssn <= 6; ssn++ {
			r.send(1, Segment(ssn, payload))
		}
		if st, p := r.next(); st != 1 || p.Func != FuncTerminate || p.SSN != 0 {
			t.Fatalf("the layer sent %s at DDP-SSN %d on stream %d, want its Terminate at 0 on 1", p.describe(), p.SSN, st)
		}
		req, err := r.c.Listen(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var he *HeldError
		if _, err := req.Accept(ctx, nil); !errors.As(err, &he) || he.SSN != 6 || he.Limit != limit {
			t.Errorf("Accept: %v, want the HeldError for DDP-SSN 6", err)
		}
		if h := r.c.Held(); h != 0 {
			t.Errorf("%d octets held", h)
		}
	})

	t.Run("per association", func(t *testing.T) {
		// Two sessions share the bound: the one whose chunk passes it is
		// terminated; the other goes on and gets its segments once its
		// own gap closes.
		r := newRawConfig(t, Config{MaxHeld: limit})
		s1 := r.accept(1)
		s2 := r.accept(2)
		r.send(2, Segment(2, payload))
		r.send(2, Segment(3, payload))
		waitHeld(t, r.c, 2*chunk)
		r.send(1, Segment(2, payload))
		r.send(1, Segment(3, payload))
		waitHeld(t, r.c, 4*chunk)
		r.send(1, Segment(4, payload)) // 5010 on the association
		if st, p := r.next(); st != 1 || p.Func != FuncTerminate {
			t.Fatalf("the layer sent %s on stream %d, want a Terminate on 1", p.describe(), st)
		}
		var he *HeldError
		if _, err := s1.Receive(ctx); !errors.As(err, &he) || he.Held != 4*chunk || he.Limit != limit {
			t.Fatalf("session 1: %v", err)
		}
		waitHeld(t, r.c, 2*chunk) // session 2's alone
		r.send(2, Segment(1, payload))
		for i := 0; i < 3; i++ {
			if _, err := s2.Receive(ctx); err != nil {
				t.Fatalf("session 2, segment %d: %v", i+1, err)
			}
		}
		if err := s2.Err(); err != nil {
			t.Errorf("session 2 ended: %v", err)
		}
		if h := r.c.Held(); h != 0 {
			t.Errorf("%d octets held", h)
		}
	})
}

// TestHeldConfig: the bound must hold one segment of the MULPDU.
func TestHeldConfig(t *testing.T) {
	_, local := Pipe(PipeConfig{Adaptation: [2]*uint32{ddp(), ddp()}})
	_, err := New(local, Config{MaxHeld: 1000})
	if err == nil || !strings.Contains(err.Error(), "Config.MaxHeld 1000 is less than the MULPDU 1434") {
		t.Errorf("MaxHeld 1000: %v", err)
	}
}

// sctpPeer is a peer played by hand on a bare association of package
// sctp that speaks the formats, against the layer c on loopback UDP.
type sctpPeer struct {
	t   *testing.T
	ctx context.Context
	h   *sctp.Association
	c   *Conn
}

// newSCTPPeer starts a layer listening with scfg and cfg, and a bare
// association to it with scfg.
func newSCTPPeer(t *testing.T, ctx context.Context, scfg sctp.Config, cfg Config) *sctpPeer {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", scfg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := sctp.Dial(ctx, pc, ln.Addr(), SCTPConfig(scfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Abort(sctp.UserAbort("test over")) })
	c := <-accepted
	if c == nil {
		t.FailNow()
	}
	t.Cleanup(func() { c.Close() })
	return &sctpPeer{t: t, ctx: ctx, h: h, c: c}
}

// send sends p on stream 0.
func (p *sctpPeer) send(pl Payload) {
	b, err := pl.Append(nil)
	if err == nil {
		err = p.h.SendMsg(p.ctx, 0, pl.PPID, true, b)
	}
	if err != nil {
		p.t.Fatal(err)
	}
}

// accept has the peer initiate a session on stream 0 and the layer
// accept it.
func (p *sctpPeer) accept() *Session {
	p.t.Helper()
	p.send(Control(0, FuncInitiate, nil))
	req, err := p.c.Listen(p.ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	s, err := req.Accept(p.ctx, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	m, err := p.h.RecvMsg(p.ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	if a, err := ParsePayload(m.PPID, m.Data); err != nil || a.Func != FuncAccept {
		p.t.Fatalf("the answer is a %s (%v)", a.describe(), err)
	}
	return s
}

// TestHeldHostileOverSCTP: a hostile peer on a real association (loopback
// UDP) that never sends DDP-SSN 1 is not held back by SCTP's receive
// window: the layer had taken four times the 64 KiB window ahead of the
// gap when Config.MaxHeld cut it off. The session ends with the HeldError,
// the peer gets the Terminate, and nothing stays held.
func TestHeldHostileOverSCTP(t *testing.T) {
	const (
		window = 64 << 10
		limit  = 4 * window
		segLen = 1000
	)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hp := newSCTPPeer(t, ctx, sctp.Config{ReceiveBuffer: window}, Config{MaxHeld: limit})
	h, c, send := hp.h, hp.c, hp.send
	s := hp.accept()

	// DDP-SSN 1 never comes; 2 and on do, twice the bound's worth.
	seg := bytes.Repeat([]byte{0x5a}, segLen)
	terminated := make(chan Payload, 1)
	go func() {
		m, err := h.RecvMsg(ctx)
		if err != nil {
			terminated <- Payload{}
			return
		}
		p, _ := ParsePayload(m.PPID, m.Data)
		terminated <- p
	}()
	sent := 0
	for ssn := uint16(2); sent < 2*limit; ssn++ {
		send(Segment(ssn, seg))
		sent += SSNLen + segLen
	}
	var p Payload
	select {
	case p = <-terminated:
	case <-ctx.Done():
		t.Fatal("no Terminate from the layer")
	}
	if p.PPID != PPIDControl || p.Func != FuncTerminate || p.SSN != 1 {
		t.Fatalf("the layer sent a %s at DDP-SSN %d, want its Terminate at 1", p.describe(), p.SSN)
	}
	_, err := s.Receive(ctx)
	var he *HeldError
	if !errors.As(err, &he) {
		t.Fatalf("Receive: %v, want a HeldError", err)
	}
	if he.Limit != limit || he.Next != 1 || he.Held > limit || he.Held+he.Octets <= limit {
		t.Errorf("HeldError %+v: want the bound %d passed by the chunk and not before it", *he, limit)
	}
	if he.Held <= window {
		t.Errorf("held %d octets, no more than the %d-octet window: SCTP bounded it after all", he.Held, window)
	}
	if n := c.Held(); n != 0 {
		t.Errorf("%d octets still held", n)
	}
}
