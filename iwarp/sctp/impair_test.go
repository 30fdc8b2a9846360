package sctp

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// viaRelay returns a pair's "via" function that puts a relay with filter
// between the ends, and where the relay will be.
func viaRelay(t *testing.T, filter func(bool, []byte) []time.Duration) (func(net.Addr) net.Addr, **relay) {
	var r *relay
	return func(l net.Addr) net.Addr {
		r = newRelay(t, l, filter)
		return r.Addr()
	}, &r
}

// lockedRand is a seeded source safe for the relay's goroutine.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newRand(seed uint64) *lockedRand { return &lockedRand{r: rand.New(rand.NewPCG(seed, 7))} }

func (l *lockedRand) float() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

func TestLostInitAndCookieEcho(t *testing.T) {
	var mu sync.Mutex
	dropped := map[uint8]int{}
	filter := func(toListener bool, pkt []byte) []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		// The first INIT, the first two COOKIE ECHOs and the first COOKIE
		// ACK are lost: T1-init and T1-cookie resend them (RFC 9260 5.1.6),
		// and the listener answers the repeated COOKIE ECHO of an
		// association it already has (5.2.4 case D).
		for _, c := range []struct {
			typ uint8
			n   int
		}{{ctInit, 1}, {ctCookieEcho, 2}, {ctCookieAck, 1}} {
			if hasChunk(pkt, c.typ) && dropped[c.typ] < c.n {
				dropped[c.typ]++
				return nil
			}
		}
		return []time.Duration{0}
	}
	via, rp := viaRelay(t, filter)
	s, c, _ := pair(t, fastConfig(), fastConfig(), via)
	exchange(t, s, c, 20, 20000, 2)
	// The relay calls filter holding its own lock, so take mu only for the
	// copy: holding it across packets() below would order the two locks
	// the other way and deadlock with a late packet (a SACK, a HEARTBEAT).
	mu.Lock()
	got := map[uint8]int{ctInit: dropped[ctInit], ctCookieEcho: dropped[ctCookieEcho], ctCookieAck: dropped[ctCookieAck]}
	mu.Unlock()
	if got[ctInit] != 1 || got[ctCookieEcho] != 2 || got[ctCookieAck] != 1 {
		t.Errorf("dropped %v", got)
	}
	inits := 0
	for _, p := range (*rp).packets(true) {
		if hasChunk(p, ctInit) {
			inits++
		}
	}
	if inits != 2 {
		t.Errorf("%d INITs reached the relay, want 2 (one lost, one retransmitted)", inits)
	}
}

func lossFilter(seed uint64, p float64, match func(toListener bool, pkt []byte) bool) func(bool, []byte) []time.Duration {
	r := newRand(seed)
	return func(toListener bool, pkt []byte) []time.Duration {
		if (match == nil || match(toListener, pkt)) && r.float() < p {
			return nil
		}
		return []time.Duration{0}
	}
}

// notHandshake leaves the handshake alone so that the loss cases exercise
// the data path (lost INIT and COOKIE ECHO have their own test).
func notHandshake(_ bool, pkt []byte) bool {
	ts := chunkTypes(pkt)
	return len(ts) > 0 && ts[0] != ctInit && ts[0] != ctInitAck && ts[0] != ctCookieEcho && ts[0] != ctCookieAck
}

func TestLoss(t *testing.T) {
	via, _ := viaRelay(t, lossFilter(3, 0.05, notHandshake))
	s, c, _ := pair(t, fastConfig(), fastConfig(), via)
	exchange(t, s, c, 150, 64<<10, 3)
	cs, ss := c.Stats(), s.Stats()
	if cs.Retransmissions+ss.Retransmissions == 0 {
		t.Errorf("5%% loss and no retransmission: client %+v server %+v", cs, ss)
	}
	if cs.FastRetransmits+ss.FastRetransmits == 0 {
		t.Errorf("5%% loss and no fast retransmit: client %+v server %+v", cs, ss)
	}
	t.Logf("client rtx %d fast %d T3 %d; server rtx %d fast %d T3 %d", cs.Retransmissions, cs.FastRetransmits, cs.T3Timeouts, ss.Retransmissions, ss.FastRetransmits, ss.T3Timeouts)
}

func TestLostSACKs(t *testing.T) {
	// Half of the packets that carry only a SACK are lost, both ways.
	via, _ := viaRelay(t, lossFilter(4, 0.5, func(_ bool, pkt []byte) bool { return onlyChunk(pkt, ctSack) }))
	s, c, _ := pair(t, fastConfig(), fastConfig(), via)
	exchange(t, s, c, 100, 64<<10, 4)
}

func TestReordering(t *testing.T) {
	r := newRand(5)
	filter := func(_ bool, pkt []byte) []time.Duration {
		if notHandshake(false, pkt) && r.float() < 0.2 {
			return []time.Duration{time.Duration(1+r.float()*8) * time.Millisecond}
		}
		return []time.Duration{0}
	}
	via, _ := viaRelay(t, filter)
	s, c, _ := pair(t, fastConfig(), fastConfig(), via)
	exchange(t, s, c, 150, 64<<10, 5)
}

func TestDuplication(t *testing.T) {
	r := newRand(6)
	filter := func(_ bool, pkt []byte) []time.Duration {
		if r.float() < 0.15 {
			return []time.Duration{0, time.Millisecond}
		}
		return []time.Duration{0}
	}
	via, _ := viaRelay(t, filter)
	s, c, _ := pair(t, fastConfig(), fastConfig(), via)
	exchange(t, s, c, 150, 64<<10, 6)
	if d := s.Stats().DuplicateTSNs + c.Stats().DuplicateTSNs; d == 0 {
		t.Error("15% duplication and no duplicate TSN seen")
	}
}

func TestBlackout(t *testing.T) {
	var mu sync.Mutex
	black := false
	dropped := 0
	filter := func(_ bool, pkt []byte) []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		if black {
			dropped++
			return nil
		}
		return []time.Duration{0}
	}
	via, _ := viaRelay(t, filter)
	cfg := fastConfig()
	s, c, _ := pair(t, cfg, cfg, via)
	ctx := testCtx(t)
	// Messages in flight when the path goes dark for longer than several
	// RTOs (RTOMax 400 ms here): T3-rtx backs off, then everything gets
	// through once the path is back.
	const n = 40
	mu.Lock()
	black = true
	mu.Unlock()
	for i := 0; i < n; i++ {
		b := make([]byte, 5000)
		fill(b, i)
		if err := c.SendMsg(ctx, 0, uint32(i), true, b); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(900 * time.Millisecond)
	mu.Lock()
	black = false
	mu.Unlock()
	seen := make([]bool, n)
	for k := 0; k < n; k++ {
		m, err := s.RecvMsg(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[m.PPID] {
			t.Fatalf("message %d twice", m.PPID)
		}
		seen[m.PPID] = true
	}
	st := c.Stats()
	if st.T3Timeouts < 2 {
		t.Errorf("%d T3 timeouts over a 900 ms blackout, want at least 2", st.T3Timeouts)
	}
	if err := c.Err(); err != nil {
		t.Errorf("association ended: %v", err)
	}
	exchange(t, s, c, 20, 10000, 7)
}

// TestT3Backoff checks the timer rules of RFC 9260 6.3.3 without a
// network: each expiry doubles the RTO up to RTO.Max, sets cwnd to one
// MTU and ssthresh to max(cwnd/2, 4*MTU), and marks every outstanding
// chunk; Association.Max.Retrans expiries in a row end the association.
func TestT3Backoff(t *testing.T) {
	cfg := fastConfig()
	// Timers too long to fire by themselves during the test: the test
	// calls the expiry itself.
	cfg.RTOInitial, cfg.RTOMin, cfg.RTOMax = 10*time.Second, 10*time.Second, 50*time.Second
	cfg.MaxRetransmissions = 4
	via, rp := viaRelay(t, nil)
	_, c, _ := pair(t, cfg, cfg, via)
	(*rp).setFilter(func(bool, []byte) []time.Duration { return nil }) // black hole
	ctx := testCtx(t)
	for i := 0; i < 8; i++ {
		if err := c.SendMsg(ctx, 0, 0, true, make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	mtu := c.cfg.MTU
	// Initial cwnd min(4*MTU, max(2*MTU, 4404)) = 4404 (RFC 9260 7.2.1);
	// rule B lets a chunk out while less than cwnd is in flight: 5.
	if c.nsent != 5 || c.flight != 5000 || c.cwnd != 4404 {
		t.Fatalf("sent %d chunks, %d in flight, cwnd %d, want 5, 5000, 4404", c.nsent, c.flight, c.cwnd)
	}
	cwnd0 := c.cwnd
	for i, want := range []time.Duration{20 * time.Second, 40 * time.Second, 50 * time.Second, 50 * time.Second} {
		rtx0 := c.stats.Retransmissions
		c.t3Expired()
		if c.rto != want {
			t.Errorf("expiry %d: RTO %v, want %v", i+1, c.rto, want)
		}
		if c.cwnd != mtu {
			t.Errorf("expiry %d: cwnd %d, want one MTU %d", i+1, c.cwnd, mtu)
		}
		if i == 0 && c.ssthresh != max(cwnd0/2, 4*mtu) {
			t.Errorf("expiry 1: ssthresh %d, want max(%d/2, 4*%d)", c.ssthresh, cwnd0, mtu)
		}
		// One MTU of cwnd: one packet of retransmissions, the earliest
		// chunks (1 DATA of 1000 octets plus header per 1016 octets).
		if got := c.stats.Retransmissions - rtx0; got != 1 {
			t.Errorf("expiry %d: %d chunks retransmitted, want 1 (one 1200-octet packet)", i+1, got)
		}
		if c.state != stateEstablished {
			t.Fatalf("expiry %d: state %v", i+1, c.state)
		}
	}
	c.t3Expired() // the fifth in a row: more than Association.Max.Retrans
	if c.state != stateClosed || !errors.Is(c.err, ErrPeerUnreachable) {
		t.Errorf("after 5 expiries: state %v err %v, want CLOSED and ErrPeerUnreachable", c.state, c.err)
	}
}

func TestRTOComputation(t *testing.T) {
	cfg, _ := Config{RTOInitial: time.Second, RTOMin: 100 * time.Millisecond, RTOMax: 3 * time.Second}.withDefaults()
	a := &Association{cfg: &cfg, rto: cfg.RTOInitial}
	// C2: first measurement R: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4*RTTVAR.
	a.measureRTT(200 * time.Millisecond)
	if a.srtt != 200*time.Millisecond || a.rttvar != 100*time.Millisecond || a.rto != 600*time.Millisecond {
		t.Fatalf("after 200 ms: SRTT %v RTTVAR %v RTO %v, want 200ms 100ms 600ms", a.srtt, a.rttvar, a.rto)
	}
	// C3: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'|, SRTT = 7/8 SRTT + 1/8 R'.
	a.measureRTT(100 * time.Millisecond)
	if a.rttvar != 100*time.Millisecond || a.srtt != 187500*time.Microsecond || a.rto != 587500*time.Microsecond {
		t.Fatalf("after 100 ms: SRTT %v RTTVAR %v RTO %v, want 187.5ms 100ms 587.5ms", a.srtt, a.rttvar, a.rto)
	}
	// C6/C7: clamped to RTO.Min and RTO.Max.
	for i := 0; i < 50; i++ {
		a.measureRTT(time.Millisecond)
	}
	if a.rto != cfg.RTOMin {
		t.Errorf("tiny RTTs: RTO %v, want RTO.Min %v", a.rto, cfg.RTOMin)
	}
	a.measureRTT(10 * time.Second)
	if a.rto != cfg.RTOMax {
		t.Errorf("huge RTT: RTO %v, want RTO.Max %v", a.rto, cfg.RTOMax)
	}
}

func TestWrongTagIgnored(t *testing.T) {
	via, rp := viaRelay(t, nil)
	s, c, ep := pair(t, fastConfig(), fastConfig(), via)
	ctx := testCtx(t)
	r := *rp
	// A DATA chunk from the peer's address with every field right but
	// the Verification Tag (RFC 9260 8.5: silently discarded).
	forge := func(vtag uint32, crcOK bool) []byte {
		b := appendCommonHeader(nil, c.localPort, s.localPort, vtag)
		b = appendData(b, &dataChunk{Flags: flagBegin | flagEnd | flagUnordered, TSN: s.rcvCumSnapshot() + 1, Stream: 0, PPID: 99, Data: []byte("forged")})
		sealPacket(b)
		if !crcOK {
			b[len(b)-1] ^= 1
		}
		return b
	}
	r.inject(true, forge(s.localTag^0x5a5a5a5a, true))
	r.inject(true, forge(s.localTag, false)) // right tag, bad CRC32c
	// A real message after them is the first one delivered.
	if err := c.SendMsg(ctx, 0, 1, true, []byte("real")); err != nil {
		t.Fatal(err)
	}
	m, err := s.RecvMsg(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.PPID != 1 || string(m.Data) != "real" {
		t.Fatalf("first message PPID %d %q, want the real one", m.PPID, m.Data)
	}
	st := s.Stats()
	if st.BadVerificationTags != 1 || st.BadChecksums != 1 {
		t.Errorf("BadVerificationTags %d BadChecksums %d, want 1 and 1", st.BadVerificationTags, st.BadChecksums)
	}
	if ep.Stats().BadChecksums != 1 {
		t.Errorf("endpoint BadChecksums %d, want 1", ep.Stats().BadChecksums)
	}
	// An ABORT with the wrong tag, or with the T bit and our own tag, is
	// ignored too (8.5.1 B).
	bad := appendCommonHeader(nil, c.localPort, s.localPort, s.localTag+1)
	bad = appendCauseChunk(bad, ctAbort, 0, nil)
	sealPacket(bad)
	r.inject(true, bad)
	tbit := appendCommonHeader(nil, c.localPort, s.localPort, s.localTag)
	tbit = appendCauseChunk(tbit, ctAbort, flagT, nil)
	sealPacket(tbit)
	r.inject(true, tbit)
	exchange(t, s, c, 5, 100, 8)
	if err := s.Err(); err != nil {
		t.Fatalf("a forged ABORT ended the association: %v", err)
	}
	if got := s.Stats().BadVerificationTags; got != 3 {
		t.Errorf("BadVerificationTags %d, want 3", got)
	}
}

func (a *Association) rcvCumSnapshot() uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rcvCum
}

// handshake runs INIT and INIT ACK by hand against a listener and returns
// the cookie and the tags.
func rawInit(t *testing.T, pc *net.UDPConn, to net.Addr, port uint16, tag uint32) (cookie []byte, peerTag uint32) {
	t.Helper()
	b := appendCommonHeader(nil, 5000, port, 0)
	b = appendInit(b, ctInit, &initChunk{Tag: tag, ARwnd: 65536, OutStreams: 4, InStreams: 4, InitialTSN: 1000})
	sealPacket(b)
	if _, err := pc.WriteTo(b, to); err != nil {
		t.Fatal(err)
	}
	pkt := readPacket(t, pc)
	h, cs, err := parsePacket(pkt, nil)
	if err != nil || cs[0].Type != ctInitAck || h.VTag != tag {
		t.Fatalf("answer to INIT: %v %v tag %#x", cs, err, h.VTag)
	}
	ic, err := parseInit(cs[0])
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), ic.Cookie...), ic.Tag
}

func readPacket(t *testing.T, pc *net.UDPConn) []byte {
	t.Helper()
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 65536)
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	if !checksumOK(buf[:n]) {
		t.Fatal("answer with a bad CRC32c")
	}
	return buf[:n]
}

func TestStaleCookieRefused(t *testing.T) {
	cfg := fastConfig()
	cfg.CookieLifetime = 5 * time.Millisecond
	ep, pc := listenRaw(t, cfg)
	cookie, peerTag := rawInit(t, pc, ep.Addr(), ep.Port(), 0x11223344)
	time.Sleep(20 * time.Millisecond) // past the cookie's lifetime
	b := appendCommonHeader(nil, 5000, ep.Port(), peerTag)
	b = appendChunk(b, ctCookieEcho, 0, cookie)
	sealPacket(b)
	pc.WriteTo(b, ep.Addr())
	pkt := readPacket(t, pc)
	h, cs, err := parsePacket(pkt, nil)
	if err != nil || len(cs) != 1 || cs[0].Type != ctError || h.VTag != 0x11223344 {
		t.Fatalf("answer to a stale COOKIE ECHO: %v %v tag %#x, want one ERROR with the INIT's tag", cs, err, h.VTag)
	}
	causes, _ := parseCauses(cs[0])
	if len(causes) != 1 || causes[0].Code != CauseStaleCookie || len(causes[0].Info) != 4 || binary.BigEndian.Uint32(causes[0].Info) == 0 {
		t.Fatalf("causes %v, want one Stale Cookie Error with a staleness", causes)
	}
	if ep.Stats().StaleCookies != 1 {
		t.Errorf("StaleCookies %d", ep.Stats().StaleCookies)
	}
	ctx, cancel := testCtxShort(t, 50*time.Millisecond)
	defer cancel()
	if a, err := ep.Accept(ctx); err == nil {
		t.Fatalf("a stale cookie made association %v", a.RemoteAddr())
	}

	// A dialer whose every cookie goes stale gives up with an error that
	// says so (RFC 9260 5.2.6 restarts with a Cookie Preservative, which
	// this listener does not honour past its lifetime).
	dcfg := fastConfig()
	dcfg.MaxInitRetransmissions = 2
	filter := func(toListener bool, pkt []byte) []time.Duration {
		if hasChunk(pkt, ctCookieEcho) {
			return []time.Duration{30 * time.Millisecond}
		}
		return []time.Duration{0}
	}
	r := newRelay(t, ep.Addr(), filter)
	dcfg.PeerPort = ep.Port()
	_, err = Dial(testCtx(t), listenUDP(t), r.Addr(), dcfg)
	var he *HandshakeError
	if !errors.As(err, &he) {
		t.Fatalf("Dial through a slow path: %v, want *HandshakeError", err)
	}
	t.Log(err)
}

func testCtxShort(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// listenRaw starts a listening endpoint and a bare UDP socket to talk to
// it by hand.
func listenRaw(t *testing.T, cfg Config) (*Endpoint, *net.UDPConn) {
	t.Helper()
	ep, err := Listen(listenUDP(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	pc := listenUDP(t)
	t.Cleanup(func() { pc.Close() })
	return ep, pc
}

func TestBadCookieIgnored(t *testing.T) {
	ep, pc := listenRaw(t, fastConfig())
	cookie, peerTag := rawInit(t, pc, ep.Addr(), ep.Port(), 0x55667788)
	cookie[len(cookie)/2] ^= 0x80 // one bit of the signed state
	b := appendCommonHeader(nil, 5000, ep.Port(), peerTag)
	b = appendChunk(b, ctCookieEcho, 0, cookie)
	sealPacket(b)
	pc.WriteTo(b, ep.Addr())
	// The tampered cookie gets no answer; a HEARTBEAT after it from the
	// same address is out of the blue and gets an ABORT with the T bit,
	// which shows the COOKIE ECHO was processed (and refused) first.
	hb := appendCommonHeader(nil, 5000, ep.Port(), 0xabcdef01)
	hb = appendHeartbeat(hb, ctHeartbeat, []byte("x"))
	sealPacket(hb)
	pc.WriteTo(hb, ep.Addr())
	pkt := readPacket(t, pc)
	h, cs, err := parsePacket(pkt, nil)
	if err != nil || len(cs) != 1 || cs[0].Type != ctAbort || cs[0].Flags&flagT == 0 || h.VTag != 0xabcdef01 {
		t.Fatalf("got %v %v tag %#x, want an ABORT with T and the HEARTBEAT's tag (RFC 9260 8.4 rule 8)", cs, err, h.VTag)
	}
	if ep.Stats().BadCookies != 1 {
		t.Errorf("BadCookies %d, want 1", ep.Stats().BadCookies)
	}
}
