package sctp

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// addrKey identifies a peer's transport address: the UDP address and
// port the packets come from (RFC 6951 5.4: the UDP source port is the
// peer's encapsulation port). Associations are demultiplexed by it and
// then checked by Verification Tag (RFC 9260 8.5).
type addrKey struct {
	ap netip.AddrPort // for *net.UDPAddr
	s  string         // for other net.Addr kinds
}

func keyOf(a net.Addr) addrKey {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return addrKey{ap: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())}
	}
	return addrKey{s: a.Network() + "|" + a.String()}
}

func (k addrKey) String() string {
	if k.s != "" {
		return k.s
	}
	return k.ap.String()
}

// EndpointStats counts packets refused before they reach an association.
type EndpointStats struct {
	PacketsReceived uint64
	BadChecksums    uint64 // CRC32c wrong: dropped silently (RFC 9260 6.8)
	Malformed       uint64 // common header or chunk framing broken
	WrongPort       uint64 // destination SCTP port not this endpoint's
	OutOfTheBlue    uint64 // no association for the address (RFC 9260 8.4)
	StaleCookies    uint64 // COOKIE ECHO past its lifetime: Stale Cookie Error sent
	BadCookies      uint64 // COOKIE ECHO whose MAC, tag or address did not check
	WriteErrors     uint64
}

// Endpoint is one SCTP endpoint over one PacketConn: it reads every
// packet, checks the CRC32c, and hands each to the association of its
// source address (or answers it as RFC 9260 8.4 says for out-of-the-blue
// packets). A listening endpoint answers INITs statelessly with a signed
// State Cookie and offers the associations their COOKIE ECHOs create to
// Accept.
type Endpoint struct {
	pc        net.PacketConn
	udp       *net.UDPConn // pc, when it is one: allocation-free reads and writes
	gw        *gatherWriter
	bufs      bufPool
	cfg       Config
	secret    []byte
	port      uint16 // this end's SCTP port
	listening bool
	log       *slog.Logger

	mu     sync.Mutex
	assocs map[addrKey]*Association
	closed bool
	owner  *Association // set by the package-level Dial: the endpoint ends with it

	acceptQ chan *Association
	done    chan struct{}
	loopEnd chan struct{}

	stats struct {
		packets, badCRC, malformed, wrongPort, ootb, stale, badCookie, writeErr atomic.Uint64
	}
}

// Listen starts a listening endpoint on pc: it reads pc from now on and
// closes it when the endpoint closes. Accept returns the associations
// peers set up; Dial on it sets up more from this end.
func Listen(pc net.PacketConn, cfg Config) (*Endpoint, error) {
	return newEndpoint(pc, cfg, true)
}

// NewEndpoint starts an endpoint on pc that only dials (it refuses INITs
// with an ABORT). It owns pc as Listen's does.
func NewEndpoint(pc net.PacketConn, cfg Config) (*Endpoint, error) {
	return newEndpoint(pc, cfg, false)
}

// Dial sets up one association to raddr over pc (the four-way handshake
// of RFC 9260 5.1) and returns it once ESTABLISHED. The association owns
// pc: pc is closed when the association ends. To run several associations
// over one PacketConn, use an Endpoint (NewEndpoint or Listen) and its
// Dial.
func Dial(ctx context.Context, pc net.PacketConn, raddr net.Addr, cfg Config) (*Association, error) {
	e, err := newEndpoint(pc, cfg, false)
	if err != nil {
		return nil, err
	}
	a, err := e.dial(ctx, raddr, true)
	if err != nil {
		e.Close()
		return nil, err
	}
	return a, nil
}

func newEndpoint(pc net.PacketConn, cfg Config, listening bool) (*Endpoint, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Endpoint{
		pc:        pc,
		cfg:       c,
		listening: listening,
		log:       c.Logger,
		assocs:    make(map[addrKey]*Association),
		acceptQ:   make(chan *Association, c.AcceptBacklog),
		done:      make(chan struct{}),
		loopEnd:   make(chan struct{}),
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.udp, _ = pc.(*net.UDPConn)
	if e.udp != nil {
		e.gw = newGatherWriter(e.udp)
	}
	e.secret = c.CookieSecret
	if e.secret == nil {
		e.secret = make([]byte, 32)
		if _, err := rand.Read(e.secret); err != nil {
			return nil, fmt.Errorf("sctp: cookie secret: %w", err)
		}
	}
	e.port = c.Port
	if e.port == 0 {
		if u, ok := pc.LocalAddr().(*net.UDPAddr); ok {
			e.port = uint16(u.Port)
		}
	}
	if e.port == 0 {
		return nil, &ConfigError{"Port", "0 and the PacketConn's local address has no UDP port to take it from"}
	}
	if c.SocketBuffer > 0 {
		if s, ok := pc.(interface{ SetReadBuffer(int) error }); ok {
			s.SetReadBuffer(c.SocketBuffer)
		}
		if s, ok := pc.(interface{ SetWriteBuffer(int) error }); ok {
			s.SetWriteBuffer(c.SocketBuffer)
		}
	}
	go e.readLoop()
	return e, nil
}

// Addr is the PacketConn's local address.
func (e *Endpoint) Addr() net.Addr { return e.pc.LocalAddr() }

// Port is this endpoint's SCTP port.
func (e *Endpoint) Port() uint16 { return e.port }

// Stats returns the endpoint's counters.
func (e *Endpoint) Stats() EndpointStats {
	return EndpointStats{
		PacketsReceived: e.stats.packets.Load(),
		BadChecksums:    e.stats.badCRC.Load(),
		Malformed:       e.stats.malformed.Load(),
		WrongPort:       e.stats.wrongPort.Load(),
		OutOfTheBlue:    e.stats.ootb.Load(),
		StaleCookies:    e.stats.stale.Load(),
		BadCookies:      e.stats.badCookie.Load(),
		WriteErrors:     e.stats.writeErr.Load(),
	}
}

// Accept waits for an association a peer set up with this listening
// endpoint. The association is ESTABLISHED; check PeerAdaptation before
// use if the upper layer needs a particular indication (ddp-over-sctp
// draft 7.1, 11.1) and Abort it otherwise.
func (e *Endpoint) Accept(ctx context.Context) (*Association, error) {
	if !e.listening {
		return nil, errors.New("sctp: Accept on an endpoint that does not listen; make it with Listen")
	}
	select {
	case a := <-e.acceptQ:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-e.done:
		return nil, ErrEndpointClosed
	}
}

// Dial sets up an association from this endpoint to raddr, a UDP address
// (the peer's encapsulation port, RFC 6951 5.1). Config.PeerPort (or the
// UDP port) is the SCTP destination port.
func (e *Endpoint) Dial(ctx context.Context, raddr net.Addr) (*Association, error) {
	return e.dial(ctx, raddr, false)
}

func (e *Endpoint) dial(ctx context.Context, raddr net.Addr, owned bool) (*Association, error) {
	key := keyOf(raddr)
	peerPort := e.cfg.PeerPort
	if peerPort == 0 {
		if u, ok := raddr.(*net.UDPAddr); ok {
			peerPort = uint16(u.Port)
		}
	}
	if peerPort == 0 {
		return nil, &ConfigError{"PeerPort", "0 and the remote address has no UDP port to take it from"}
	}
	a := newAssociation(e, key, raddr)
	a.peerPort = peerPort
	a.localTag = randomTag()
	a.nextTSN = randomUint32()
	a.cumAck = a.nextTSN - 1
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrEndpointClosed
	}
	if _, ok := e.assocs[key]; ok {
		e.mu.Unlock()
		return nil, fmt.Errorf("sctp: an association with %v already exists on this endpoint (one association per pair of transport addresses, RFC 9260 1.4)", raddr)
	}
	e.assocs[key] = a
	if owned {
		e.owner = a
	}
	e.mu.Unlock()

	a.mu.Lock()
	a.state = stateCookieWait
	a.sendInit()
	a.mu.Unlock()

	select {
	case <-a.established:
	case <-ctx.Done():
		a.mu.Lock()
		if a.state != stateEstablished {
			a.finish(ctx.Err())
			a.mu.Unlock()
			return nil, ctx.Err()
		}
		a.mu.Unlock()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == stateClosed {
		return nil, a.err
	}
	return a, nil
}

// Close aborts the endpoint's associations (User-Initiated Abort), stops
// reading and closes the PacketConn. Close associations first for a
// graceful end.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	list := make([]*Association, 0, len(e.assocs))
	for _, a := range e.assocs {
		list = append(list, a)
	}
	e.mu.Unlock()
	for _, a := range list {
		a.Abort(UserAbort("endpoint closed"))
	}
	close(e.done)
	err := e.pc.Close()
	<-e.loopEnd
	return err
}

func (e *Endpoint) remove(a *Association) {
	e.mu.Lock()
	if e.assocs[a.key] == a {
		delete(e.assocs, a.key)
	}
	owned := e.owner == a
	e.mu.Unlock()
	if owned {
		go e.Close()
	}
}

func (e *Endpoint) lookup(k addrKey) *Association {
	e.mu.Lock()
	a := e.assocs[k]
	e.mu.Unlock()
	return a
}

// readLoop reads packets until the PacketConn is closed.
func (e *Endpoint) readLoop() {
	defer close(e.loopEnd)
	buf := make([]byte, 65536)
	var chunks []chunk
	for {
		var (
			n    int
			addr net.Addr
			key  addrKey
			err  error
		)
		if e.udp != nil {
			var ap netip.AddrPort
			n, ap, err = e.udp.ReadFromUDPAddrPort(buf)
			key = addrKey{ap: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())}
		} else {
			n, addr, err = e.pc.ReadFrom(buf)
			if err == nil {
				key = keyOf(addr)
			}
		}
		if err != nil {
			if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
				e.failAll(ErrEndpointClosed)
				return
			}
			select {
			case <-e.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// ICMP-induced errors on some sockets (connection refused):
			// SCTP's own timers deal with an unreachable peer.
			continue
		}
		chunks = e.handle(buf[:n], key, addr, chunks[:0])
	}
}

func (e *Endpoint) failAll(err error) {
	e.mu.Lock()
	list := make([]*Association, 0, len(e.assocs))
	for _, a := range e.assocs {
		list = append(list, a)
	}
	e.mu.Unlock()
	for _, a := range list {
		a.mu.Lock()
		if a.state != stateClosed {
			a.finish(err)
		}
		a.mu.Unlock()
	}
}

// handle processes one received packet.
func (e *Endpoint) handle(pkt []byte, key addrKey, addr net.Addr, chunks []chunk) []chunk {
	e.stats.packets.Add(1)
	if len(pkt) < commonHeaderLen {
		e.stats.malformed.Add(1)
		return chunks
	}
	// RFC 9260 6.8: a packet whose CRC32c is wrong is discarded silently.
	if !checksumOK(pkt) {
		e.stats.badCRC.Add(1)
		if a := e.lookup(key); a != nil {
			a.mu.Lock()
			a.stats.BadChecksums++
			a.mu.Unlock()
		}
		return chunks
	}
	h, chunks, err := parsePacket(pkt, chunks)
	if err != nil {
		e.stats.malformed.Add(1)
		e.log.Debug("sctp: packet refused", "from", key, "err", err)
		return chunks
	}
	if h.DstPort != e.port {
		e.stats.wrongPort.Add(1)
		return chunks
	}
	if a := e.lookup(key); a != nil {
		a.handlePacket(h, chunks)
		return chunks
	}
	e.outOfTheBlue(h, chunks, key, addr)
	return chunks
}

// outOfTheBlue handles a packet from an address with no association
// (RFC 9260 8.4).
func (e *Endpoint) outOfTheBlue(h commonHeader, chunks []chunk, key addrKey, addr net.Addr) {
	e.stats.ootb.Add(1)
	for _, c := range chunks {
		if c.Type == ctAbort {
			return // 8.4 rule 2
		}
	}
	switch chunks[0].Type {
	case ctInit:
		// 8.5.1 A: the packet's tag is 0 and INIT is alone in it.
		if h.VTag != 0 || len(chunks) != 1 {
			return
		}
		ic, err := parseInit(chunks[0])
		if err != nil {
			e.log.Debug("sctp: INIT refused", "from", key, "err", err)
			return
		}
		if !e.listening {
			// 8.4 rule 3: the ABORT carries the INIT's Initiate Tag, T=0.
			if ic.Tag != 0 {
				e.reply(key, addr, h, ic.Tag, func(b []byte) []byte {
					return appendCauseChunk(b, ctAbort, 0, []ErrorCause{UserAbort("this endpoint does not accept associations")})
				})
			}
			return
		}
		e.answerInit(h, &ic, key, addr, nil)
	case ctCookieEcho:
		if !e.listening {
			return
		}
		e.cookieEcho(h, chunks, key, addr, nil)
	case ctShutdownAck:
		// 8.4 rule 5: SHUTDOWN COMPLETE with the T bit and the packet's tag.
		e.reply(key, addr, h, h.VTag, func(b []byte) []byte { return appendEmpty(b, ctShutdownComplete, flagT) })
	case ctShutdownComplete, ctCookieAck, ctError:
		// 8.4 rules 6 and 7: discard.
	default:
		// 8.4 rule 8: ABORT with the T bit.
		e.reply(key, addr, h, h.VTag, func(b []byte) []byte { return appendCauseChunk(b, ctAbort, flagT, nil) })
	}
}

// reply sends a packet outside any association: ports swapped from h.
func (e *Endpoint) reply(key addrKey, addr net.Addr, h commonHeader, vtag uint32, build func([]byte) []byte) {
	b := appendCommonHeader(make([]byte, 0, 256), h.DstPort, h.SrcPort, vtag)
	b = build(b)
	sealPacket(b)
	e.writeTo(b, key, addr)
}

func (e *Endpoint) writeTo(b []byte, key addrKey, addr net.Addr) {
	var err error
	if e.udp != nil && key.s == "" {
		_, err = e.udp.WriteToUDPAddrPort(b, key.ap)
	} else {
		if addr == nil {
			return
		}
		_, err = e.pc.WriteTo(b, addr)
	}
	if err != nil {
		e.stats.writeErr.Add(1)
	}
}

// writeGather sends a packet in pieces: with one sendmsg when the
// PacketConn is a UDP socket, else flattened.
func (e *Endpoint) writeGather(a *Association, bufs [][]byte) {
	if a.sa != nil {
		if err := e.gw.write(bufs, a.sa); err != nil {
			e.stats.writeErr.Add(1)
		}
		return
	}
	if len(bufs) == 1 {
		e.writeTo(bufs[0], a.key, a.raddr)
		return
	}
	e.writeTo(a.pb.flatten(bufs), a.key, a.raddr)
}

// answerInit sends the INIT ACK with a State Cookie (RFC 9260 5.1.3),
// keeping no state. existing is the association already with that
// address, if any (5.2.1 and 5.2.2).
func (e *Endpoint) answerInit(h commonHeader, ic *initChunk, key addrKey, addr net.Addr, existing *Association) {
	if ic.Tag == 0 {
		return // 3.3.2: an Initiate Tag of 0 means the packet is discarded
	}
	if ic.OutStreams == 0 || ic.InStreams == 0 {
		e.reply(key, addr, h, ic.Tag, func(b []byte) []byte {
			return appendCauseChunk(b, ctAbort, 0, []ErrorCause{{Code: CauseInvalidParameter}})
		})
		return
	}
	localTag, localTSN := randomTag(), randomUint32()
	if existing != nil && (existing.state == stateCookieWait || existing.state == stateCookieEchoed) {
		// 5.2.1: the INIT ACK carries the tag of this end's own INIT.
		localTag, localTSN = existing.localTag, existing.nextTSN
	}
	cs := cookieState{
		Created:        time.Now(),
		Lifetime:       e.cfg.CookieLifetime,
		LocalTag:       localTag,
		PeerTag:        ic.Tag,
		LocalTSN:       localTSN,
		PeerTSN:        ic.InitialTSN,
		PeerARwnd:      ic.ARwnd,
		OutStreams:     min(e.cfg.OutboundStreams, ic.InStreams),
		InStreams:      min(ic.OutStreams, e.cfg.MaxInboundStreams),
		PeerAdaptation: ic.Adaptation,
		LocalPort:      h.DstPort,
		PeerPort:       h.SrcPort,
		PeerAddr:       key.String(),
	}
	ack := initChunk{
		Tag:          localTag,
		ARwnd:        uint32(e.cfg.ReceiveBuffer),
		OutStreams:   e.cfg.OutboundStreams,
		InStreams:    e.cfg.MaxInboundStreams,
		InitialTSN:   localTSN,
		Adaptation:   e.cfg.AdaptationIndication,
		Cookie:       cs.seal(e.secret),
		Unrecognized: ic.Unrecognized,
	}
	e.reply(key, addr, h, ic.Tag, func(b []byte) []byte { return appendInit(b, ctInitAck, &ack) })
}

// cookieEcho handles a COOKIE ECHO (RFC 9260 5.1.5 and 5.2.4): a new
// association, or one of the cases for an existing one.
func (e *Endpoint) cookieEcho(h commonHeader, chunks []chunk, key addrKey, addr net.Addr, existing *Association) {
	cs, ok := openCookie(chunks[0].Value, e.secret)
	if !ok || cs.LocalTag != h.VTag || cs.PeerAddr != key.String() || cs.LocalPort != h.DstPort || cs.PeerPort != h.SrcPort {
		e.stats.badCookie.Add(1)
		return
	}
	if age := time.Since(cs.Created); age > cs.Lifetime {
		// 5.1.5 step 3: an ERROR with Stale Cookie, the staleness in µs.
		e.stats.stale.Add(1)
		stale := uint32(min((age-cs.Lifetime)/time.Microsecond, 0xffffffff))
		e.reply(key, addr, h, cs.PeerTag, func(b []byte) []byte {
			return appendCauseChunk(b, ctError, 0, []ErrorCause{{Code: CauseStaleCookie, Info: binary.BigEndian.AppendUint32(nil, stale)}})
		})
		return
	}
	if existing != nil {
		existing.cookieEchoExisting(&cs, chunks)
		return
	}
	a := newAssociation(e, key, addr)
	a.fromCookie(&cs)
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	if _, dup := e.assocs[key]; dup {
		e.mu.Unlock()
		return
	}
	e.assocs[key] = a
	e.mu.Unlock()
	select {
	case e.acceptQ <- a:
	default:
		a.mu.Lock()
		a.abortWith(ErrorCause{Code: CauseOutOfResource, Info: []byte("accept backlog full")})
		a.mu.Unlock()
		return
	}
	a.mu.Lock()
	a.queueCtrl(func(b []byte) []byte { return appendEmpty(b, ctCookieAck, 0) })
	a.processChunks(h, chunks[1:])
	a.mu.Unlock()
}

func randomUint32() uint32 {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("sctp: crypto/rand: " + err.Error())
	}
	return binary.BigEndian.Uint32(b[:])
}

// randomTag is a Verification Tag: random and never 0 (RFC 9260 5.3.1).
func randomTag() uint32 {
	for {
		if t := randomUint32(); t != 0 {
			return t
		}
	}
}
