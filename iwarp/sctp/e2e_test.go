package sctp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// fastConfig is a Config for loopback tests: short RTOs so that the
// impairment cases recover quickly.
func fastConfig() Config {
	return Config{
		RTOInitial:        100 * time.Millisecond,
		RTOMin:            20 * time.Millisecond,
		RTOMax:            400 * time.Millisecond,
		SACKDelay:         20 * time.Millisecond,
		HeartbeatInterval: -1,
	}
}

func u32(v uint32) *uint32 { return &v }

func listenUDP(t testing.TB) *net.UDPConn {
	t.Helper()
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pair sets up an association between a listening endpoint and a dialer,
// the dialer sending to via (the listener's own address when nil, or a
// relay's).
func pair(t testing.TB, lcfg, dcfg Config, via func(listener net.Addr) net.Addr) (server, client *Association, ep *Endpoint) {
	t.Helper()
	ctx := testCtx(t)
	ep, err := Listen(listenUDP(t), lcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	raddr := ep.Addr()
	if via != nil {
		raddr = via(raddr)
	}
	if dcfg.PeerPort == 0 {
		dcfg.PeerPort = ep.Port()
	}
	type res struct {
		a   *Association
		err error
	}
	ch := make(chan res, 1)
	go func() {
		a, err := ep.Accept(ctx)
		ch <- res{a, err}
	}()
	client, err = Dial(ctx, listenUDP(t), raddr, dcfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { client.Abort(UserAbort("test over")) })
	r := <-ch
	if r.err != nil {
		t.Fatalf("Accept: %v", r.err)
	}
	return r.a, client, ep
}

func TestHandshakeAndData(t *testing.T) {
	lcfg := fastConfig()
	lcfg.AdaptationIndication = u32(1)
	lcfg.MaxInboundStreams = 8
	lcfg.OutboundStreams = 5
	dcfg := fastConfig()
	dcfg.AdaptationIndication = u32(0x01020304)
	dcfg.OutboundStreams = 10
	dcfg.MaxInboundStreams = 3
	s, c, _ := pair(t, lcfg, dcfg, nil)

	// Each end names the other's UDP address (the accepting end's too,
	// whose association came from a COOKIE ECHO read on the fast path).
	if s.RemoteAddr() == nil || c.RemoteAddr() == nil || s.RemoteAddr().String() == "" {
		t.Errorf("remote addresses: server sees %v, client sees %v", s.RemoteAddr(), c.RemoteAddr())
	}
	if p := s.PeerAdaptation(); p == nil || *p != 0x01020304 {
		t.Errorf("server sees peer adaptation %v, want 0x01020304", p)
	}
	if p := c.PeerAdaptation(); p == nil || *p != 1 {
		t.Errorf("client sees peer adaptation %v, want 1", p)
	}
	// RFC 9260 5.1.1: outbound = min(own OS, peer MIS).
	if o, i := c.Streams(); o != 8 || i != 3 {
		t.Errorf("client streams out %d in %d, want 8 and 3", o, i)
	}
	if o, i := s.Streams(); o != 3 || i != 8 {
		t.Errorf("server streams out %d in %d, want 3 and 8", o, i)
	}
	ctx := testCtx(t)
	if err := c.SendMsg(ctx, 7, 0x10, true, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	m, err := s.RecvMsg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Stream != 7 || m.PPID != 0x10 || !m.Unordered || string(m.Data) != "hello" {
		t.Errorf("got %+v", m)
	}
	if err := s.SendMsg(ctx, 2, 0x11, false, []byte("world")); err != nil {
		t.Fatal(err)
	}
	m, err = c.RecvMsg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Stream != 2 || m.PPID != 0x11 || m.Unordered || string(m.Data) != "world" {
		t.Errorf("got %+v", m)
	}
	var se *StreamError
	if err := s.SendMsg(ctx, 3, 0, true, []byte("x")); !errors.As(err, &se) {
		t.Errorf("stream 3 of 3: err %v, want *StreamError", err)
	}
}

func TestNoAdaptation(t *testing.T) {
	s, c, _ := pair(t, fastConfig(), fastConfig(), nil)
	if p := s.PeerAdaptation(); p != nil {
		t.Errorf("server sees %d, want nil", *p)
	}
	if p := c.PeerAdaptation(); p != nil {
		t.Errorf("client sees %d, want nil", *p)
	}
}

// pattern fills a message with octets that depend on its identity, so
// that any misplaced octet shows.
func fill(b []byte, id int) {
	x := uint32(id)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
}

// exchange sends n messages each way on several streams, sizes from 1
// octet to maxSize, and checks every message arrives once, whole.
func exchange(t *testing.T, s, c *Association, n, maxSize int, seed uint64) {
	t.Helper()
	ctx := testCtx(t)
	outS, _ := c.Streams()
	sizes := func(r *rand.Rand, i int) int {
		switch i % 4 {
		case 0:
			return 1 + r.IntN(16)
		case 1:
			return 1 + r.IntN(2000)
		case 2:
			return 1 + r.IntN(maxSize)
		}
		return maxSize - r.IntN(3)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	send := func(a *Association, dir int) {
		defer wg.Done()
		r := rand.New(rand.NewPCG(seed, uint64(dir)))
		for i := 0; i < n; i++ {
			size := sizes(r, i)
			b := make([]byte, size+8)
			fill(b[8:], dir<<20|i)
			b[0], b[1], b[2], b[3] = byte(dir), byte(i>>16), byte(i>>8), byte(i)
			b = b[:size+8]
			stream := uint16(i) % outS
			if err := a.SendMsg(ctx, stream, uint32(dir<<16|i), i%5 != 4, b); err != nil {
				errs <- fmt.Errorf("dir %d send %d: %w", dir, i, err)
				return
			}
		}
	}
	recv := func(a *Association, dir int) {
		defer wg.Done()
		seen := make([]bool, n)
		lastOrdered := map[uint16]int{} // per stream: ordered messages keep their order (RFC 9260 6.6)
		for k := 0; k < n; k++ {
			m, err := a.RecvMsg(ctx)
			if err != nil {
				errs <- fmt.Errorf("dir %d recv after %d: %w", dir, k, err)
				return
			}
			i := int(m.PPID & 0xffff)
			if int(m.PPID>>16) != dir || i >= n || seen[i] {
				errs <- fmt.Errorf("dir %d: message PPID %#x unexpected or twice", dir, m.PPID)
				return
			}
			seen[i] = true
			want := make([]byte, len(m.Data)-8)
			fill(want, dir<<20|i)
			if m.Data[0] != byte(dir) || int(m.Data[1])<<16|int(m.Data[2])<<8|int(m.Data[3]) != i || !bytes.Equal(m.Data[8:], want) {
				errs <- fmt.Errorf("dir %d message %d (%d octets): content differs", dir, i, len(m.Data))
				return
			}
			if m.Stream != uint16(i)%outS || m.Unordered != (i%5 != 4) {
				errs <- fmt.Errorf("dir %d message %d: stream %d unordered %v", dir, i, m.Stream, m.Unordered)
				return
			}
			if !m.Unordered {
				if last, ok := lastOrdered[m.Stream]; ok && last > i {
					errs <- fmt.Errorf("dir %d: ordered message %d on stream %d after %d", dir, i, m.Stream, last)
					return
				}
				lastOrdered[m.Stream] = i
			}
			// Handing the buffer back recycles it for later messages: any
			// buffer still in use elsewhere would corrupt their checks.
			a.Release(m.Data)
		}
	}
	wg.Add(4)
	go send(c, 0)
	go send(s, 1)
	go recv(s, 0)
	go recv(c, 1)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestExchangeLoopback(t *testing.T) {
	cfg := fastConfig()
	s, c, _ := pair(t, cfg, cfg, nil)
	exchange(t, s, c, 200, 256<<10, 1)
	t.Logf("client: %+v", c.Stats())
}

func TestGracefulShutdownDeliversEverything(t *testing.T) {
	cfg := fastConfig()
	s, c, _ := pair(t, cfg, cfg, nil)
	ctx := testCtx(t)
	const n = 100
	for i := 0; i < n; i++ {
		b := make([]byte, 3000+i)
		fill(b, i)
		if err := c.SendMsg(ctx, uint16(i%4), uint32(i), true, b); err != nil {
			t.Fatal(err)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close(ctx) }()
	got := 0
	for {
		m, err := s.RecvMsg(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d messages: %v", got, err)
		}
		want := make([]byte, 3000+int(m.PPID))
		fill(want, int(m.PPID))
		if !bytes.Equal(m.Data, want) {
			t.Fatalf("message %d differs", m.PPID)
		}
		got++
	}
	if got != n {
		t.Errorf("received %d messages before EOF, want %d", got, n)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("server side did not end")
	}
	if err := s.Err(); err != io.EOF {
		t.Errorf("server Err %v, want io.EOF", err)
	}
	if err := c.SendMsg(ctx, 0, 0, true, []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("SendMsg after Close: %v, want ErrClosed", err)
	}
}

func TestAbortNamesCause(t *testing.T) {
	cfg := fastConfig()
	s, c, _ := pair(t, cfg, cfg, nil)
	ctx := testCtx(t)
	done := make(chan error, 1)
	go func() {
		_, err := s.RecvMsg(ctx)
		done <- err
	}()
	if err := c.Abort(UserAbort("DDP session refused")); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var ae *AbortError
	if !errors.As(err, &ae) || !ae.Remote || !ae.HasCause(CauseUserInitiatedAbort) {
		t.Fatalf("RecvMsg: %v, want a remote *AbortError with User-Initiated Abort", err)
	}
	want := "sctp: association aborted by the peer: User-Initiated Abort (12): DDP session refused"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err.Error(), want)
	}
	if err := s.SendMsg(ctx, 0, 0, true, []byte("x")); !errors.As(err, &ae) {
		t.Errorf("SendMsg after ABORT: %v", err)
	}
}

func TestMessageTooLarge(t *testing.T) {
	lcfg := fastConfig()
	lcfg.ReceiveBuffer = 64 << 10
	s, c, _ := pair(t, lcfg, fastConfig(), nil)
	ctx := testCtx(t)
	var me *MessageTooLargeError
	if err := c.SendMsg(ctx, 0, 0, true, make([]byte, 64<<10+1)); !errors.As(err, &me) || me.Limit != 64<<10 {
		t.Fatalf("err %v, want *MessageTooLargeError with limit 65536", err)
	}
	if err := c.SendMsg(ctx, 0, 0, true, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	if m, err := s.RecvMsg(ctx); err != nil || len(m.Data) != 64<<10 {
		t.Fatalf("got %d octets, %v", len(m.Data), err)
	}
	if err := c.SendMsg(ctx, 0, 0, true, nil); !errors.Is(err, ErrEmptyMessage) {
		t.Errorf("empty message: %v", err)
	}
}

func TestWaitAcked(t *testing.T) {
	// Lossy path: WaitAcked returns only when the Cumulative TSN Ack has
	// passed every message, retransmissions included.
	via, _ := viaRelay(t, lossFilter(9, 0.1, notHandshake))
	s, c, _ := pair(t, fastConfig(), fastConfig(), via)
	ctx := testCtx(t)
	for i := 0; i < 50; i++ {
		if err := c.SendMsg(ctx, 0, uint32(i), true, make([]byte, 3000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitAcked(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Unacked != 0 || st.Flight != 0 {
		t.Errorf("after WaitAcked: Unacked %d Flight %d", st.Unacked, st.Flight)
	}
	// Acknowledged means received: all 50 are there to read.
	for i := 0; i < 50; i++ {
		ctx0, cancel := context.WithTimeout(ctx, time.Second)
		_, err := s.RecvMsg(ctx0)
		cancel()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
}

func TestHeartbeatsUnansweredEndAssociation(t *testing.T) {
	cfg := fastConfig()
	cfg.HeartbeatInterval = 20 * time.Millisecond
	cfg.MaxRetransmissions = 2
	via, rp := viaRelay(t, nil)
	s, c, _ := pair(t, cfg, cfg, via)
	ctx := testCtx(t)
	// Heartbeats on an idle association are answered...
	for c.Stats().HeartbeatAcks == 0 || s.Stats().HeartbeatAcks == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("no heartbeat answered")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// ...until the path dies: after Max.Retrans unanswered ones in a row
	// the peer is unreachable (RFC 9260 8.1, 8.3).
	(*rp).setFilter(func(bool, []byte) []time.Duration { return nil })
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("association still up with heartbeats unanswered")
	}
	if !errors.Is(c.Err(), ErrPeerUnreachable) {
		t.Errorf("Err %v, want ErrPeerUnreachable", c.Err())
	}
	if _, err := c.RecvMsg(ctx); !errors.Is(err, ErrPeerUnreachable) {
		t.Errorf("RecvMsg: %v", err)
	}
}

func TestBothEndsClose(t *testing.T) {
	// Crossing SHUTDOWNs: each end in SHUTDOWN-SENT answers the other's
	// with a SHUTDOWN ACK (RFC 9260 9.2), and both end gracefully.
	cfg := fastConfig()
	s, c, _ := pair(t, cfg, cfg, nil)
	ctx := testCtx(t)
	for i := 0; i < 10; i++ {
		if err := c.SendMsg(ctx, 0, uint32(i), true, make([]byte, 5000)); err != nil {
			t.Fatal(err)
		}
		if err := s.SendMsg(ctx, 0, uint32(i), true, make([]byte, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 2)
	go func() { errs <- c.Close(ctx) }()
	go func() { errs <- s.Close(ctx) }()
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	for _, a := range []*Association{s, c} {
		n := 0
		for {
			_, err := a.RecvMsg(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 10 {
			t.Errorf("%d messages before EOF, want 10", n)
		}
	}
}
