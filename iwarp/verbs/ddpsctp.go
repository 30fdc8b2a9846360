package verbs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/openrnic/rnic/iwarp/ddpsctp"
	"github.com/openrnic/rnic/iwarp/mpa"
)

// Queue pairs over DDP/SCTP (package ddpsctp): the same DDP placement and
// RDMAP as over MPA, with each DDP segment one DDP Segment Chunk of a DDP
// Stream Session. The session's private data starts with the queue pair's
// IRD and ORD as two 16-bit numbers (the layout of RFC 6581 3, without its
// flags: no RTR is needed, as the Accept itself tells the active side the
// passive one is ready), followed by the consumer's private data
// (QPConfig.MPA.PrivateData, at most 508 octets). Params then holds the
// Role, IRD, ORD and both sides' private data; the MPA-only fields are
// zero.

// sessionParamsLen is the IRD/ORD prefix of the session's private data.
const sessionParamsLen = 4

// MaxSessionPrivateData is the consumer's private data a session carries.
const MaxSessionPrivateData = ddpsctp.MaxPrivateData - sessionParamsLen

func sessionPD(cfg *mpa.Config) ([]byte, error) {
	if len(cfg.PrivateData) > MaxSessionPrivateData {
		return nil, fmt.Errorf("qp: %d octets of private data; a DDP Stream Session carries at most %d beside the IRD and ORD", len(cfg.PrivateData), MaxSessionPrivateData)
	}
	b := binary.BigEndian.AppendUint16(nil, min(cfg.IRD, mpa.MaxIRD))
	b = binary.BigEndian.AppendUint16(b, min(cfg.ORD, mpa.MaxIRD))
	return append(b, cfg.PrivateData...), nil
}

// parseSessionPD splits the peer's session private data.
func parseSessionPD(b []byte) (ird, ord uint16, pd []byte, err error) {
	if len(b) < sessionParamsLen {
		return 0, 0, nil, fmt.Errorf("qp: the peer's session private data has %d octets, too short for its IRD and ORD (4): is it a verbs queue pair over DDP/SCTP?", len(b))
	}
	return binary.BigEndian.Uint16(b) & mpa.MaxIRD, binary.BigEndian.Uint16(b[2:]) & mpa.MaxIRD, b[sessionParamsLen:], nil
}

// InitiateSession creates a queue pair and runs it on a new DDP Stream
// Session on stream of c, as the session's active side (Initiate, then the
// peer's Accept). A Reject comes back as *ddpsctp.RejectError.
func InitiateSession(ctx context.Context, pd *PD, c *ddpsctp.Conn, stream uint16, cfg QPConfig) (*QP, error) {
	qp := CreateQP(pd, cfg)
	if err := qp.EstablishSession(ctx, c, stream); err != nil {
		return nil, err
	}
	return qp, nil
}

// AcceptSession creates a queue pair and runs it on the session r asks
// for, as its passive side. QPConfig.MPA.Accept, if set, decides: a reject
// sends the session Reject with the reply as private data, and
// AcceptSession returns a *mpa.RejectError.
func AcceptSession(ctx context.Context, pd *PD, r *ddpsctp.Request, cfg QPConfig) (*QP, error) {
	qp := CreateQP(pd, cfg)
	if err := qp.EstablishRequest(ctx, r); err != nil {
		return nil, err
	}
	return qp, nil
}

// EstablishSession starts Full Operation on a new DDP Stream Session on
// stream of c, as its active side: the DDP/SCTP counterpart of Establish
// as MPA Initiator.
func (qp *QP) EstablishSession(ctx context.Context, c *ddpsctp.Conn, stream uint16) error {
	spd, err := sessionPD(&qp.cfg.MPA)
	if err != nil {
		return err
	}
	if err := qp.claim(); err != nil {
		return err
	}
	s, err := c.Initiate(ctx, stream, spd)
	if err != nil {
		qp.unclaim()
		return err
	}
	ird, ord, peerPD, err := parseSessionPD(s.PeerPrivateData())
	if err != nil {
		s.CloseRead() // nothing will read it: its segments must not hold the window
		s.Close(ctx)
		qp.unclaim()
		return err
	}
	p := &mpa.Params{Role: mpa.Initiator, IRD: qp.cfg.MPA.IRD, ORD: min(qp.cfg.MPA.ORD, ird),
		Local: mpa.StartupFrame{PrivateData: qp.cfg.MPA.PrivateData},
		Peer:  mpa.StartupFrame{Reply: true, Params: mpa.EnhancedParams{IRD: ird, ORD: ord}, PrivateData: peerPD}}
	return qp.startSession(s, p)
}

// EstablishRequest starts Full Operation on the session r asks for, as its
// passive side: the DDP/SCTP counterpart of Establish as MPA Responder,
// with QPConfig.MPA.Accept deciding as there.
func (qp *QP) EstablishRequest(ctx context.Context, r *ddpsctp.Request) error {
	ird, ord, peerPD, err := parseSessionPD(r.PrivateData())
	if err != nil {
		r.Reject(ctx, nil)
		return err
	}
	peer := mpa.StartupFrame{Params: mpa.EnhancedParams{IRD: ird, ORD: ord}, PrivateData: peerPD}
	if acc := qp.cfg.MPA.Accept; acc != nil {
		reply, reject := acc(&peer)
		if reject {
			if len(reply) > MaxSessionPrivateData {
				reply = reply[:MaxSessionPrivateData]
			}
			if err := r.Reject(ctx, reply); err != nil {
				return err
			}
			return &mpa.RejectError{Reply: mpa.StartupFrame{Reply: true, Reject: true, PrivateData: reply}}
		}
		qp.cfg.MPA.PrivateData = reply
	}
	spd, err := sessionPD(&qp.cfg.MPA)
	if err != nil {
		r.Reject(ctx, nil)
		return err
	}
	if err := qp.claim(); err != nil {
		return err
	}
	s, err := r.Accept(ctx, spd)
	if err != nil {
		qp.unclaim()
		return err
	}
	p := &mpa.Params{Role: mpa.Responder, IRD: qp.cfg.MPA.IRD, ORD: min(qp.cfg.MPA.ORD, ird),
		Local: mpa.StartupFrame{Reply: true, PrivateData: qp.cfg.MPA.PrivateData}, Peer: peer}
	return qp.startSession(s, p)
}

// claim marks the queue pair as being established, so that a second
// Establish fails.
func (qp *QP) claim() error {
	qp.mu.Lock()
	defer qp.mu.Unlock()
	switch {
	case qp.closed:
		return ErrQPClosed
	case qp.established || qp.ll != nil:
		return errors.New("qp: already established")
	}
	qp.established = true
	return nil
}

func (qp *QP) unclaim() {
	qp.mu.Lock()
	qp.established = false
	qp.mu.Unlock()
}

// startSession starts Full Operation on session s.
func (qp *QP) startSession(s *ddpsctp.Session, p *mpa.Params) error {
	qp.mu.Lock()
	if qp.closed {
		qp.mu.Unlock()
		s.CloseRead()
		s.Close(context.Background())
		return ErrQPClosed
	}
	qp.params, qp.emss = p, s.MULPDU()
	l := &sctpLayer{s: s, deliver: qp.onULPDU}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	// Either side may send at once: the passive side's segments follow
	// its Accept in DDP-SSN order, and the active side has the Accept.
	qp.start(l, false)
	return nil
}

// Session returns the DDP Stream Session under a queue pair over DDP/SCTP
// (nil over MPA).
func (qp *QP) Session() *ddpsctp.Session {
	qp.mu.Lock()
	defer qp.mu.Unlock()
	if l, ok := qp.ll.(*sctpLayer); ok {
		return l.s
	}
	return nil
}

// sctpLayer carries a queue pair's DDP segments as DDP Segment Chunks of
// one DDP Stream Session.
type sctpLayer struct {
	s         *ddpsctp.Session
	ctx       context.Context // ends when the queue pair tears the session down
	cancel    context.CancelFunc
	closeOnce sync.Once
	written   int64 // octets handed to SCTP since the last write: DDP-SSN and segment
	deliver   func(seq uint32, ulpdu []byte) error
}

func (l *sctpLayer) mulpdu() int     { return l.s.MULPDU() }
func (l *sctpLayer) full(n int) bool { return false }

// queue sends the segment at once: SCTP copies it, and bundles and
// batches on its own.
func (l *sctpLayer) queue(hdr, payload []byte, owned bool) error {
	if err := l.s.SendParts(l.ctx, hdr, payload); err != nil {
		return err
	}
	l.written += int64(ddpsctp.SSNLen + len(hdr) + len(payload))
	return nil
}

func (l *sctpLayer) write() (int64, error) {
	n := l.written
	l.written = 0
	return n, nil
}

func (l *sctpLayer) receive(read func(int)) (error, error) {
	var ferr error
	err := l.s.ReceiveFunc(l.ctx, func(seg []byte) error {
		read(ddpsctp.SSNLen + len(seg))
		ferr = l.deliver(0, seg)
		return nil
	})
	if err != nil {
		if ddpsctp.IsDeadline(err) {
			err = os.ErrDeadlineExceeded
		}
		return nil, err
	}
	return ferr, nil
}

func (l *sctpLayer) setReadDeadline(t time.Time) error { return l.s.SetReadDeadline(t) }

// drain waits up to d for the peer's Terminate, discarding segments, so
// that our Terminate has reached it, then ends the session.
func (l *sctpLayer) drain(d time.Duration) {
	ctx, cancel := context.WithTimeout(l.ctx, d)
	defer cancel()
	for {
		if _, err := l.s.Receive(ctx); err != nil {
			break
		}
	}
	l.close()
}

// closeWrite sends the session's Terminate after what was sent (section
// 6.2: each side's final chunk may be a Terminate).
func (l *sctpLayer) closeWrite() {
	ctx, cancel := context.WithTimeout(l.ctx, DefaultCloseTimeout)
	defer cancel()
	l.s.Close(ctx)
}

// close ends the session here, as closing a TCP socket does: a blocked
// receive returns, the segments the queue pair will not read give their
// octets back to the association's receive window (which the other
// sessions of the association share), and the peer gets our Terminate if
// it has not had it.
func (l *sctpLayer) close() error {
	l.closeOnce.Do(func() {
		l.s.SetReadDeadline(time.Unix(1, 0))
		l.s.CloseRead()
		go func() {
			l.closeWrite()
			l.cancel()
		}()
	})
	return nil
}

// lost: the session ended without the peer's Terminate, or with it (EOF).
func (l *sctpLayer) lost(err error) error {
	if errors.Is(err, io.EOF) {
		return &SessionError{Stream: l.s.Stream(), Err: errors.New("the peer terminated the DDP Stream Session")}
	}
	return &SessionError{Stream: l.s.Stream(), Err: err}
}

// SessionError is the end of the DDP Stream Session under a queue pair over
// DDP/SCTP (in QPError.Conn).
type SessionError struct {
	Stream uint16
	Err    error
}

func (e *SessionError) Error() string {
	return fmt.Sprintf("DDP Stream Session on stream %d: %v", e.Stream, e.Err)
}

func (e *SessionError) Unwrap() error { return e.Err }
