package rping

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// Provider is where a session's queue pair and buffers live: the software
// stack (Soft, iwarp/verbs) or an RNIC through the driver (Device: the
// simulated device, or the driver's model of it). The session's protocol
// is the same on each; only how a buffer is registered and a work request
// posted differs.
type Provider interface {
	// Buffer returns n octets registered for remote read and write (and
	// the local access the session's own work requests need).
	Buffer(n int) (Buffer, error)
	// Connect creates the session's queue pair with receive buffers of
	// AdvLen octets posted, runs the MPA startup on conn in role
	// (cfg.QP.MPA) and starts Full Operation. The queue pair owns conn
	// from then on, also when Connect fails.
	Connect(ctx context.Context, conn net.Conn, role mpa.Role, cfg *Config) (QP, error)
}

// Buffer is a registered buffer.
type Buffer interface {
	Bytes() []byte
	// Adv is the advertisement of the buffer's first n octets.
	Adv(n int) Adv
	// Release deregisters the buffer.
	Release() error
}

// QP is a session's queue pair.
type QP interface {
	// Params is what the MPA startup negotiated.
	Params() *mpa.Params
	// Send posts an unsignaled Send of data, at most AdvLen octets; the
	// queue pair copies them or holds data until the Send is done.
	Send(ctx context.Context, data []byte) error
	// Read posts a signaled RDMA Read of n octets from src into the
	// start of sink (the sink's bounds checked when the Read Response is
	// placed, as verbs.SendWR.SinkCheckedOnPlacement).
	Read(ctx context.Context, src Adv, sink Buffer, n int) error
	// Write posts a signaled RDMA Write of src's first n octets to dst.
	Write(ctx context.Context, dst Adv, src Buffer, n int) error
	// Next waits for the next completion: a receive (with its payload;
	// the receive buffer is posted again) or a signaled send work
	// request. A failed work request is a Completion with Err set; the
	// error is for a queue pair that can deliver nothing more (an error
	// for which errors.Is(err, ErrConnLost) when the connection ended).
	Next(ctx context.Context) (Completion, error)
	// Close ends the queue pair and its connection.
	Close() error
}

// Completion is a completed work request.
type Completion struct {
	Op   verbs.Opcode
	Data []byte // a receive's payload
	Err  error
}

// ErrConnLost matches (errors.Is) the error of a queue pair whose TCP
// connection ended: the peer closed it, or it failed.
var ErrConnLost = errors.New("rping: the connection ended")

// connLost keeps an error's message and makes it match ErrConnLost.
type connLost struct{ error }

func (c connLost) Unwrap() error        { return c.error }
func (c connLost) Is(target error) bool { return target == ErrConnLost }

// Soft returns the Provider of the software stack on pd (nil: a device
// and PD of its own).
func Soft(pd *verbs.PD) Provider {
	if pd == nil {
		pd = verbs.NewDevice().AllocPD()
	}
	return softProvider{pd}
}

type softProvider struct{ pd *verbs.PD }

type softBuffer struct {
	b  []byte
	mr *verbs.MR
}

func (s softProvider) Buffer(n int) (Buffer, error) {
	b := make([]byte, n)
	mr, err := s.pd.RegisterMR(b, verbs.RemoteRead|verbs.RemoteWrite)
	if err != nil {
		return nil, err
	}
	return &softBuffer{b, mr}, nil
}

func (b *softBuffer) Bytes() []byte  { return b.b }
func (b *softBuffer) Adv(n int) Adv  { return Adv{Addr: b.mr.Addr, STag: b.mr.STag, Len: uint32(n)} }
func (b *softBuffer) Release() error { return b.mr.Deregister() }

type softQP struct {
	qp   *verbs.QP
	recv [2][]byte
	// closer is the DDP/SCTP association of a queue pair over one, which
	// Close ends after the queue pair.
	closer io.Closer
}

func (s softProvider) Connect(ctx context.Context, conn net.Conn, role mpa.Role, cfg *Config) (QP, error) {
	q := &softQP{qp: verbs.CreateQP(s.pd, cfg.QP)}
	// rping posts one receive, re-posted as each Send arrives; a second
	// costs nothing and leaves no window without a buffer.
	for i := range q.recv {
		// A Send longer than rping's 16-octet receive buffer is refused
		// by DDP as too long, as with rping.
		q.recv[i] = make([]byte, AdvLen)
		if err := q.qp.PostRecv(uint64(i), q.recv[i]); err != nil {
			conn.Close()
			return nil, err
		}
	}
	if sc, ok := conn.(*sctpConn); ok {
		if err := establishSCTP(ctx, q, sc); err != nil {
			return nil, err
		}
		return q, nil
	}
	if err := q.qp.Establish(ctx, conn, role); err != nil {
		return nil, err
	}
	return q, nil
}

func (q *softQP) Params() *mpa.Params { return q.qp.Params() }

func (q *softQP) Send(ctx context.Context, data []byte) error {
	// The queue pair reads data until the Send completes: a copy each.
	return q.qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSend, Data: append(make([]byte, 0, len(data)), data...), Unsignaled: true})
}

func (q *softQP) Read(ctx context.Context, src Adv, sink Buffer, n int) error {
	return q.qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpRead, RemoteSTag: src.STag, RemoteTO: src.Addr,
		Sink: sink.(*softBuffer).mr, Len: uint32(n), SinkCheckedOnPlacement: true})
}

func (q *softQP) Write(ctx context.Context, dst Adv, src Buffer, n int) error {
	return q.qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpWrite, RemoteSTag: dst.STag, RemoteTO: dst.Addr, Data: src.Bytes()[:n]})
}

func (q *softQP) Next(ctx context.Context) (Completion, error) {
	select {
	case c := <-q.qp.RecvCQ().C():
		if c.Err != nil {
			return Completion{Op: verbs.OpRecv, Err: softErr(c.Err)}, nil
		}
		buf := q.recv[c.ID]
		msg := append([]byte(nil), buf[:c.Len]...)
		if err := q.qp.PostRecv(c.ID, buf); err != nil {
			return Completion{}, err
		}
		return Completion{Op: verbs.OpRecv, Data: msg}, nil
	case c := <-q.qp.SendCQ().C():
		return Completion{Op: c.Op, Err: softErr(c.Err)}, nil
	case <-q.qp.Dead():
		return Completion{}, softErr(q.qp.Err())
	case <-ctx.Done():
		return Completion{}, ctx.Err()
	}
}

func (q *softQP) Close() error {
	err := q.qp.Close()
	if q.closer != nil {
		q.closer.Close()
	}
	return err
}

// softErr makes a queue pair error that is the connection's match
// ErrConnLost.
func softErr(err error) error {
	var qe *verbs.QPError
	if errors.As(err, &qe) && qe.Conn != nil {
		return connLost{err}
	}
	return err
}
