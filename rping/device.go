package rping

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

// Device is the Provider of an RNIC through the driver (package driver):
// buffers are DMA memory registered in the device's MR table, the queue
// pair is the device's, its work requests go through the SQ and RQ rings
// and its completions come back through two CQs, and the connection is
// handed to the device after the MPA startup ran in host software
// (driver.StartMPA), its octets relayed between the socket and the
// device's network seam by Relay.
type Device struct {
	D     *driver.Device // set up for the verbs API (InitDataPath)
	Relay *driver.Relay  // the device's relay (driver.NewRelay)
	// Vector is the interrupt vector the session's CQs raise; the caller
	// enables it (driver.Device.EnableVector).
	Vector uint32
	pd     *driver.PD
}

// Device queue sizes for an rping session: rping has at most two receives
// and a few send work requests outstanding.
const (
	devSQLog2 = 5
	devRQLog2 = 2
	devCQLog2 = 6
	// devSends is how many Sends may be outstanding at once (each has its
	// own slot of the send buffer until it completes).
	devSends = 8
	// idInternal marks the Sends the queue pair signals for itself, to
	// know when their buffer slot is free; Next does not return them.
	idInternal = 1 << 63
	// devPoll bounds how long Next sleeps on the vector before it looks
	// at the relay and the CQs again.
	devPoll = 50 * time.Millisecond
)

func (p *Device) PD() *driver.PD {
	if p.pd == nil {
		p.pd = p.D.AllocPD()
	}
	return p.pd
}

type devBuffer struct {
	p  *Device
	b  *driver.Buffer
	mr *driver.MR
	n  int
}

// Buffer allocates n octets of DMA memory (a DMA window of its own) and
// registers them with every access right.
func (p *Device) Buffer(n int) (Buffer, error) {
	b, err := p.D.AllocDMA(max(n, 1))
	if err != nil {
		return nil, err
	}
	mr, err := p.PD().RegisterMR(b, 0, uint64(n), hostif.AccessLocalRead|hostif.AccessLocalWrite|hostif.AccessRemoteRead|hostif.AccessRemoteWrite)
	if err != nil {
		p.D.FreeDMA(b)
		return nil, err
	}
	return &devBuffer{p: p, b: b, mr: mr, n: n}, nil
}

func (b *devBuffer) Bytes() []byte { return b.b.Mem[:b.n] }
func (b *devBuffer) Adv(n int) Adv { return Adv{Addr: b.mr.TO, STag: b.mr.STag, Len: uint32(n)} }
func (b *devBuffer) Release() error {
	return errors.Join(b.mr.Deregister(), b.p.D.FreeDMA(b.b))
}

// devQP is a session's queue pair on the device. Its message buffer holds
// the receive slots (AdvLen each) and then the send slots.
type devQP struct {
	p        *Device
	qp       *driver.QP
	scq, rcq *driver.CQ
	msg      Buffer
	params   *mpa.Params
	irq      <-chan struct{}
	sends    uint64 // Sends posted
	busy     [devSends]bool
	queued   []Completion // taken from the CQs ahead of their turn, returned by Next
	cause    error        // the first failure other than FLUSHED
	ended    <-chan struct{}
	why      func() error
}

func (p *Device) Connect(ctx context.Context, conn net.Conn, role mpa.Role, cfg *Config) (QP, error) {
	q, err := p.connect(ctx, conn, role, cfg)
	if err != nil {
		conn.Close()
		if q != nil {
			q.destroy()
		}
		return nil, err
	}
	return q, nil
}

func (p *Device) connect(ctx context.Context, conn net.Conn, role mpa.Role, cfg *Config) (*devQP, error) {
	irq, err := p.D.B.Vector(int(p.Vector))
	if err != nil {
		return nil, err
	}
	q := &devQP{p: p, irq: irq}
	if q.scq, err = p.D.CreateCQ(devCQLog2, p.Vector); err != nil {
		return q, err
	}
	if q.rcq, err = p.D.CreateCQ(devCQLog2, p.Vector); err != nil {
		return q, err
	}
	if q.qp, err = p.PD().CreateQP(devSQLog2, devRQLog2, q.scq, q.rcq); err != nil {
		return q, err
	}
	if q.msg, err = p.Buffer((2 + devSends) * AdvLen); err != nil {
		return q, err
	}
	for i := range 2 {
		if err := q.postRecv(uint64(i)); err != nil {
			return q, err
		}
	}
	emss := cfg.QP.EMSS
	if emss == 0 {
		emss = verbs.TCPMaxSeg(conn)
	}
	rts, params, err := driver.StartMPA(ctx, conn, role, cfg.QP.MPA, q.qp.N, emss)
	if err != nil {
		return q, err
	}
	q.params = params
	p.Relay.Add(conn, rts, params)
	q.ended, q.why = p.Relay.Ended(q.qp.N)
	if err := q.qp.RTS(rts); err != nil {
		return q, err
	}
	if err := p.Relay.Start(q.qp.N); err != nil {
		return q, err
	}
	return q, nil
}

func (q *devQP) mr() *driver.MR { return q.msg.(*devBuffer).mr }

func (q *devQP) postRecv(slot uint64) error {
	return q.qp.PostRecv(hostif.RQE{ID: slot, LKey: q.mr().STag, Length: AdvLen, LocalTO: q.mr().TO + slot*AdvLen})
}

func (q *devQP) Params() *mpa.Params { return q.params }

// Send copies data into the next send slot, waiting (taking completions)
// while that slot's last Send is outstanding.
func (q *devQP) Send(ctx context.Context, data []byte) error {
	if len(data) > AdvLen {
		return fmt.Errorf("rping: a Send of %d octets, more than rping's %d", len(data), AdvLen)
	}
	slot := q.sends % devSends
	for q.busy[slot] {
		c, err := q.take(ctx, true)
		if err != nil {
			return err
		}
		if c != nil {
			q.queued = append(q.queued, *c)
		}
	}
	off := (2 + slot) * AdvLen
	copy(q.msg.Bytes()[off:], data)
	q.busy[slot] = true
	q.sends++
	return q.qp.PostSend(hostif.SQE{Op: hostif.OpSend, Signaled: true, Length: uint32(len(data)), ID: idInternal | slot,
		LKey: q.mr().STag, LocalTO: q.mr().TO + off})
}

func (q *devQP) Read(ctx context.Context, src Adv, sink Buffer, n int) error {
	mr := sink.(*devBuffer).mr
	return q.qp.PostSend(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: uint32(n), ID: uint64(verbs.OpRead),
		LKey: mr.STag, LocalTO: mr.TO, RKey: src.STag, RemoteTO: src.Addr})
}

func (q *devQP) Write(ctx context.Context, dst Adv, src Buffer, n int) error {
	mr := src.(*devBuffer).mr
	return q.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: uint32(n), ID: uint64(verbs.OpWrite),
		LKey: mr.STag, LocalTO: mr.TO, RKey: dst.STag, RemoteTO: dst.Addr})
}

func (q *devQP) Next(ctx context.Context) (Completion, error) {
	if len(q.queued) > 0 {
		c := q.queued[0]
		q.queued = q.queued[1:]
		return c, nil
	}
	for {
		c, err := q.take(ctx, false)
		if err != nil {
			return Completion{}, err
		}
		if c != nil {
			return *c, nil
		}
	}
}

// take returns the next completion the session sees, or nil when it took
// only an internal one (a Send's). With internalOnly it returns as soon as
// it took anything.
func (q *devQP) take(ctx context.Context, internalOnly bool) (*Completion, error) {
	for {
		e, ok, err := q.poll()
		if err != nil {
			return nil, err
		}
		if ok {
			return q.completion(e)
		}
		// Nothing yet: arm both CQs, look once more (an entry written in
		// between raises nothing), then sleep on the vector.
		if err := q.rcq.Arm(false); err != nil {
			return nil, err
		}
		if err := q.scq.Arm(false); err != nil {
			return nil, err
		}
		if e, ok, err = q.poll(); err != nil {
			return nil, err
		} else if ok {
			return q.completion(e)
		}
		select {
		case <-q.irq:
		case <-time.After(devPoll):
		case <-q.ended:
			// The socket ended; what the device completed before is
			// still taken first.
			if e, ok, err = q.poll(); err != nil {
				return nil, err
			} else if ok {
				return q.completion(e)
			}
			why := q.why()
			if errors.Is(why, io.EOF) {
				why = errors.New("the peer closed the connection")
			}
			return nil, connLost{fmt.Errorf("rping: QP %d's connection ended: %w", q.qp.N, why)}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := q.p.Relay.Err(); err != nil {
			return nil, err
		}
	}
}

func (q *devQP) poll() (hostif.CQE, bool, error) {
	if e, ok, err := q.rcq.Poll(); err != nil || ok {
		return e, ok, err
	}
	return q.scq.Poll()
}

// completion turns a CQE into the session's completion: a receive's
// payload copied out and its slot posted again, an internal Send's slot
// freed (nil).
func (q *devQP) completion(e hostif.CQE) (*Completion, error) {
	c := &Completion{Op: verbs.Opcode(e.Op), Err: cqeErr(e)}
	if e.Status != hostif.StatusSuccess && e.Status != hostif.StatusFlushed && q.cause == nil {
		q.cause = c.Err
	}
	if e.Status == hostif.StatusFlushed {
		// The entry that carries the failure may sit in the other CQ:
		// take what both hold, so the flushed entry says why.
		if err := q.takeAll(); err != nil {
			return nil, err
		}
		if q.cause == nil {
			// An error no work request owns (a bad request from the
			// peer, refused here) is told by the event ring alone.
			if err := q.lookEvents(); err != nil {
				return nil, err
			}
		}
		if q.cause != nil {
			c.Err = fmt.Errorf("%w (the queue pair failed: %w)", c.Err, q.cause)
		}
	}
	switch {
	case e.Op == hostif.OpRecv:
		if e.Status == hostif.StatusSuccess {
			if e.ID >= 2 || e.Length > AdvLen {
				return nil, fmt.Errorf("rping: the device completed receive %d of %d octets; the session posted slots 0 and 1 of %d", e.ID, e.Length, AdvLen)
			}
			off := e.ID * AdvLen
			c.Data = append([]byte(nil), q.msg.Bytes()[off:off+uint64(e.Length)]...)
			if err := q.postRecv(e.ID); err != nil {
				return nil, err
			}
		}
	case e.ID&idInternal != 0:
		q.busy[e.ID%devSends] = false
		if c.Err == nil {
			return nil, nil
		}
	}
	return c, nil
}

// lookEvents takes the device's events and keeps, as the cause, the
// first QP_ERROR of this queue pair: the Terminate the device sent.
func (q *devQP) lookEvents() error {
	evs, err := q.p.D.Events()
	if err != nil {
		return err
	}
	for _, e := range evs {
		if e.Type == hostif.EventQPError && e.Index == q.qp.N && q.cause == nil {
			if e.Detail == 0 {
				q.cause = errors.New("the device failed the queue pair on a local fault and sent a Terminate (Local Catastrophic)")
			} else {
				q.cause = fmt.Errorf("the device terminated the stream: %s", rdmap.ErrorName(rdmap.Layer(e.Detail>>4), e.Detail&0xf, uint8(e.Value)))
			}
		}
	}
	return nil
}

// takeAll moves every entry the CQs hold now into the queue.
func (q *devQP) takeAll() error {
	for {
		e, ok, err := q.poll()
		if err != nil || !ok {
			return err
		}
		if e.Status == hostif.StatusFlushed {
			c := &Completion{Op: verbs.Opcode(e.Op), Err: cqeErr(e)}
			if e.ID&idInternal != 0 && e.Op != hostif.OpRecv {
				q.busy[e.ID%devSends] = false
			}
			q.queued = append(q.queued, *c)
			continue
		}
		c, err := q.completion(e)
		if err != nil {
			return err
		}
		if c != nil {
			q.queued = append(q.queued, *c)
		}
	}
}

// cqeErr describes a CQE's failure, nil for success.
func cqeErr(e hostif.CQE) error {
	switch e.Status {
	case hostif.StatusSuccess:
		return nil
	case hostif.StatusRemote:
		return fmt.Errorf("the peer terminated the stream: %s", rdmap.ErrorName(rdmap.Layer(e.TermLayerEType>>4), e.TermLayerEType&0xf, e.TermCode))
	case hostif.StatusProtocol:
		return fmt.Errorf("the device terminated the stream: %s", rdmap.ErrorName(rdmap.Layer(e.TermLayerEType>>4), e.TermLayerEType&0xf, e.TermCode))
	default:
		return fmt.Errorf("the work request completed %v", e.Status)
	}
}

// Close drains and destroys the queue pair and closes its connection.
func (q *devQP) Close() error {
	return q.destroy()
}

func (q *devQP) destroy() error {
	var errs []error
	if q.qp != nil {
		_, err := q.qp.Destroy()
		errs = append(errs, err)
		errs = append(errs, q.p.Relay.Remove(q.qp.N))
	}
	if q.msg != nil {
		errs = append(errs, q.msg.Release())
	}
	for _, cq := range []*driver.CQ{q.scq, q.rcq} {
		if cq != nil {
			errs = append(errs, cq.Destroy())
		}
	}
	return errors.Join(errs...)
}
