package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// A bench end is where one side of a device bench (bench --device or
// --peer-device) keeps its queue pair and buffers: the software stack
// (iwarp/verbs) or an RNIC through the driver (the simulated device, or
// the driver's model of it). It has the shape of rping's Provider
// (rping/provider.go), with what a bench needs and rping does not: work
// requests of any size at any offset of a buffer, receives of any size,
// and each completion's ID and length.
type benchEnd interface {
	// buffer returns n octets registered for local and remote access.
	buffer(n int) (benchBuf, error)
	// connect creates the queue pair (sq work requests, rq receives at
	// most), runs the MPA startup on conn in role and starts Full
	// Operation. The queue pair owns conn from then on, also on failure.
	connect(ctx context.Context, conn net.Conn, role mpa.Role, cfg mpa.Config, sq, rq int, perFPDU bool) (benchQP, error)
}

type benchBuf interface {
	bytes() []byte
	// region is the buffer's advertisement: its STag and the tagged
	// offset of its first octet.
	region() benchRegion
}

// benchQP is a queue pair of a bench end. Every work request is signaled.
type benchQP interface {
	params() *mpa.Params
	send(id uint64, b benchBuf, off, n int) error
	write(id uint64, dst benchRegion, off uint64, b benchBuf, boff, n int) error
	read(id uint64, src benchRegion, off uint64, b benchBuf, boff, n int) error
	recv(id uint64, b benchBuf, off, n int) error
	// next waits for the next completion; a failed work request is one
	// with err set.
	next(ctx context.Context) (benchCQE, error)
	close() error
}

type benchCQE struct {
	id  uint64
	op  verbs.Opcode
	n   int
	err error
}

// --- the software stack -----------------------------------------------------

type softEnd struct{ pd *verbs.PD }

type softBuf struct {
	b  []byte
	mr *verbs.MR
}

func (s softEnd) buffer(n int) (benchBuf, error) {
	b := make([]byte, n)
	mr, err := s.pd.RegisterMR(b, verbs.RemoteRead|verbs.RemoteWrite)
	if err != nil {
		return nil, err
	}
	return &softBuf{b, mr}, nil
}

func (b *softBuf) bytes() []byte { return b.b }
func (b *softBuf) region() benchRegion {
	return benchRegion{STag: b.mr.STag, Addr: b.mr.Addr, Len: uint64(len(b.b))}
}

type softBenchQP struct{ qp *verbs.QP }

func (s softEnd) connect(ctx context.Context, conn net.Conn, role mpa.Role, cfg mpa.Config, sq, rq int, perFPDU bool) (benchQP, error) {
	qp := verbs.CreateQP(s.pd, verbs.QPConfig{MPA: cfg, SendDepth: sq, WritePerFPDU: perFPDU})
	if err := qp.Establish(ctx, conn, role); err != nil {
		return nil, err
	}
	return &softBenchQP{qp}, nil
}

func (q *softBenchQP) params() *mpa.Params { return q.qp.Params() }

func (q *softBenchQP) send(id uint64, b benchBuf, off, n int) error {
	return q.qp.PostSend(context.Background(), verbs.SendWR{ID: id, Op: verbs.OpSend, Data: b.bytes()[off : off+n]})
}

func (q *softBenchQP) write(id uint64, dst benchRegion, off uint64, b benchBuf, boff, n int) error {
	return q.qp.PostSend(context.Background(), verbs.SendWR{ID: id, Op: verbs.OpWrite, RemoteSTag: dst.STag, RemoteTO: dst.Addr + off,
		Data: b.bytes()[boff : boff+n]})
}

func (q *softBenchQP) read(id uint64, src benchRegion, off uint64, b benchBuf, boff, n int) error {
	return q.qp.PostSend(context.Background(), verbs.SendWR{ID: id, Op: verbs.OpRead, RemoteSTag: src.STag, RemoteTO: src.Addr + off,
		Sink: b.(*softBuf).mr, SinkOffset: uint64(boff), Len: uint32(n)})
}

func (q *softBenchQP) recv(id uint64, b benchBuf, off, n int) error {
	return q.qp.PostRecv(id, b.bytes()[off:off+n])
}

func (q *softBenchQP) next(ctx context.Context) (benchCQE, error) {
	select {
	case c := <-q.qp.RecvCQ().C():
		return benchCQE{c.ID, c.Op, c.Len, c.Err}, nil
	case c := <-q.qp.SendCQ().C():
		return benchCQE{c.ID, c.Op, c.Len, c.Err}, nil
	case <-q.qp.Dead():
		return benchCQE{}, q.qp.Err()
	case <-ctx.Done():
		return benchCQE{}, ctx.Err()
	}
}

func (q *softBenchQP) close() error { return q.qp.Close() }

// --- an RNIC through the driver ---------------------------------------------

// devEnd is an RNIC opened for the verbs API (deviceFlags.openVerbs): its
// buffers DMA memory registered in its MR table, its work requests through
// the SQ and RQ rings, its completions from two CQs raising vector, the
// MPA startup in host software (driver.StartMPA) and then the device's
// octets relayed to the socket.
type devEnd struct {
	d      *driver.Device
	relay  *driver.Relay
	vector uint32
	pd     *driver.PD
}

type devBuf struct {
	b  *driver.Buffer
	mr *driver.MR
	n  int
}

func (e *devEnd) buffer(n int) (benchBuf, error) {
	if e.pd == nil {
		e.pd = e.d.AllocPD()
	}
	b, err := e.d.AllocDMA(max(n, 1))
	if err != nil {
		return nil, err
	}
	mr, err := e.pd.RegisterMR(b, 0, uint64(n), hostif.AccessLocalRead|hostif.AccessLocalWrite|hostif.AccessRemoteRead|hostif.AccessRemoteWrite)
	if err != nil {
		e.d.FreeDMA(b)
		return nil, err
	}
	return &devBuf{b, mr, n}, nil
}

func (b *devBuf) bytes() []byte { return b.b.Mem[:b.n] }
func (b *devBuf) region() benchRegion {
	return benchRegion{STag: b.mr.STag, Addr: b.mr.TO, Len: uint64(b.n)}
}

type devBenchQP struct {
	e        *devEnd
	qp       *driver.QP
	scq, rcq *driver.CQ
	p        *mpa.Params
	irq      <-chan struct{}
	ended    <-chan struct{}
	why      func() error
}

// log2 is the smallest l with 1<<l at least n.
func log2(n int) uint8 {
	l := uint8(0)
	for 1<<l < n {
		l++
	}
	return l
}

func (e *devEnd) connect(ctx context.Context, conn net.Conn, role mpa.Role, cfg mpa.Config, sq, rq int, _ bool) (benchQP, error) {
	q, err := e.open(ctx, conn, role, cfg, sq, rq)
	if err != nil {
		conn.Close()
		q.close()
		return nil, err
	}
	return q, nil
}

func (e *devEnd) open(ctx context.Context, conn net.Conn, role mpa.Role, cfg mpa.Config, sq, rq int) (*devBenchQP, error) {
	if e.pd == nil {
		e.pd = e.d.AllocPD()
	}
	q := &devBenchQP{e: e}
	var err error
	if q.irq, err = e.d.B.Vector(int(e.vector)); err != nil {
		return q, err
	}
	// A CQ holds every completion the rings can have outstanding.
	if q.scq, err = e.d.CreateCQ(log2(sq)+1, e.vector); err != nil {
		return q, err
	}
	if q.rcq, err = e.d.CreateCQ(log2(rq)+1, e.vector); err != nil {
		return q, err
	}
	if q.qp, err = e.pd.CreateQP(log2(sq), log2(rq), q.scq, q.rcq); err != nil {
		return q, err
	}
	rts, p, err := driver.StartMPA(ctx, conn, role, cfg, q.qp.N, verbs.TCPMaxSeg(conn))
	if err != nil {
		return q, err
	}
	q.p = p
	e.relay.Add(conn, rts, p)
	q.ended, q.why = e.relay.Ended(q.qp.N)
	if err := q.qp.RTS(rts); err != nil {
		return q, err
	}
	return q, e.relay.Start(q.qp.N)
}

func (q *devBenchQP) params() *mpa.Params { return q.p }

func (q *devBenchQP) send(id uint64, b benchBuf, off, n int) error {
	mr := b.(*devBuf).mr
	return q.qp.PostSend(hostif.SQE{Op: hostif.OpSend, Signaled: true, ID: id, Length: uint32(n), LKey: mr.STag, LocalTO: mr.TO + uint64(off)})
}

func (q *devBenchQP) write(id uint64, dst benchRegion, off uint64, b benchBuf, boff, n int) error {
	mr := b.(*devBuf).mr
	return q.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, ID: id, Length: uint32(n), LKey: mr.STag, LocalTO: mr.TO + uint64(boff),
		RKey: dst.STag, RemoteTO: dst.Addr + off})
}

func (q *devBenchQP) read(id uint64, src benchRegion, off uint64, b benchBuf, boff, n int) error {
	mr := b.(*devBuf).mr
	return q.qp.PostSend(hostif.SQE{Op: hostif.OpRead, Signaled: true, ID: id, Length: uint32(n), LKey: mr.STag, LocalTO: mr.TO + uint64(boff),
		RKey: src.STag, RemoteTO: src.Addr + off})
}

func (q *devBenchQP) recv(id uint64, b benchBuf, off, n int) error {
	mr := b.(*devBuf).mr
	return q.qp.PostRecv(hostif.RQE{ID: id, LKey: mr.STag, Length: uint32(n), LocalTO: mr.TO + uint64(off)})
}

// devBenchPoll bounds how long next sleeps on the vector before it looks
// at the CQs and the relay again.
const devBenchPoll = 50 * time.Millisecond

func (q *devBenchQP) poll() (hostif.CQE, bool, error) {
	if e, ok, err := q.rcq.Poll(); err != nil || ok {
		return e, ok, err
	}
	return q.scq.Poll()
}

func (q *devBenchQP) next(ctx context.Context) (benchCQE, error) {
	for {
		e, ok, err := q.poll()
		if err != nil {
			return benchCQE{}, err
		}
		if !ok {
			// Arm both CQs and look once more: an entry written in
			// between raises nothing.
			if err := errors.Join(q.rcq.Arm(false), q.scq.Arm(false)); err != nil {
				return benchCQE{}, err
			}
			if e, ok, err = q.poll(); err != nil {
				return benchCQE{}, err
			}
		}
		if ok {
			return benchCQE{id: e.ID, op: verbs.Opcode(e.Op), n: int(e.Length), err: q.cqeErr(e)}, nil
		}
		select {
		case <-q.irq:
		case <-time.After(devBenchPoll):
		case <-q.ended:
			if e, ok, err = q.poll(); err == nil && ok {
				return benchCQE{id: e.ID, op: verbs.Opcode(e.Op), n: int(e.Length), err: q.cqeErr(e)}, nil
			}
			why := q.why()
			if errors.Is(why, io.EOF) {
				why = errors.New("the peer closed the connection")
			}
			return benchCQE{}, fmt.Errorf("QP %d's connection ended: %w", q.qp.N, why)
		case <-ctx.Done():
			return benchCQE{}, ctx.Err()
		}
		if err := q.e.relay.Err(); err != nil {
			return benchCQE{}, err
		}
	}
}

// cqeErr says why a work request failed, nil for success; a flushed one
// names the Terminate the device's event ring holds, if any.
func (q *devBenchQP) cqeErr(e hostif.CQE) error {
	switch e.Status {
	case hostif.StatusSuccess:
		return nil
	case hostif.StatusRemote:
		return fmt.Errorf("the peer terminated the stream: %s", rdmap.ErrorName(rdmap.Layer(e.TermLayerEType>>4), e.TermLayerEType&0xf, e.TermCode))
	case hostif.StatusProtocol:
		return fmt.Errorf("the device terminated the stream: %s", rdmap.ErrorName(rdmap.Layer(e.TermLayerEType>>4), e.TermLayerEType&0xf, e.TermCode))
	}
	err := fmt.Errorf("the work request completed %v", e.Status)
	if evs, eerr := q.e.d.Events(); eerr == nil {
		for _, ev := range evs {
			if ev.Type == hostif.EventQPError && ev.Index == q.qp.N && ev.Detail != 0 {
				return fmt.Errorf("%w (the device terminated the stream: %s)", err,
					rdmap.ErrorName(rdmap.Layer(ev.Detail>>4), ev.Detail&0xf, uint8(ev.Value)))
			}
		}
	}
	return err
}

func (q *devBenchQP) close() error {
	var errs []error
	if q.qp != nil {
		_, err := q.qp.Destroy()
		errs = append(errs, err, q.e.relay.Remove(q.qp.N))
	}
	for _, cq := range []*driver.CQ{q.scq, q.rcq} {
		if cq != nil {
			errs = append(errs, cq.Destroy())
		}
	}
	return errors.Join(errs...)
}
