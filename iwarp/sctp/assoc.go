package sctp

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

type assocState uint8

// Association states (RFC 9260 4).
const (
	stateClosed assocState = iota
	stateCookieWait
	stateCookieEchoed
	stateEstablished
	stateShutdownPending
	stateShutdownSent
	stateShutdownReceived
	stateShutdownAckSent
)

func (s assocState) String() string {
	return [...]string{"CLOSED", "COOKIE-WAIT", "COOKIE-ECHOED", "ESTABLISHED", "SHUTDOWN-PENDING", "SHUTDOWN-SENT", "SHUTDOWN-RECEIVED", "SHUTDOWN-ACK-SENT"}[s]
}

// Message is one user message: what SendMsg sends and RecvMsg returns.
type Message struct {
	Stream    uint16
	PPID      uint32 // Payload Protocol Identifier (DDP: 0x10 segments, 0x11 session control)
	Unordered bool
	Data      []byte
}

// Stats are an association's counters and congestion state.
type Stats struct {
	PacketsSent, PacketsReceived       uint64
	DataChunksSent, DataChunksReceived uint64 // DATA chunks, retransmissions included in Sent
	MessagesSent, MessagesReceived     uint64 // user messages queued by SendMsg, delivered to RecvMsg's queue
	BytesSent, BytesReceived           uint64 // user octets, each counted once
	Retransmissions                    uint64 // DATA chunks sent again (timeouts and fast retransmits)
	FastRetransmits                    uint64 // DATA chunks sent again on three miss indications (RFC 9260 7.2.4)
	T3Timeouts                         uint64 // T3-rtx expiries (RFC 9260 6.3.3)
	DuplicateTSNs                      uint64 // DATA chunks received twice
	DroppedChunks                      uint64 // DATA chunks dropped for want of receive window
	SACKsSent, SACKsReceived           uint64
	HeartbeatsSent, HeartbeatAcks      uint64
	BadChecksums                       uint64 // packets from the peer's address dropped for a wrong CRC32c
	BadVerificationTags                uint64 // packets from the peer's address with a wrong tag, dropped (RFC 9260 8.5)
	ErrorsReceived                     uint64 // ERROR chunks from the peer
	Cwnd, Ssthresh                     int    // congestion window and slow-start threshold, octets (RFC 9260 7.2)
	PeerRwnd                           int    // the peer's receive window as this end estimates it
	Flight                             int    // octets of DATA in flight (not a measure of what is acknowledged: see Unacked)
	Unacked                            int    // octets SendMsg queued that the peer's Cumulative TSN Ack has not passed yet
	Held                               int    // received octets charged to this end's receive window: reassembly, unread messages, RecvMsgHeld's not yet credited
	SRTT, RTTVAR, RTO                  time.Duration
}

type outChunk struct {
	tsn      uint32
	stream   uint16
	ssn      uint16
	ppid     uint32
	flags    uint8
	data     []byte
	txCount  uint16
	miss     uint8
	acked    bool // by a gap block
	inFlight bool
	rtx      bool // marked for retransmission
	fastRtx  bool // was fast retransmitted once already (RFC 9260 7.2.4)
	msgBuf   []byte
}

type tsnRange struct{ start, end uint32 }

type timer struct {
	t     *time.Timer
	when  time.Time
	armed bool
}

// signal wakes every goroutine waiting on it; used under Association.mu.
type signal struct{ ch chan struct{} }

func (s *signal) wait() <-chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) broadcast() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// Association is one SCTP association (RFC 9260). Its methods are safe
// for concurrent use.
type Association struct {
	ep    *Endpoint
	cfg   *Config
	key   addrKey
	raddr net.Addr

	mu        sync.Mutex
	state     assocState
	err       error // why it ended; io.EOF after a graceful shutdown
	localTag  uint32
	peerTag   uint32
	localPort uint16
	peerPort  uint16

	outStreams, inStreams uint16
	peerAdaptation        *uint32
	peerRwndInit          int

	// Handshake.
	initRetries  int
	staleRetries int
	preservative uint32
	cookie       []byte // the peer's State Cookie, kept for COOKIE ECHO retransmission
	unrecognized [][]byte

	// Sending (RFC 9260 6.1, 6.3, 7.2).
	nextTSN          uint32
	cumAck           uint32 // the peer's Cumulative TSN Ack
	q                []outChunk
	nsent            int // q[:nsent] were sent at least once
	queued           int // user octets in q
	flight           int
	rwnd             int
	cwnd, ssthresh   int
	pba              int // partial_bytes_acked
	inFastRecovery   bool
	fastRecoveryExit uint32
	fastRtxBurst     bool // one packet of fast retransmissions may exceed cwnd
	t3OnePacket      bool // after a T3 expiry, one packet of retransmissions
	rtxPending       int
	probing          bool   // a zero window probe is outstanding (6.1 rule A)
	probeTSN         uint32 // its TSN
	gapAcked         int
	ssn              []uint16
	sack             sackChunk // reused for parsing

	// RTO (RFC 9260 6.3.1).
	srtt, rttvar, rto time.Duration
	rttMeasured       bool
	rttPending        bool
	rttTSN            uint32
	rttSent           time.Time
	errCount          int // association error counter (8.1)

	// Receiving (RFC 9260 6.2).
	rcvCum       uint32
	gaps         []tsnRange
	highestRecv  uint32
	dups         []uint32
	runStart     map[uint32]*run // fragments being reassembled, by first TSN
	runEnd       map[uint32]*run // the same, by last TSN
	fragHint     int             // size of the last reassembled message
	held         int
	readQ        []Message
	inSSN        []uint16
	pendingOrd   map[uint32]Message // stream<<16 | SSN
	dataPackets  int                // packets with DATA since the last SACK
	sackNow      bool
	sackDue      bool // a SACK is owed (delayed)
	lastAdvRwnd  int
	peerShutdown bool

	// Heartbeat (RFC 9260 8.3).
	dataSends      uint64
	hbSeenSends    uint64
	hbOutstanding  bool
	hbNonce        uint64
	t1, t2, t3     timer
	sackTimer, hbT timer

	ctrl  []byte // control chunks for the next packet
	txbuf []byte // for the packets built whole (handshake, ABORT)
	pb    packetBuilder
	sa    unix.Sockaddr // the peer, for gathered writes

	established chan struct{}
	ended       chan struct{}
	recvSig     signal
	sendSig     signal
	stats       Stats
	rap         netip.AddrPort
}

func newAssociation(e *Endpoint, key addrKey, raddr net.Addr) *Association {
	if raddr == nil && key.s == "" {
		// The UDP fast path reads an AddrPort, not a net.Addr.
		raddr = net.UDPAddrFromAddrPort(key.ap)
	}
	a := &Association{
		ep:          e,
		cfg:         &e.cfg,
		key:         key,
		raddr:       raddr,
		localPort:   e.port,
		rto:         e.cfg.RTOInitial,
		runStart:    make(map[uint32]*run),
		runEnd:      make(map[uint32]*run),
		pendingOrd:  make(map[uint32]Message),
		established: make(chan struct{}),
		ended:       make(chan struct{}),
		txbuf:       make([]byte, 0, e.cfg.MTU),
		rap:         key.ap,
	}
	if e.gw != nil && key.s == "" {
		a.sa = e.gw.sockaddr(key.ap)
	}
	mtu := e.cfg.MTU
	// RFC 9260 7.2.1: initial cwnd = min(4*MTU, max(2*MTU, 4404)).
	a.cwnd = min(4*mtu, max(2*mtu, 4404))
	return a
}

// fromCookie sets up an association from a verified State Cookie (RFC
// 9260 5.1.5 step 4): ESTABLISHED, no handshake state left.
func (a *Association) fromCookie(cs *cookieState) {
	a.localTag, a.peerTag = cs.LocalTag, cs.PeerTag
	a.peerPort = cs.PeerPort
	a.nextTSN = cs.LocalTSN
	a.cumAck = cs.LocalTSN - 1
	a.setPeer(cs.PeerTSN, cs.PeerARwnd, cs.OutStreams, cs.InStreams, cs.PeerAdaptation)
	a.state = stateEstablished
	close(a.established)
	a.startHeartbeat()
}

func (a *Association) setPeer(peerTSN, arwnd uint32, out, in uint16, adapt *uint32) {
	a.rcvCum = peerTSN - 1
	a.highestRecv = a.rcvCum
	a.rwnd = int(min(arwnd, 1<<30))
	a.peerRwndInit = a.rwnd
	// RFC 9260 7.2.1: ssthresh starts at the peer's a_rwnd.
	a.ssthresh = a.rwnd
	a.outStreams, a.inStreams = out, in
	a.ssn = make([]uint16, out)
	a.inSSN = make([]uint16, in)
	a.peerAdaptation = adapt
	a.lastAdvRwnd = a.cfg.ReceiveBuffer
}

// --- public API ---------------------------------------------------------

// LocalAddr is the local UDP address; RemoteAddr the peer's.
func (a *Association) LocalAddr() net.Addr  { return a.ep.pc.LocalAddr() }
func (a *Association) RemoteAddr() net.Addr { return a.raddr }

// PeerAdaptation is the peer's Adaptation Layer Indication from its INIT
// or INIT ACK, nil when it sent none.
func (a *Association) PeerAdaptation() *uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.peerAdaptation == nil {
		return nil
	}
	v := *a.peerAdaptation
	return &v
}

// Streams returns the negotiated numbers of outbound and inbound streams.
func (a *Association) Streams() (outbound, inbound uint16) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.outStreams, a.inStreams
}

// MaxMessage is the largest message SendMsg accepts: the smaller of the
// peer's receive window at setup and this end's SendBuffer.
func (a *Association) MaxMessage() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return min(a.peerRwndInit, a.cfg.SendBuffer)
}

// MaxChunkData is the most user octets one DATA chunk carries at this
// MTU: messages up to it go unfragmented (the ddp-over-sctp draft,
// section 9, wants DDP segments that need no SCTP fragmentation).
func (a *Association) MaxChunkData() int { return a.cfg.maxDataPayload() }

// Stats returns a snapshot of the association's counters.
func (a *Association) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.stats
	s.Cwnd, s.Ssthresh, s.PeerRwnd, s.Flight, s.Unacked = a.cwnd, a.ssthresh, a.rwnd, a.flight, a.queued
	s.Held = a.held
	s.SRTT, s.RTTVAR, s.RTO = a.srtt, a.rttvar, a.rto
	return s
}

// ErrEmptyMessage: SCTP cannot carry a message of no octets (a DATA chunk
// without user data is a protocol error, RFC 9260 6.2).
var ErrEmptyMessage = errors.New("sctp: empty message: SCTP carries no zero-length user messages")

// SendMsg queues one user message on stream with the given Payload
// Protocol Identifier, fragmenting it into DATA chunks of at most
// MaxChunkData octets. Unordered messages are delivered as soon as they
// are whole (U bit, RFC 9260 6.6); ordered ones in order within their
// stream. It waits while the send buffer is full; data is copied, so the
// caller may reuse it at once. It returns once the message is queued,
// not when it is acknowledged.
func (a *Association) SendMsg(ctx context.Context, stream uint16, ppid uint32, unordered bool, data []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(data) == 0 {
		return ErrEmptyMessage
	}
	for {
		if err := a.sendableErr(); err != nil {
			return err
		}
		if stream >= a.outStreams {
			return &StreamError{Stream: stream, Streams: a.outStreams}
		}
		if len(data) > a.peerRwndInit {
			return &MessageTooLargeError{Size: len(data), Limit: a.peerRwndInit, What: "peer receive window"}
		}
		if len(data) > a.cfg.SendBuffer {
			return &MessageTooLargeError{Size: len(data), Limit: a.cfg.SendBuffer, What: "SendBuffer"}
		}
		if a.queued == 0 || a.queued+len(data) <= a.cfg.SendBuffer {
			break
		}
		if err := a.wait(ctx, &a.sendSig); err != nil {
			return err
		}
	}
	buf := a.ep.bufs.get(len(data), data)
	var ssn uint16
	flags := uint8(flagUnordered)
	if !unordered {
		ssn = a.ssn[stream]
		a.ssn[stream]++
		flags = 0
	}
	max := a.cfg.maxDataPayload()
	for off := 0; off < len(buf); off += max {
		end := min(off+max, len(buf))
		f := flags
		if off == 0 {
			f |= flagBegin
		}
		if end == len(buf) {
			f |= flagEnd
		}
		c := outChunk{tsn: a.nextTSN, stream: stream, ssn: ssn, ppid: ppid, flags: f, data: buf[off:end]}
		if end == len(buf) {
			c.msgBuf = buf // returned to the pool when this, the last chunk, is acknowledged
		}
		a.q = append(a.q, c)
		a.nextTSN++
	}
	a.queued += len(buf)
	a.stats.MessagesSent++
	a.stats.BytesSent += uint64(len(buf))
	a.transmit()
	return nil
}

func (a *Association) sendableErr() error {
	switch a.state {
	case stateEstablished:
		return nil
	case stateClosed:
		if a.err == io.EOF {
			return ErrClosed
		}
		return a.err
	case stateCookieWait, stateCookieEchoed:
		return errors.New("sctp: association not established yet")
	}
	return ErrShutdown
}

// WaitAcked waits until the peer has acknowledged (Cumulative TSN Ack)
// every message SendMsg queued so far, or the association ends (its error,
// io.EOF after a graceful shutdown that delivered everything: nil then).
func (a *Association) WaitAcked(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.queued > 0 {
		if a.state == stateClosed {
			if a.err == io.EOF {
				return nil
			}
			return a.err
		}
		if err := a.wait(ctx, &a.sendSig); err != nil {
			return err
		}
	}
	return nil
}

// wait releases a.mu until s is signalled or ctx ends, then takes it
// again.
func (a *Association) wait(ctx context.Context, s *signal) error {
	w := s.wait()
	a.mu.Unlock()
	defer a.mu.Lock()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RecvMsg returns the next whole message. After a graceful shutdown it
// returns the messages still queued, then io.EOF; after an ABORT or a
// failure, the error that ended the association (an *AbortError names the
// cause). The message's octets leave the receive window as it is returned.
func (a *Association) RecvMsg(ctx context.Context) (Message, error) {
	return a.recv(ctx, true)
}

// RecvMsgHeld returns the next whole message as RecvMsg does, but its
// octets stay charged to the receive window (the a_rwnd this end
// advertises, RFC 9260 6.2) until the caller gives them back with Credit:
// for a caller that queues messages for a consumer of its own, so that a
// consumer that does not keep up closes the window on the peer's sender
// instead of growing the queue.
func (a *Association) RecvMsgHeld(ctx context.Context) (Message, error) {
	return a.recv(ctx, false)
}

func (a *Association) recv(ctx context.Context, credit bool) (Message, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.readQ) == 0 {
		if a.state == stateClosed {
			return Message{}, a.err
		}
		if a.peerShutdown {
			// The peer sent SHUTDOWN, which it does only once this end has
			// acknowledged all its data: nothing more comes (RFC 9260 9.2).
			return Message{}, io.EOF
		}
		if err := a.wait(ctx, &a.recvSig); err != nil {
			return Message{}, err
		}
	}
	m := a.readQ[0]
	a.readQ[0] = Message{}
	a.readQ = a.readQ[1:]
	if len(a.readQ) == 0 {
		a.readQ = a.readQ[:0:0]
	}
	if credit {
		a.credit(len(m.Data))
	}
	return m, nil
}

// Credit gives n octets of messages from RecvMsgHeld back to the receive
// window, once the caller's consumer has taken them; a window that opens
// again by half is advertised at once.
func (a *Association) Credit(n int) {
	if n <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.credit(n)
}

// Charge puts n octets back on the receive window: octets the caller
// credited earlier and keeps for its consumer after all. The window may
// be overdrawn (the advertised a_rwnd is then 0 until Credit).
func (a *Association) Charge(n int) {
	if n <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held += n
}

// credit takes n octets off the receive window, with a.mu held.
func (a *Association) credit(n int) {
	a.held = max(a.held-n, 0)
	// RFC 9260 6.2: tell the peer when the window opens again, so that
	// a sender stopped by it does not wait for a timeout.
	if a.state != stateClosed && a.lastAdvRwnd < a.cfg.ReceiveBuffer/2 && a.cfg.ReceiveBuffer-a.held >= a.cfg.ReceiveBuffer/2 {
		a.sackNow = true
		a.transmit()
	}
}

// Release hands the Data of a Message from RecvMsg back for reuse once the
// caller is done with it (optional: a buffer never released is garbage
// collected). The caller must not use data afterwards. Reassembling into
// recycled buffers saves a cache-cold copy per message. Release recycles
// memory only: it credits nothing to the receive window (RecvMsg has,
// or Credit does for RecvMsgHeld).
func (a *Association) Release(data []byte) { a.ep.bufs.put(data) }

// Close shuts the association down gracefully (RFC 9260 9.2): no new
// messages, everything queued is sent and acknowledged, then SHUTDOWN,
// SHUTDOWN ACK, SHUTDOWN COMPLETE. It returns when that is done, or
// aborts the association when ctx ends first. Messages already received
// stay readable with RecvMsg.
func (a *Association) Close(ctx context.Context) error {
	a.mu.Lock()
	switch a.state {
	case stateClosed:
		a.mu.Unlock()
		return nil
	case stateCookieWait, stateCookieEchoed:
		a.finish(ErrClosed)
		a.mu.Unlock()
		return nil
	case stateEstablished:
		a.state = stateShutdownPending
		a.sendSig.broadcast()
		a.checkShutdown()
	}
	a.mu.Unlock()
	select {
	case <-a.ended:
	case <-ctx.Done():
		a.Abort(UserAbort("graceful shutdown did not finish: " + ctx.Err().Error()))
		return ctx.Err()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == io.EOF {
		return nil
	}
	return a.err
}

// Abort ends the association at once with an ABORT carrying cause (RFC
// 9260 9.1); queued data is discarded. The peer's calls then return an
// *AbortError naming the cause.
func (a *Association) Abort(cause ErrorCause) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == stateClosed {
		return nil
	}
	a.abortWith(cause)
	return nil
}

// Done is closed when the association has ended; Err then says why.
func (a *Association) Done() <-chan struct{} { return a.ended }

// Err is nil while the association lives, io.EOF after a graceful
// shutdown, and the reason it ended otherwise.
func (a *Association) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state != stateClosed {
		return nil
	}
	return a.err
}

// --- state changes ---------------------------------------------------------

// abortWith sends an ABORT with cause and ends the association.
func (a *Association) abortWith(causes ...ErrorCause) {
	if a.state != stateCookieWait && a.peerTag != 0 {
		b := appendCommonHeader(a.txbuf[:0], a.localPort, a.peerPort, a.peerTag)
		b = appendCauseChunk(b, ctAbort, 0, causes)
		a.writePacket(b)
	}
	a.finish(&AbortError{Causes: causes})
}

// finish ends the association: err is io.EOF after a graceful shutdown.
func (a *Association) finish(err error) {
	if a.state == stateClosed {
		return
	}
	a.ep.log.Debug("sctp: association ended", "peer", a.key, "state", a.state, "err", err)
	a.state = stateClosed
	a.err = err
	for _, t := range []*timer{&a.t1, &a.t2, &a.t3, &a.sackTimer, &a.hbT} {
		stopTimer(t)
	}
	select {
	case <-a.established:
	default:
		close(a.established)
	}
	close(a.ended)
	a.recvSig.broadcast()
	a.sendSig.broadcast()
	a.q = nil
	a.runStart, a.runEnd = nil, nil
	a.ep.remove(a)
}

func (a *Association) becomeEstablished() {
	a.state = stateEstablished
	stopTimer(&a.t1)
	if !a.rttMeasured {
		a.rto = a.cfg.RTOInitial
	}
	a.errCount = 0
	close(a.established)
	a.startHeartbeat()
}

// checkShutdown moves a shutdown on once everything queued is
// acknowledged (RFC 9260 9.2).
func (a *Association) checkShutdown() {
	if len(a.q) != 0 {
		return
	}
	switch a.state {
	case stateShutdownPending:
		a.state = stateShutdownSent
		a.sendShutdown()
	case stateShutdownReceived:
		a.state = stateShutdownAckSent
		a.sendShutdownAck()
	}
}

func (a *Association) sendShutdown() {
	a.queueCtrl(func(b []byte) []byte { return appendShutdown(b, a.rcvCum) })
	a.sackDue = false
	a.startTimer(&a.t2, a.rto, a.t2Expired)
	a.transmit()
}

func (a *Association) sendShutdownAck() {
	a.queueCtrl(func(b []byte) []byte { return appendEmpty(b, ctShutdownAck, 0) })
	a.startTimer(&a.t2, a.rto, a.t2Expired)
	a.transmit()
}

// --- handshake (RFC 9260 5.1) -------------------------------------------

func (a *Association) sendInit() {
	ic := initChunk{
		Tag:          a.localTag,
		ARwnd:        uint32(a.cfg.ReceiveBuffer),
		OutStreams:   a.cfg.OutboundStreams,
		InStreams:    a.cfg.MaxInboundStreams,
		InitialTSN:   a.nextTSN,
		Adaptation:   a.cfg.AdaptationIndication,
		Preservative: a.preservative,
	}
	b := appendCommonHeader(a.txbuf[:0], a.localPort, a.peerPort, 0)
	b = appendInit(b, ctInit, &ic)
	a.writePacket(b)
	a.startTimer(&a.t1, a.rto, a.t1Expired)
}

func (a *Association) sendCookieEcho() {
	b := appendCommonHeader(a.txbuf[:0], a.localPort, a.peerPort, a.peerTag)
	b = appendChunk(b, ctCookieEcho, 0, a.cookie)
	if len(a.unrecognized) > 0 {
		// RFC 9260 5.1.3 / 3.3.3: unrecognized parameters of the INIT ACK
		// are reported in an ERROR bundled after the COOKIE ECHO.
		// Each TLV keeps its padding but the last (RFC 9260 3.2).
		var info []byte
		for _, u := range a.unrecognized {
			info = append(pad4(info), u[:binary.BigEndian.Uint16(u[2:])]...)
		}
		if len(b)+8+len(info) <= a.cfg.MTU {
			b = appendCauseChunk(b, ctError, 0, []ErrorCause{{Code: CauseUnrecognizedParameters, Info: info}})
		}
	}
	a.writePacket(b)
	a.startTimer(&a.t1, a.rto, a.t1Expired)
}

// t1Expired retransmits INIT or COOKIE ECHO with the RTO doubled (RFC
// 9260 5.1.6 and 6.3.3 E2), up to Max.Init.Retransmits.
func (a *Association) t1Expired() {
	a.initRetries++
	if a.initRetries > a.cfg.MaxInitRetransmissions {
		a.finish(&HandshakeError{State: a.state.String(), Reason: "no answer from the peer", Attempt: a.initRetries})
		return
	}
	a.rto = min(2*a.rto, a.cfg.RTOMax)
	switch a.state {
	case stateCookieWait:
		a.sendInit()
	case stateCookieEchoed:
		a.sendCookieEcho()
	}
}

func (a *Association) handleInitAck(c chunk) {
	if a.state != stateCookieWait {
		return // RFC 9260 5.2.3: discard in any other state
	}
	ic, err := parseInit(c)
	if err != nil {
		var mp *missingParamError
		if errors.As(err, &mp) && ic.Tag != 0 {
			a.peerTag = ic.Tag
			a.state = stateCookieEchoed // so that abortWith sends
			a.abortWith(ErrorCause{Code: CauseMissingParameter, Info: []byte{0, 0, 0, 1, 0, ptStateCookie}})
		}
		return
	}
	if ic.Tag == 0 || ic.OutStreams == 0 || ic.InStreams == 0 {
		// 3.3.3: an INIT ACK with a zero tag or stream count is refused.
		if ic.Tag != 0 {
			a.peerTag = ic.Tag
			a.state = stateCookieEchoed
			a.abortWith(ErrorCause{Code: CauseInvalidParameter})
		}
		return
	}
	a.peerTag = ic.Tag
	a.setPeer(ic.InitialTSN, ic.ARwnd, min(a.cfg.OutboundStreams, ic.InStreams), min(ic.OutStreams, a.cfg.MaxInboundStreams), copyAdaptation(ic.Adaptation))
	a.cookie = append([]byte(nil), ic.Cookie...)
	a.unrecognized = a.unrecognized[:0]
	for _, u := range ic.Unrecognized {
		a.unrecognized = append(a.unrecognized, append([]byte(nil), u...))
	}
	a.state = stateCookieEchoed
	a.initRetries = 0
	a.sendCookieEcho()
}

func copyAdaptation(p *uint32) *uint32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func (a *Association) handleCookieAck() {
	if a.state != stateCookieEchoed {
		return
	}
	a.becomeEstablished()
}

// handleStaleCookie restarts the handshake with a Cookie Preservative
// asking for the staleness twice over (RFC 9260 5.2.6).
func (a *Association) handleStaleCookie(info []byte) {
	a.staleRetries++
	if a.staleRetries > a.cfg.MaxInitRetransmissions {
		a.finish(&HandshakeError{State: a.state.String(), Reason: "the peer found every State Cookie stale (Stale Cookie Error); its cookie lifetime is shorter than the round trip", Attempt: a.staleRetries})
		return
	}
	if len(info) >= 4 {
		ms := binary.BigEndian.Uint32(info) / 1000
		a.preservative = max(2*ms, 1)
	}
	a.state = stateCookieWait
	a.peerTag = 0
	a.sendInit()
}

// cookieEchoExisting handles a COOKIE ECHO from the address of an
// existing association (RFC 9260 5.2.4).
func (a *Association) cookieEchoExisting(cs *cookieState, chunks []chunk) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case cs.LocalTag == a.localTag && cs.PeerTag == a.peerTag:
		// Case D: both tags match, the COOKIE ACK was lost (or a
		// collision came out the same). Answer it again.
		if a.state == stateCookieEchoed {
			a.becomeEstablished()
		}
	case cs.LocalTag == a.localTag && (a.state == stateCookieWait || a.state == stateCookieEchoed):
		// Case B/collision: the peer's INIT crossed ours; take its tag.
		a.peerTag = cs.PeerTag
		a.peerPort = cs.PeerPort
		a.setPeer(cs.PeerTSN, cs.PeerARwnd, cs.OutStreams, cs.InStreams, cs.PeerAdaptation)
		a.becomeEstablished()
	case cs.LocalTag != a.localTag && cs.PeerTag != a.peerTag:
		// Case A: the peer restarted. This association is gone; the
		// peer will retransmit the COOKIE ECHO and find a fresh one.
		a.finish(&AbortError{Remote: true, Causes: []ErrorCause{{Code: CauseProtocolViolation, Info: []byte("peer restarted the association")}}})
		return
	default:
		return
	}
	if a.state == stateShutdownAckSent {
		// Case D in SHUTDOWN-ACK-SENT: ERROR "Cookie Received While
		// Shutting Down" with the SHUTDOWN ACK.
		a.queueCtrl(func(b []byte) []byte {
			b = appendEmpty(b, ctShutdownAck, 0)
			return appendCauseChunk(b, ctError, 0, []ErrorCause{{Code: CauseCookieWhileShutdown}})
		})
	} else {
		a.queueCtrl(func(b []byte) []byte { return appendEmpty(b, ctCookieAck, 0) })
	}
	a.processChunks(commonHeader{VTag: a.localTag}, chunks[1:])
}

// --- timers ---------------------------------------------------------------

// startTimer (re)arms tm to call f under a.mu after d. A callback that
// finds its timer re-armed for later, or stopped, does nothing.
func (a *Association) startTimer(tm *timer, d time.Duration, f func()) {
	tm.armed = true
	tm.when = time.Now().Add(d)
	if tm.t == nil {
		tm.t = time.AfterFunc(d, func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if !tm.armed || a.state == stateClosed || time.Now().Before(tm.when) {
				return
			}
			tm.armed = false
			f()
		})
		return
	}
	tm.t.Reset(d)
}

func stopTimer(tm *timer) {
	tm.armed = false
	if tm.t != nil {
		tm.t.Stop()
	}
}

// t2Expired resends SHUTDOWN or SHUTDOWN ACK (RFC 9260 9.2).
func (a *Association) t2Expired() {
	if a.timedOut("SHUTDOWN not answered") {
		return
	}
	switch a.state {
	case stateShutdownSent:
		a.sendShutdown()
	case stateShutdownAckSent:
		a.sendShutdownAck()
	}
}

// timedOut counts one timeout against the association (RFC 9260 8.1,
// 8.3) and backs the RTO off (6.3.3 E2); past Association.Max.Retrans in a
// row the peer is unreachable: an ABORT goes out and the association ends
// with ErrPeerUnreachable (true).
func (a *Association) timedOut(what string) bool {
	a.errCount++
	if a.errCount > a.cfg.MaxRetransmissions {
		a.abortWith(UserAbort("peer unreachable: " + what))
		a.err = ErrPeerUnreachable
		return true
	}
	a.rto = min(2*a.rto, a.cfg.RTOMax)
	return false
}

// startHeartbeat arms the heartbeat timer: HB.interval plus the RTO,
// jittered by up to half the RTO either way (RFC 9260 8.3).
func (a *Association) startHeartbeat() {
	if a.cfg.HeartbeatInterval < 0 {
		return
	}
	jitter := time.Duration(randomUint32()%1001)*a.rto/1000 - a.rto/2
	a.startTimer(&a.hbT, a.cfg.HeartbeatInterval+a.rto+jitter, a.hbExpired)
}

func (a *Association) hbExpired() {
	if a.hbOutstanding {
		// No HEARTBEAT ACK within the period: an error (8.3), and the RTO
		// backs off as for a timeout.
		a.hbOutstanding = false
		if a.timedOut("heartbeats not answered") {
			return
		}
	}
	if a.dataSends == a.hbSeenSends && a.state >= stateEstablished {
		a.hbNonce = uint64(randomUint32())<<32 | uint64(randomUint32())
		var info [16]byte
		binary.BigEndian.PutUint64(info[:], a.hbNonce)
		binary.BigEndian.PutUint64(info[8:], uint64(time.Now().UnixNano()))
		a.queueCtrl(func(b []byte) []byte { return appendHeartbeat(b, ctHeartbeat, info[:]) })
		a.hbOutstanding = true
		a.stats.HeartbeatsSent++
		a.transmit()
		a.startTimer(&a.hbT, a.rto, a.hbExpired)
	} else {
		a.startHeartbeat()
	}
	a.hbSeenSends = a.dataSends
}

func (a *Association) handleHeartbeatAck(c chunk) {
	info, err := parseHeartbeat(c)
	if err != nil || len(info) != 16 || !a.hbOutstanding || binary.BigEndian.Uint64(info) != a.hbNonce {
		return
	}
	a.hbOutstanding = false
	a.stats.HeartbeatAcks++
	a.errCount = 0
	sent := time.Unix(0, int64(binary.BigEndian.Uint64(info[8:])))
	a.measureRTT(time.Since(sent))
	a.startHeartbeat()
}

// measureRTT updates SRTT, RTTVAR and RTO (RFC 9260 6.3.1 C2, C3).
func (a *Association) measureRTT(r time.Duration) {
	if r < 0 {
		return
	}
	if !a.rttMeasured {
		a.srtt = r
		a.rttvar = r / 2
		a.rttMeasured = true
	} else {
		d := a.srtt - r
		if d < 0 {
			d = -d
		}
		a.rttvar = a.rttvar - a.rttvar/4 + d/4 // beta = 1/4
		a.srtt = a.srtt - a.srtt/8 + r/8       // alpha = 1/8
	}
	// G: the clock granularity; RTTVAR is kept at least that.
	const granularity = time.Millisecond
	rto := a.srtt + max(4*a.rttvar, granularity)
	a.rto = min(max(rto, a.cfg.RTOMin), a.cfg.RTOMax)
}
