package ddpsctp

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// Session is one DDP Stream Session (section 6) on a DDP Stream: the pair
// of SCTP streams numbered Stream. Send and Receive may run at the same
// time; Send is not for concurrent use with itself.
type Session struct {
	conn   *Conn
	stream uint16
	active bool

	// The transmit side: txMu orders sends and their DDP-SSNs.
	txMu     sync.Mutex
	txSSN    uint16 // next DDP-SSN to send (6.1: from 0, no gaps)
	unacked  int    // chunks sent since the last WaitAcked
	txClosed bool   // our Terminate is sent (or Reject)
	txBuf    []byte // the chunk payload being sent

	// The rest is guarded by conn.mu.
	opened     bool // Accept sent or received: segments may flow
	sentCtrl   bool // we sent a Session Control message
	peerPD     []byte
	localFinal bool // our final control message (Terminate, Reject) is queued
	rxFinal    bool // the peer's final message (Terminate, Reject, or an Initiate answered with Terminate) is in
	rxNext     uint16
	held       map[uint16]Payload // arrived ahead of rxNext (section 10)
	ready      []Payload          // segments in DDP-SSN order, for Receive
	readClosed bool               // CloseRead: the ULP takes nothing more
	err        error
	answered   chan struct{} // active side: closed when the Initiate is answered
	answerOnce sync.Once
	wake       chan struct{} // signalled on every change Receive waits for
	deadline   time.Time
	timer      *time.Timer
}

// Stream is the session's DDP Stream: the SCTP stream number of both
// directions.
func (s *Session) Stream() uint16 { return s.stream }

// Active reports whether this side sent the Initiate.
func (s *Session) Active() bool { return s.active }

// PeerPrivateData is the private data of the peer's Accept (active side).
func (s *Session) PeerPrivateData() []byte {
	s.conn.mu.Lock()
	defer s.conn.mu.Unlock()
	return s.peerPD
}

// MULPDU is the largest segment Send takes.
func (s *Session) MULPDU() int { return s.conn.mulpdu }

// Send sends one DDP segment as a DDP Segment Chunk. It refuses a segment
// larger than the MULPDU (section 9).
func (s *Session) Send(ctx context.Context, seg []byte) error { return s.SendParts(ctx, seg, nil) }

// SendParts sends the DDP segment made of hdr and then payload, as Send
// does, without the caller putting them together first.
func (s *Session) SendParts(ctx context.Context, hdr, payload []byte) error {
	if n := len(hdr) + len(payload); n > s.conn.mulpdu {
		return &SizeError{What: "DDP segment", Len: n, Max: s.conn.mulpdu}
	}
	s.conn.mu.Lock()
	err := s.err
	if err == nil && !s.opened {
		err = fmt.Errorf("ddpsctp: stream %d: no DDP segment before the session is accepted (section 6.6)", s.stream)
	}
	if err == nil && s.localFinal {
		err = ErrClosed
	}
	s.conn.mu.Unlock()
	if err != nil {
		return err
	}
	p := Segment(0, hdr)
	return s.send(ctx, &p, payload)
}

// send assigns p the next DDP-SSN and hands it, followed by tail (the rest
// of a segment), to SCTP.
func (s *Session) send(ctx context.Context, p *Payload, tail []byte) error {
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if s.txClosed {
		return ErrClosed
	}
	// Section 10: never more than 32767 chunks of a stream without
	// acknowledgment, whatever SCTP accepts.
	if s.unacked >= MaxInFlight {
		if err := s.conn.a.WaitAcked(ctx); err != nil {
			return err
		}
		s.unacked = 0
	}
	p.SSN = s.txSSN
	b, err := p.Append(s.txBuf[:0])
	if err != nil {
		return err
	}
	b = append(b, tail...)
	s.txBuf = b // SCTP copies what it keeps: the buffer serves the next chunk
	if err := s.conn.a.SendUnordered(ctx, s.stream, p.PPID, b); err != nil {
		return err
	}
	s.txSSN++
	s.unacked++
	if p.PPID == PPIDControl && (p.Func == FuncTerminate || p.Func == FuncReject) {
		s.txClosed = true
	}
	return nil
}

// sendControl sends the Session Control message f.
func (s *Session) sendControl(ctx context.Context, f FunctionCode, pd []byte) error {
	s.conn.mu.Lock()
	s.sentCtrl = true
	s.conn.mu.Unlock()
	p := Control(0, f, pd)
	return s.send(ctx, &p, nil)
}

// confirmed reports, with conn.mu held, whether the peer has shown that it
// received our last Session Control message: the active side's Initiate
// once answered, the passive side's Accept once a chunk after the
// Initiate came.
func (s *Session) confirmed() bool {
	if !s.sentCtrl {
		return true
	}
	if s.active {
		return s.rxNext >= 1
	}
	return s.rxNext >= 2
}

// sendTerminate sends this side's Terminate, once, after making sure it
// cannot overtake our previous Session Control message (6.6).
func (s *Session) sendTerminate(ctx context.Context) error {
	s.conn.mu.Lock()
	wait := !s.confirmed()
	s.localFinal = true
	s.conn.mu.Unlock()
	if wait {
		if err := s.conn.a.WaitAcked(ctx); err != nil {
			return err
		}
	}
	err := s.sendControl(ctx, FuncTerminate, nil)
	if err == ErrClosed {
		return nil // already sent
	}
	return err
}

// Close ends the session gracefully: this side's Terminate goes after
// everything sent (6.2: the final chunk of each side may be a Terminate).
// Receive still returns what the peer sends until its own Terminate.
func (s *Session) Close(ctx context.Context) error {
	s.conn.mu.Lock()
	sendIt := !s.txDone()
	s.conn.mu.Unlock()
	if !sendIt {
		return nil
	}
	return s.sendTerminate(ctx)
}

// txDone reports, with conn.mu held, whether this side sends nothing more.
func (s *Session) txDone() bool {
	if s.localFinal {
		return true
	}
	// An active side whose Initiate was never answered sends a Terminate
	// (once safe); a rejected or refused one sends nothing more.
	return s.active && s.rxFinal && !s.opened
}

// reusable reports, with conn.mu held, whether the stream's session is
// over in both directions, so that a peer may start a new one on it.
func (s *Session) reusable() bool { return s.txDone() && s.rxFinal && len(s.held) == 0 }

// Receive returns the next DDP segment in DDP-SSN order: io.EOF after the
// peer's Terminate, or the error that ended the session (ErrClosed after
// CloseRead). Until Receive or ReceiveFunc takes a segment its octets
// stay charged to the association's receive window (FlowControlled).
func (s *Session) Receive(ctx context.Context) ([]byte, error) {
	p, err := s.next(ctx)
	return p.Segment, err
}

// ReceiveFunc hands the next DDP segment to fn, as Receive would return
// it, and returns fn's error. The segment is valid only during fn: its
// buffer then goes back to the association for reuse (when it takes them
// back, as package sctp's does), which saves SCTP a fresh buffer per
// message.
func (s *Session) ReceiveFunc(ctx context.Context, fn func(seg []byte) error) error {
	p, err := s.next(ctx)
	if err != nil {
		return err
	}
	err = fn(p.Segment)
	if r, ok := s.conn.a.(interface{ Release([]byte) }); ok && p.raw != nil {
		r.Release(p.raw)
	}
	return err
}

// next waits for the next segment.
func (s *Session) next(ctx context.Context) (Payload, error) {
	for {
		s.conn.mu.Lock()
		if len(s.ready) > 0 {
			p := s.ready[0]
			s.ready[0] = Payload{}
			s.ready = s.ready[1:]
			s.conn.queued -= p.Len()
			s.conn.mu.Unlock()
			// The ULP has it: its octets go back to the receive window.
			s.conn.settle(p.Len())
			return p, nil
		}
		err := s.err
		if s.readClosed {
			err = ErrClosed
		}
		if err == nil && s.rxFinal {
			err = io.EOF
		}
		if err == nil && !s.deadline.IsZero() && !time.Now().Before(s.deadline) {
			err = errDeadline
		}
		s.conn.mu.Unlock()
		if err != nil {
			return Payload{}, err
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return Payload{}, ctx.Err()
		}
	}
}

// CloseRead tells the layer that the ULP takes nothing more from the
// session: the segments waiting for Receive, and those that arrive later,
// are dropped and their octets given back to the association's receive
// window at once, so that a session nobody reads does not hold the window
// shut on the association's other sessions. The session's checks still
// run on what arrives (sections 6 and 10), and its sending side is not
// affected (Close sends the Terminate). Receive returns ErrClosed from
// then on.
func (s *Session) CloseRead() {
	s.conn.mu.Lock()
	s.readClosed = true
	n := 0
	for i := range s.ready {
		n += s.ready[i].Len()
		s.conn.release(&s.ready[i])
		s.ready[i] = Payload{}
	}
	s.ready = nil
	s.conn.queued -= n
	s.signal()
	s.conn.mu.Unlock()
	s.conn.settle(n)
}

// errDeadline is Receive's error past the read deadline.
var errDeadline = fmt.Errorf("ddpsctp: read deadline: %w", deadlineExceeded{})

type deadlineExceeded struct{}

func (deadlineExceeded) Error() string { return "i/o timeout" }
func (deadlineExceeded) Timeout() bool { return true }

// IsDeadline reports whether err is Receive's error past its read deadline.
func IsDeadline(err error) bool { return err == errDeadline }

// SetReadDeadline makes a Receive blocked at t return an error that
// IsDeadline recognises (zero: no deadline), as net.Conn's does.
func (s *Session) SetReadDeadline(t time.Time) error {
	s.conn.mu.Lock()
	defer s.conn.mu.Unlock()
	s.deadline = t
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if !t.IsZero() {
		s.timer = time.AfterFunc(time.Until(t), s.signal)
	}
	s.signal()
	return nil
}

// Err is the error that ended the session, nil while it runs.
func (s *Session) Err() error {
	s.conn.mu.Lock()
	defer s.conn.mu.Unlock()
	return s.err
}

func (s *Session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Session) answer() { s.answerOnce.Do(func() { close(s.answered) }) }

// setErr ends the session with err, with conn.mu held.
func (s *Session) setErr(err error) {
	if s.err == nil {
		s.err = err
	}
	s.dropHeld()
	s.answer()
	s.signal()
}

// dropHeld frees the chunks held for a session that has ended, with
// conn.mu held: none of them will be taken.
func (s *Session) dropHeld() {
	for ssn, p := range s.held {
		s.conn.unhold(&p)
		delete(s.held, ssn)
	}
}

// unhold takes p off the association's held octets and gives its buffer
// back, with c.mu held.
func (c *Conn) unhold(p *Payload) {
	c.held -= p.Len()
	c.release(p)
}

// release gives a chunk's buffer back to the association, for a chunk
// that will not be handed to DDP.
func (c *Conn) release(p *Payload) {
	if r, ok := c.a.(interface{ Release([]byte) }); ok && p.raw != nil {
		r.Release(p.raw)
	}
}

// abort ends the session with err from the local side.
func (s *Session) abort(err error) {
	s.conn.mu.Lock()
	s.setErr(err)
	s.conn.mu.Unlock()
}

// violate terminates the session for a chunk at ssn that breaks section 6
// or 10, with conn.mu held.
func (s *Session) violate(ssn uint16, err error) {
	s.terminate(&SequenceError{Stream: s.stream, SSN: ssn, Detail: err.Error()})
}

// terminate ends the session with err on this side's account, with
// conn.mu held: the layer's Terminate goes to the peer (6.1).
func (s *Session) terminate(err error) {
	if s.err == nil {
		s.err = err
	}
	s.dropHeld()
	s.answer()
	s.signal()
	if !s.txDone() {
		s.localFinal = true
		go s.sendTerminate(s.conn.ctx)
	}
}

// receive takes one chunk of the session, with conn.mu held: the DDP-SSN
// validity check (section 10), then the chunks now in DDP-SSN order
// through the legal sequences (section 6).
func (s *Session) receive(p Payload) {
	if s.err != nil {
		// The session is over: late chunks are dropped, and nothing is
		// held for it any more.
		s.conn.release(&p)
		return
	}
	ahead := p.SSN - s.rxNext
	if _, dup := s.held[p.SSN]; dup || ahead >= MaxInFlight {
		what := "a duplicate"
		if !dup {
			what = fmt.Sprintf("outside the window: %d expected next, at most %d chunks may be outstanding", s.rxNext, MaxInFlight)
		}
		s.violate(p.SSN, fmt.Errorf("DDP-SSN validity check failed: %s (section 10)", what))
		return
	}
	if s.rxFinal {
		s.violate(p.SSN, fmt.Errorf("a %s after the peer's final message", p.describe()))
		return
	}
	n := p.Len()
	if ahead > 0 && s.conn.held+n > s.conn.maxHeld {
		// Nothing in SCTP bounds this: the association's receive window
		// opened again when it handed the chunks over.
		s.terminate(&HeldError{Stream: s.stream, SSN: p.SSN, Next: s.rxNext, Octets: n, Held: s.conn.held, Limit: s.conn.maxHeld})
		s.conn.release(&p)
		return
	}
	s.held[p.SSN] = p
	s.conn.held += n
	for {
		q, ok := s.held[s.rxNext]
		if !ok || s.err != nil {
			return
		}
		delete(s.held, s.rxNext)
		s.conn.held -= q.Len()
		if err := s.step(&q); err != nil {
			s.violate(q.SSN, err)
			return
		}
		s.rxNext++
	}
}

// step applies the next chunk in DDP-SSN order to the session.
func (s *Session) step(p *Payload) error {
	if s.active && p.SSN == 0 {
		// 6.2 to 6.4: the passive side's first message answers the
		// Initiate.
		if p.PPID != PPIDControl || p.Func == FuncInitiate {
			return fmt.Errorf("a %s answering our Initiate; the answer is an Accept, Reject or Terminate (sections 6.2 to 6.4)", p.describe())
		}
		switch p.Func {
		case FuncAccept:
			s.opened = true
			s.peerPD = p.PrivateData
		case FuncReject:
			s.rxFinal = true
			s.err = &RejectError{Stream: s.stream, PrivateData: p.PrivateData}
		case FuncTerminate:
			s.rxFinal = true
			s.err = &TerminatedError{Stream: s.stream}
		}
		s.answer()
		s.signal()
		return nil
	}
	// The active side sends nothing before the Accept (6.6) but a
	// Terminate: an Initiate it abandoned, its direction then being
	// Initiate and Terminate (6.2). The ULP still answers; the session
	// then ends at once.
	withdrawn := !s.active && p.PPID == PPIDControl && p.Func == FuncTerminate
	if !s.opened && !withdrawn {
		return fmt.Errorf("a %s before the session was accepted (section 6.6)", p.describe())
	}
	if p.PPID == PPIDSegment {
		if s.readClosed {
			s.conn.release(p) // credited with the message (Conn.handle)
			return nil
		}
		// It waits for Receive charged to the receive window, whether
		// it just came or was held ahead of a gap (and credited then).
		s.ready = append(s.ready, *p)
		s.conn.queued += p.Len()
		s.conn.owed -= p.Len()
		s.signal()
		return nil
	}
	if p.Func != FuncTerminate {
		return fmt.Errorf("a %s inside an accepted session; only DDP segments and a final Terminate may follow the Accept (section 6.2)", p.describe())
	}
	if len(s.held) > 0 {
		return fmt.Errorf("the peer's Terminate is followed by %d more chunks (section 6.2: it is the final one)", len(s.held))
	}
	s.rxFinal = true
	s.signal()
	return nil
}
