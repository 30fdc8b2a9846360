package driver

import (
	"errors"
	"fmt"
	"sync"

	"github.com/openrnic/rnic/driver/hostif"
)

// The verbs-shaped API over the host interface (docs/device.md): PDs, MRs,
// CQs and QPs as iwarp/verbs has them, built from admin commands, ring
// entries in DMA memory and doorbells, for any backend. It is what rping
// and rnic-loader will use on `--device model` or `sim`; the connection
// setup on top (StartMPA, Relay) is relay.go's.
//
// Memory: InitDataPath allocates one DMA buffer, the ring arena, declared
// as window 0, that holds the event and exception rings and every CQ, SQ
// and RQ ring (carved off in order; a destroyed object's ring is not
// reused, so an arena sized for the objects a program creates in its life
// is enough). AllocDMA gives the program's own buffers a window each, in
// the slots after it.

// verbsState is the driver's bookkeeping for the verbs API.
type verbsState struct {
	mu       sync.Mutex
	arena    *Buffer
	arenaOff uint64
	windows  []*Buffer // by slot; slot 0 is the arena
	nextPD   uint16
	cqs      map[uint16]*CQ
	qps      map[uint16]*QP
	mrKeys   map[uint16]uint8 // last key used per MR index
	mrUsed   map[uint16]bool
	mrs      map[uint16]*MR // the registered regions, by index (MRs lists them)
	evRing   uint64         // the event ring's device address
	evCI     uint16         // the next event to read
	excRing  uint64         // the exception ring's device address
	excCI    uint16         // the next exception buffer to read
	excPI    uint16         // the producer index the last EXCEPTION event reported
}

// ErrNoDataPath is returned by the verbs API before InitDataPath.
var ErrNoDataPath = errors.New("driver: the data path is not set up: call InitDataPath first")

// Event ring and exception ring sizes InitDataPath configures.
const (
	EventLog2    = 8  // 256 events
	ExcLog2      = 4  // 16 exception buffers
	ExcBufLog2   = 11 // of 2 KiB
	minArenaSize = 1 << 20
)

// InitDataPath allocates the ring arena (arenaSize octets, at least 1 MiB),
// declares it as DMA window 0 and configures the event and exception rings
// at its start (EVENT_RING).
func (d *Device) InitDataPath(arenaSize int) error {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.arena != nil {
		return errors.New("driver: InitDataPath called twice; the data path is set up already")
	}
	if d.Map.Windows == 0 {
		return errors.New("driver: the device declares no DMA window slot (ID cap_windows): it cannot reach host memory")
	}
	arenaSize = max(arenaSize, minArenaSize)
	b, err := d.B.Alloc(arenaSize)
	if err != nil {
		return err
	}
	if _, err := d.Exec(hostif.DMAWindow{Slot: 0, Addr: b.Addr, Length: uint64(len(b.Mem))}); err != nil {
		d.B.Free(b)
		return err
	}
	v.arena, v.windows = b, make([]*Buffer, d.Map.Windows)
	v.windows[0] = b
	v.cqs, v.qps, v.mrKeys, v.mrUsed = map[uint16]*CQ{}, map[uint16]*QP{}, map[uint16]uint8{}, map[uint16]bool{}
	v.mrs = map[uint16]*MR{}
	ev, _ := v.carve(hostif.EventSize << EventLog2)
	v.evRing, v.evCI = ev, 0
	exc, err := v.carve(1 << (ExcLog2 + ExcBufLog2))
	if err != nil {
		return err
	}
	v.excRing, v.excCI, v.excPI = exc, 0, 0
	_, err = d.Exec(hostif.EventRing{Ring: ev, Log2: EventLog2, ExcRing: exc, ExcLog2: ExcLog2, ExcBufLog2: ExcBufLog2})
	return err
}

// carve takes n octets (a power of two) of the arena, aligned to n and to
// 4 KiB (docs/device.md, "Rings"), zeroed.
func (v *verbsState) carve(n uint64) (uint64, error) {
	// Aligned in device addresses, not only within the arena (whose own
	// address is 4 KiB-aligned, perhaps no more): a ring is aligned to
	// its size (docs/device.md, Rings).
	align := max(n, 4096)
	off := (v.arena.Addr+v.arenaOff+align-1)&^(align-1) - v.arena.Addr
	if off+n > uint64(len(v.arena.Mem)) {
		return 0, fmt.Errorf("driver: the ring arena (%d octets) is full: give InitDataPath a larger arena", len(v.arena.Mem))
	}
	v.arenaOff = off + n
	clear(v.arena.Mem[off : off+n])
	return v.arena.Addr + off, nil
}

// mem returns the arena's octets at device address a.
func (v *verbsState) mem(a, n uint64) []byte {
	off := a - v.arena.Addr
	return v.arena.Mem[off : off+n]
}

// Events returns the events the device wrote to the event ring since the
// last call, in order. The ring has no consumer index (docs/device.md,
// open points): a driver that lets 2^EventLog2 events pile up between two
// calls loses the oldest, and the phase bits then mislead it.
func (d *Device) Events() ([]hostif.Event, error) {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.arena == nil {
		return nil, ErrNoDataPath
	}
	var out []hostif.Event
	for {
		b := v.mem(v.evRing+uint64(v.evCI&(1<<EventLog2-1))*hostif.EventSize, hostif.EventSize)
		if b[15]&1 == 1 != hostif.Phase(v.evCI, EventLog2) {
			return out, nil
		}
		e, err := hostif.DecodeEvent(b)
		if err != nil {
			return out, fmt.Errorf("driver: event %d does not decode (%w): the device wrote an event the contract does not allow", v.evCI, err)
		}
		out = append(out, e)
		v.evCI++
		if e.Type == hostif.EventQPError || e.Type == hostif.EventTerminateReceived {
			if qp := v.qps[e.Index]; qp != nil {
				qp.state = QPStateError
			}
		}
		if e.Type == hostif.EventException {
			v.excPI = uint16(e.Value)
		}
	}
}

// Exception is one buffer of the exception ring: a segment the device's
// data path did not take (docs/device.md, "Event ring and exception
// ring"), or a part of one.
type Exception struct {
	hostif.ExcHeader
	Octets []byte // a copy of the buffer's Length octets
}

// Exceptions returns the exception buffers the device has announced since
// the last call, in order: a buffer is whole once its EXCEPTION event is on
// the event ring (the event's value is the producer index after it;
// docs/device.md), so Exceptions reads up to the index the events Events
// has returned reported. Each buffer's phase bit is checked against its
// pass of the ring. The ring has no consumer index: a reader that falls
// 2^ExcLog2 buffers behind loses the oldest.
func (d *Device) Exceptions() ([]Exception, error) {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.arena == nil {
		return nil, ErrNoDataPath
	}
	var out []Exception
	for ; v.excCI != v.excPI; v.excCI++ {
		b := v.mem(v.excRing+uint64(v.excCI&(1<<ExcLog2-1))<<ExcBufLog2, 1<<ExcBufLog2)
		if b[15]&1 == 1 != hostif.Phase(v.excCI, ExcLog2) {
			return out, fmt.Errorf("driver: exception buffer %d has the phase of another pass of the ring: the device announced it (EXCEPTION) before writing it", v.excCI)
		}
		h, err := hostif.DecodeExcHeader(b, 1<<ExcBufLog2)
		if err != nil {
			return out, fmt.Errorf("driver: exception buffer %d does not decode (%w): the device wrote an entry the contract does not allow", v.excCI, err)
		}
		out = append(out, Exception{ExcHeader: h, Octets: append([]byte(nil), b[hostif.ExcHeaderLen:hostif.ExcHeaderLen+int(h.Length)]...)})
	}
	return out, nil
}

// AllocDMA allocates a buffer and declares it to the device as a DMA
// window of its own.
func (d *Device) AllocDMA(size int) (*Buffer, error) {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.arena == nil {
		return nil, ErrNoDataPath
	}
	slot := -1
	for i, w := range v.windows {
		if w == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		return nil, fmt.Errorf("driver: all %d DMA window slots are taken: allocate fewer, larger buffers (or FreeDMA one)", len(v.windows))
	}
	b, err := d.B.Alloc(size)
	if err != nil {
		return nil, err
	}
	if _, err := d.Exec(hostif.DMAWindow{Slot: uint32(slot), Addr: b.Addr, Length: uint64(len(b.Mem))}); err != nil {
		d.B.Free(b)
		return nil, err
	}
	v.windows[slot] = b
	return b, nil
}

// FreeDMA clears a buffer's window and frees it. Deregister its MRs first:
// the device refuses (DMA_REFUSED) what it would still reach through them.
func (d *Device) FreeDMA(b *Buffer) error {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, w := range v.windows {
		if w == b && i > 0 {
			if _, err := d.Exec(hostif.DMAWindow{Slot: uint32(i)}); err != nil {
				return err
			}
			v.windows[i] = nil
			return d.B.Free(b)
		}
	}
	return errors.New("driver: FreeDMA of a buffer AllocDMA did not return (or freed already)")
}

// PD is a protection domain: MRs and QPs of one PD only meet each other
// (RFC 5041 8.2).
type PD struct {
	d  *Device
	ID uint16
}

// AllocPD returns a new protection domain.
func (d *Device) AllocPD() *PD {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	v.nextPD++
	return &PD{d: d, ID: v.nextPD}
}

// MR is a registered memory region: Len octets at TO (its device address,
// as a verbs provider uses the virtual address) named by STag.
type MR struct {
	pd     *PD
	Index  uint16
	STag   uint32
	TO     uint64
	Len    uint64
	Access uint8
	Buf    []byte // the region's octets
}

// RegisterMR registers n octets of b from offset off with the access bits
// (hostif.AccessLocalRead ... AccessRemoteWrite). Its TO is the device
// address; the key changes each time an index is reused, so a peer that
// kept an old STag is refused (RFC 5041 8.3 item 2).
func (pd *PD) RegisterMR(b *Buffer, off, n uint64, access uint8) (*MR, error) {
	d := pd.d
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.arena == nil {
		return nil, ErrNoDataPath
	}
	if off > uint64(len(b.Mem)) || n > uint64(len(b.Mem))-off {
		return nil, fmt.Errorf("driver: RegisterMR of %d octets at offset %d of a %d-octet buffer: the region must lie inside it", n, off, len(b.Mem))
	}
	var idx uint16
	for i := uint32(1); i < d.Map.STags && i <= 0xffff; i++ {
		if !v.mrUsed[uint16(i)] {
			idx = uint16(i)
			break
		}
	}
	if idx == 0 {
		return nil, fmt.Errorf("driver: every MR index of the device's %d is in use: deregister a region first", d.Map.STags)
	}
	key := v.mrKeys[idx] + 1
	c := hostif.MRWrite{Index: idx, Key: key, Access: access, PD: pd.ID, BoundQPN: hostif.NotBound,
		BaseTO: b.Addr + off, Length: n, Addr: b.Addr + off}
	if _, err := d.Exec(c); err != nil {
		return nil, err
	}
	v.mrUsed[idx], v.mrKeys[idx] = true, key
	mr := &MR{pd: pd, Index: idx, STag: uint32(idx)<<8 | uint32(key), TO: b.Addr + off, Len: n, Access: access,
		Buf: b.Mem[off : off+n]}
	v.mrs[idx] = mr
	return mr, nil
}

// Deregister invalidates the region (MR_INVALIDATE: once it returns, the
// device no longer touches the memory, docs/device.md Fences) and frees
// its index. A region a peer's Send with Invalidate invalidated is
// already invalid in the device; Deregister then only frees the index.
func (mr *MR) Deregister() error {
	d := mr.pd.d
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.mrUsed[mr.Index] {
		return errors.New("driver: Deregister of a region deregistered already")
	}
	if _, err := d.Exec(hostif.MRInvalidate{Index: uint32(mr.Index)}); err != nil {
		var ae *AdminError
		if !errors.As(err, &ae) || ae.Status != hostif.AdminBadState {
			return err
		}
	}
	v.mrUsed[mr.Index] = false
	delete(v.mrs, mr.Index)
	return nil
}

// CQ is a completion queue: a ring the device writes CQEs into, read by
// their phase bit.
type CQ struct {
	d    *Device
	N    uint16
	ring uint64
	log2 uint8
	ci   uint16
}

// CreateCQ creates a CQ of 2^log2 entries raising vector when armed.
func (d *Device) CreateCQ(log2 uint8, vector uint32) (*CQ, error) {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.arena == nil {
		return nil, ErrNoDataPath
	}
	n := -1
	for i := 0; i < int(d.Map.CQs) && i <= 0xffff; i++ {
		if v.cqs[uint16(i)] == nil {
			n = i
			break
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("driver: all %d CQs of the device are in use: destroy one first", d.Map.CQs)
	}
	ring, err := v.carve(hostif.CQESize << log2)
	if err != nil {
		return nil, err
	}
	if _, err := d.Exec(hostif.CreateCQ{CQN: uint32(n), Ring: ring, Log2: uint32(log2), Vector: vector}); err != nil {
		return nil, err
	}
	cq := &CQ{d: d, N: uint16(n), ring: ring, log2: log2}
	v.cqs[cq.N] = cq
	return cq, nil
}

// Poll takes the next CQE if the device wrote one, gives the consumer
// index back (CQ_CI) and returns the SQ or RQ slots the entry frees to its
// QP. ok is false when the CQ is empty.
func (cq *CQ) Poll() (e hostif.CQE, ok bool, err error) {
	v := &cq.d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	b := v.mem(cq.ring+uint64(cq.ci&(1<<cq.log2-1))*hostif.CQESize, hostif.CQESize)
	if b[31]&1 == 1 != hostif.Phase(cq.ci, cq.log2) {
		return hostif.CQE{}, false, nil
	}
	if e, err = hostif.DecodeCQE(b); err != nil {
		return hostif.CQE{}, false, fmt.Errorf("driver: CQ %d entry %d does not decode (%w): the device wrote a CQE the contract does not allow", cq.N, cq.ci, err)
	}
	cq.ci++
	if err := cq.d.RingCQ(cq.N, cq.ci, 0); err != nil {
		return hostif.CQE{}, false, err
	}
	if qp := v.qps[e.QPN]; qp != nil {
		qp.completed(&e)
	}
	return e, true, nil
}

// Arm asks for the CQ's vector at its next entry (solicited: only at a
// Send with Solicited Event or an error). Poll once more after arming: an
// entry written before the arm raises nothing.
func (cq *CQ) Arm(solicited bool) error {
	cq.d.v.mu.Lock()
	defer cq.d.v.mu.Unlock()
	arm := uint32(CQArm)
	if solicited {
		arm |= CQArmSolicited
	}
	return cq.d.RingCQ(cq.N, cq.ci, arm)
}

// Destroy destroys the CQ (no QP may complete into it any more).
func (cq *CQ) Destroy() error {
	v := &cq.d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, err := cq.d.Exec(hostif.DestroyCQ{CQN: uint32(cq.N)}); err != nil {
		return err
	}
	delete(v.cqs, cq.N)
	return nil
}

// QP is a queue pair: its SQ and RQ rings and the device's connection.
type QP struct {
	d              *Device
	pd             *PD
	N              uint16
	sq, rq         uint64
	sqLog2, rqLog2 uint8
	sqPI, rqPI     uint16
	// Outstanding send entries in SQ order, for the SQ's free slots: a
	// send CQE completes its entry and every unsignalled one before it
	// (completions come in SQ order, docs/device.md).
	sqOut []sqPosted
	rqOut int
	// What QPs reports: the state as the driver knows it (QP_RTS done, a
	// QP_ERROR or TERMINATE_RECEIVED event read by Events) and the CQs.
	state          QPState
	sendCQ, recvCQ uint16
}

type sqPosted struct {
	id       uint64
	signaled bool
}

// CreateQP creates a QP of the PD with rings of 2^sqLog2 and 2^rqLog2
// entries completing into send and recv.
func (pd *PD) CreateQP(sqLog2, rqLog2 uint8, send, recv *CQ) (*QP, error) {
	d := pd.d
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.arena == nil {
		return nil, ErrNoDataPath
	}
	n := -1
	for i := 0; i < int(d.Map.Conns) && i <= 0xffff; i++ {
		if v.qps[uint16(i)] == nil {
			n = i
			break
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("driver: all %d QPs of the device are in use: destroy one first", d.Map.Conns)
	}
	sq, err := v.carve(hostif.SQESize << sqLog2)
	if err != nil {
		return nil, err
	}
	rq, err := v.carve(hostif.RQESize << rqLog2)
	if err != nil {
		return nil, err
	}
	c := hostif.CreateQP{QPN: uint32(n), PD: uint32(pd.ID), SQRing: sq, SQLog2: sqLog2, RQRing: rq, RQLog2: rqLog2,
		SendCQ: send.N, RecvCQ: recv.N}
	if _, err := d.Exec(c); err != nil {
		return nil, err
	}
	qp := &QP{d: d, pd: pd, N: uint16(n), sq: sq, rq: rq, sqLog2: sqLog2, rqLog2: rqLog2, state: QPStateCreated,
		sendCQ: send.N, recvCQ: recv.N}
	v.qps[qp.N] = qp
	return qp, nil
}

// RTS hands the connection to the device (QP_RTS; StartMPA gives c).
func (qp *QP) RTS(c hostif.QPRTS) error {
	c.QPN = qp.N
	if _, err := qp.d.Exec(c); err != nil {
		return err
	}
	qp.d.v.mu.Lock()
	if qp.state == QPStateCreated {
		qp.state = QPStateRTS
	}
	qp.d.v.mu.Unlock()
	return nil
}

// PostSend writes a send entry and rings SQ_PI. A ring with every slot
// outstanding refuses it: the slots come back as the send CQ's entries are
// polled, so post a signalled entry at least once per ring's worth.
func (qp *QP) PostSend(e hostif.SQE) error {
	v := &qp.d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(qp.sqOut) >= 1<<qp.sqLog2 {
		return fmt.Errorf("driver: QP %d's SQ has all %d entries outstanding: poll its send CQ (and signal an entry at least once per %d)",
			qp.N, len(qp.sqOut), 1<<qp.sqLog2)
	}
	slot := v.mem(qp.sq+uint64(qp.sqPI&(1<<qp.sqLog2-1))*hostif.SQESize, hostif.SQESize)
	if err := e.Encode(slot); err != nil {
		return err
	}
	qp.sqPI++
	qp.sqOut = append(qp.sqOut, sqPosted{id: e.ID, signaled: e.Signaled})
	return qp.d.RingSQ(qp.N, qp.sqPI)
}

// PostRecv writes a receive entry and rings RQ_PI.
func (qp *QP) PostRecv(e hostif.RQE) error {
	v := &qp.d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if qp.rqOut >= 1<<qp.rqLog2 {
		return fmt.Errorf("driver: QP %d's RQ has all %d entries posted: poll its receive CQ", qp.N, qp.rqOut)
	}
	slot := v.mem(qp.rq+uint64(qp.rqPI&(1<<qp.rqLog2-1))*hostif.RQESize, hostif.RQESize)
	if err := e.Encode(slot); err != nil {
		return err
	}
	qp.rqPI++
	qp.rqOut++
	return qp.d.RingRQ(qp.N, qp.rqPI)
}

// completed frees the slots a polled CQE accounts for.
func (qp *QP) completed(e *hostif.CQE) {
	if e.Op == hostif.OpRecv {
		qp.rqOut = max(qp.rqOut-1, 0)
		return
	}
	for i, p := range qp.sqOut {
		if p.id == e.ID {
			qp.sqOut = qp.sqOut[i+1:]
			return
		}
	}
}

// Destroy drains the QP (QP_DRAIN: every fetched entry completes, the
// device lets go of its memory) and destroys it; the drain's outputs say
// how far each ring was consumed.
func (qp *QP) Destroy() (hostif.DrainResult, error) {
	v := &qp.d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	out, err := qp.d.Exec(hostif.QPDrain{QPN: uint32(qp.N)})
	if err != nil {
		return hostif.DrainResult{}, err
	}
	res, err := hostif.DecodeDrainResult(out)
	if err != nil {
		return res, err
	}
	if _, err := qp.d.Exec(hostif.DestroyQP{QPN: uint32(qp.N)}); err != nil {
		return res, err
	}
	delete(v.qps, qp.N)
	return res, nil
}
