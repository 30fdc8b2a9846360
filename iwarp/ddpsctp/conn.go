package ddpsctp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Config configures the adaptation layer on one association.
type Config struct {
	// MULPDU caps the DDP segments sent (0: derived from the path,
	// MULPDU(Association.MaxUnfragmented())). It must be at least 516.
	MULPDU int
	// MaxPending is the finite limit of Initiates waiting for the ULP's
	// decision (section 6.4, default 16): more are answered with a
	// Terminate.
	MaxPending int
	// MaxHeld bounds the octets of chunks the association's sessions
	// hold ahead of a gap in their DDP-SSNs, waiting for it to close
	// (RFC 5041 3 item 5; draft-ietf-rddp-sctp section 10). A chunk that
	// would take the association past it terminates its session with a
	// *HeldError. 0: DefaultMaxHeld; it must be at least the MULPDU.
	MaxHeld int
}

// DefaultMaxPending is Config.MaxPending's default.
const DefaultMaxPending = 16

// DefaultMaxHeld is Config.MaxHeld's default, 16 MiB. SCTP does not bound
// what the layer holds: the association hands every message over at once
// and opens its receive window again, so a peer that never sends one
// DDP-SSN and sends on past it is limited only by the 32767-chunk DDP-SSN
// window (32767 × MULPDU, 2 GiB at the loopback MULPDU). A peer that means
// well is ahead of a gap only while the chunk that fills it is lost or
// late, by no more than what it has sent and not had acknowledged: at most
// its send buffer (package sctp's SendBuffer, 4 MiB by default). Four
// times that leaves room for larger buffers on the other side.
const DefaultMaxHeld = 16 << 20

// Conn is the adaptation layer on one SCTP association: its DDP Streams
// and their sessions.
type Conn struct {
	a       Association
	fc      FlowControlled // a, when it is; else nil
	mulpdu  int
	maxHeld int
	ctx     context.Context
	cancel  context.CancelFunc

	mu      sync.Mutex
	streams map[uint16]*Session // the current or last session of each stream
	pending chan *Request
	held    int           // octets of chunks the sessions hold ahead of a gap
	queued  int           // octets of segments in DDP-SSN order waiting for Receive
	owed    int           // octets to credit (or, negative, charge) once mu is let go
	err     error         // why the reader stopped
	dead    chan struct{} // closed when it did
}

// New starts the adaptation layer on a, once SCTP's INIT and INIT-ACK are
// exchanged: it refuses (AdaptationError) an association whose peer did not
// indicate DDP (section 11.1), then reads a's messages until a fails or
// Close.
func New(a Association, cfg Config) (*Conn, error) {
	if ind, ok := a.PeerAdaptation(); !ok || ind != AdaptationDDP {
		return nil, &AdaptationError{Indication: ind, Present: ok}
	}
	m := cfg.MULPDU
	switch {
	case m == 0:
		m = MULPDU(a.MaxUnfragmented())
	case m < MinMULPDU:
		return nil, &SizeError{What: "Config.MULPDU: the least MULPDU is 516 (section 9)", Len: m, Max: MinMULPDU}
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	switch {
	case cfg.MaxHeld == 0:
		cfg.MaxHeld = DefaultMaxHeld
	case cfg.MaxHeld < m:
		return nil, fmt.Errorf("ddpsctp: Config.MaxHeld %d is less than the MULPDU %d, so not one early segment could be held: give at least %d, or 0 for the default (%d)", cfg.MaxHeld, m, m, DefaultMaxHeld)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{a: a, mulpdu: m, maxHeld: cfg.MaxHeld, ctx: ctx, cancel: cancel,
		streams: map[uint16]*Session{},
		pending: make(chan *Request, cfg.MaxPending),
		dead:    make(chan struct{}),
	}
	c.fc, _ = a.(FlowControlled)
	go c.readLoop()
	return c, nil
}

// MULPDU is the largest DDP segment Send takes (section 9).
func (c *Conn) MULPDU() int { return c.mulpdu }

// RemoteAddr is the peer's address, if the association tells (package
// sctp's does: its UDP address), else nil.
func (c *Conn) RemoteAddr() net.Addr {
	if ra, ok := c.a.(interface{ RemoteAddr() net.Addr }); ok {
		return ra.RemoteAddr()
	}
	return nil
}

// Held is how many octets of chunks the association's sessions hold ahead
// of a gap in their DDP-SSNs now (at most Config.MaxHeld).
func (c *Conn) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// Queued is how many octets of segments in DDP-SSN order wait for the
// sessions' Receive now, all sessions together. On a FlowControlled
// association they stay charged to its receive window, so they are at
// most that window, plus what was held ahead of a gap when it closed.
func (c *Conn) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queued
}

// settle credits n octets to a FlowControlled association (n < 0: charges
// them), without c.mu: SCTP may send a window update.
func (c *Conn) settle(n int) {
	switch {
	case c.fc == nil:
	case n > 0:
		c.fc.Credit(n)
	case n < 0:
		c.fc.Charge(-n)
	}
}

// Association returns the association the layer runs on.
func (c *Conn) Association() Association { return c.a }

// Close ends the association and every session on it.
func (c *Conn) Close() error {
	err := c.a.Close()
	c.cancel()
	<-c.dead
	return err
}

// Err is why the layer stopped reading the association, nil while it runs.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// FreeStream returns the lowest stream that has carried no session yet.
func (c *Conn) FreeStream() (uint16, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.a.Streams()
	for i := 0; i < n; i++ {
		if c.streams[uint16(i)] == nil {
			return uint16(i), nil
		}
	}
	return 0, fmt.Errorf("ddpsctp: all %d streams of the association have carried a session", n)
}

// Initiate starts a DDP Stream Session on stream as its active side (6.2):
// it sends the Initiate with private data pd and waits for the answer.
// It returns the session once accepted, a *RejectError for a Reject, a
// *TerminatedError for a Terminate. A stream carries one session per
// association: a stream used before is refused (StreamError).
func (c *Conn) Initiate(ctx context.Context, stream uint16, pd []byte) (*Session, error) {
	if len(pd) > MaxPrivateData {
		return nil, &SizeError{What: "Initiate private data", Len: len(pd), Max: MaxPrivateData}
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	if n := c.a.Streams(); int(stream) >= n {
		c.mu.Unlock()
		return nil, &StreamError{Stream: stream, Streams: n}
	}
	if c.streams[stream] != nil {
		c.mu.Unlock()
		return nil, &StreamError{Stream: stream, Used: true}
	}
	s := c.newSession(stream, true)
	c.mu.Unlock()
	if err := s.sendControl(ctx, FuncInitiate, pd); err != nil {
		s.abort(err)
		return nil, err
	}
	select {
	case <-s.answered:
	case <-ctx.Done():
		// The session ends here; its Terminate may be sent only once
		// the Initiate cannot be overtaken (6.6).
		s.abort(ctx.Err())
		go s.Close(c.ctx)
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	return s, nil
}

// Request is a peer's DDP Stream Session Initiate waiting for the ULP's
// decision.
type Request struct {
	s  *Session
	pd []byte
}

// Stream is the DDP Stream the peer asks for.
func (r *Request) Stream() uint16 { return r.s.stream }

// PrivateData is the Initiate's private data.
func (r *Request) PrivateData() []byte { return r.pd }

// Accept accepts the session with private data pd (6.2).
func (r *Request) Accept(ctx context.Context, pd []byte) (*Session, error) {
	if len(pd) > MaxPrivateData {
		return nil, &SizeError{What: "Accept private data", Len: len(pd), Max: MaxPrivateData}
	}
	s := r.s
	s.conn.mu.Lock()
	if err := s.err; err != nil {
		// The layer terminated the session while it waited for the ULP
		// (a chunk that broke section 6 or 10, the bound on held
		// octets): say why rather than that it is closed.
		s.conn.mu.Unlock()
		return nil, err
	}
	s.opened = true
	s.conn.mu.Unlock()
	if err := s.sendControl(ctx, FuncAccept, pd); err != nil {
		s.abort(err)
		return nil, err
	}
	return s, nil
}

// Reject rejects the session with private data pd (6.3); only the ULP
// rejects (a Reject is never sent on the layer's own account).
func (r *Request) Reject(ctx context.Context, pd []byte) error {
	if len(pd) > MaxPrivateData {
		return &SizeError{What: "Reject private data", Len: len(pd), Max: MaxPrivateData}
	}
	s := r.s
	err := s.sendControl(ctx, FuncReject, pd)
	s.conn.mu.Lock()
	s.localFinal = true
	s.rxFinal = true // the Initiate was the active side's only message (6.3)
	s.setErr(ErrClosed)
	s.conn.mu.Unlock()
	return err
}

// Listen waits for the next session a peer initiates.
func (c *Conn) Listen(ctx context.Context) (*Request, error) {
	select {
	case r := <-c.pending:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.dead:
		select {
		case r := <-c.pending:
			return r, nil
		default:
		}
		return nil, c.Err()
	}
}

// readLoop hands every message of the association to its stream.
func (c *Conn) readLoop() {
	defer close(c.dead)
	for {
		m, err := c.a.Receive(c.ctx)
		if err != nil {
			switch {
			case c.ctx.Err() != nil:
				err = ErrClosed
			case errors.Is(err, io.EOF):
				// Not the session's graceful end, which is the
				// peer's Terminate.
				err = ErrAssociationEnded
			default:
				err = fmt.Errorf("ddpsctp: the association failed: %w", err)
			}
			c.mu.Lock()
			c.err = err
			for _, s := range c.streams {
				s.setErr(c.err)
			}
			c.mu.Unlock()
			return
		}
		c.handle(m)
	}
}

// handle runs one received message through its stream's session. The
// message comes charged to the receive window of a FlowControlled
// association: it is credited back at once unless it joins a session's
// queue for Receive (Session.step), and a chunk held ahead of a gap is
// charged again when it joins the queue.
func (c *Conn) handle(m Message) {
	p, perr := ParsePayload(m.PPID, m.Data)
	if p.PPID == PPIDSegment {
		p.raw = m.Data
	}
	if perr == nil && !m.Unordered {
		perr = &FormatError{PPID: m.PPID, Detail: "an ordered DATA chunk; the adaptation layer uses unordered chunks only (section 10)"}
	}
	c.mu.Lock()
	c.owed += len(m.Data)
	c.dispatch(m, p, perr)
	owed := c.owed
	c.owed = 0
	c.mu.Unlock()
	c.settle(owed)
}

// dispatch hands a received message to its stream's session, with c.mu
// held.
func (c *Conn) dispatch(m Message, p Payload, perr error) {
	s := c.streams[m.Stream]
	if s == nil || s.reusable() {
		if perr == nil && p.PPID == PPIDControl && p.Func == FuncInitiate && p.SSN == 0 {
			c.initiated(m.Stream, p.PrivateData)
			return
		}
		// Nothing but an Initiate starts a session (6.2): refuse the
		// stream with a Terminate.
		s = c.newSession(m.Stream, false)
		s.rxNext = 1
		if perr == nil {
			perr = fmt.Errorf("a %s on a stream without a session; a session starts with an Initiate at DDP-SSN 0 (section 6.2)", p.describe())
		}
		s.violate(p.SSN, perr)
		return
	}
	if perr != nil {
		s.violate(p.SSN, perr)
		return
	}
	s.receive(p)
}

// initiated records a peer's Initiate on stream, with c.mu held: a Request
// for the ULP, or a Terminate when too many wait (6.4).
func (c *Conn) initiated(stream uint16, pd []byte) {
	s := c.newSession(stream, false)
	s.rxNext = 1
	r := &Request{s: s, pd: pd}
	select {
	case c.pending <- r:
	default:
		s.rxFinal = true
		s.setErr(ErrClosed)
		go s.sendTerminate(c.ctx)
	}
}

// newSession makes stream's session, with c.mu held.
func (c *Conn) newSession(stream uint16, active bool) *Session {
	s := &Session{conn: c, stream: stream, active: active,
		held:     map[uint16]Payload{},
		answered: make(chan struct{}),
		wake:     make(chan struct{}, 1),
	}
	c.streams[stream] = s
	return s
}

func (p *Payload) describe() string {
	if p.PPID == PPIDControl {
		return p.Func.String()
	}
	return "DDP Segment Chunk"
}
