// Package mirror runs the model device beside the simulated one, with the
// same inputs, and fails the run at the first difference (issue 30,
// "Cross-checking"; docs/device.md, "Sim versus model at run time").
//
// A Backend is a driver.Backend over two devices: the primary, the
// simulated device (driver/simdev) the driver really runs on, and the
// shadow, a model device (driver/model) sized from the primary's ID block.
// Every input reaches both, the model first: MMIO writes and reads (the
// primary's reads are the answers the driver gets), the segments the host
// relays in, and host memory, which each device has its own copy of at the
// same device addresses (model.AllocAt). What the driver and the
// application write into the primary's memory reaches the shadow's copy
// before the next input (sync); what each device writes is compared:
//
//   - wire octets: each QP's transmit stream, decoded (CRC and markers
//     checked), ULPDU for ULPDU, the Read Responses apart from the rest
//     (when a Read Response goes out between the send queue's messages
//     depends on the device's timing, not on the inputs);
//   - host memory: every octet the device's DMA writes (completions,
//     events, exceptions, placed data; simdev's WROTE messages) against the
//     model's writes to the same address, in order;
//   - what neither has matched by Check: the model's writes the device
//     never made, the device's the model never made, octets one side sent
//     and the other did not.
//
// The first difference fails every later call (and Check and Close) with
// where it is and the octets of both around it.
//
// # Who wrote an octet
//
// Host memory is written by three parties: the driver (descriptors,
// payload), the device (DMA writes) and, in the shadow only, the model. A
// snapshot per buffer tells what changed since the last input. Before an
// input, a barrier (a RUN of 0 clocks: the device answers after every
// message it sent before, so every DMA write it made by then is reported)
// folds the device's writes into the snapshot; what else changed is the
// driver's and is copied to the shadow. After the model has taken the
// input, what changed in the shadow is the model's. A device write that
// lands during the scan, after the barrier, is taken for the driver's and
// copied: the comparison of its octets (from WROTE) is not affected; only
// the model's later reads of those octets see the device's value instead
// of its own.
//
// The model is synchronous: it has done everything an input causes before
// the call returns, so it runs ahead of the device, and its writes wait in
// a queue per address until the device's arrive. A write the device makes
// first (a timer the model has not reached) waits in the other queue.
//
// # Early placement
//
// With markers, the device places the FPDUs it finds inside an
// out-of-order segment before the host gives the segment back (rnic_rx.v,
// mpa_rx_ooo; RFC 5044 6), and places them again, the same octets, when
// the segment comes back in order. Whether it searches a segment depends
// on its timing (mpa_rx_ooo passes on, unsearched, a segment that comes
// while it searches another), and a segment duplicated on the wire may be
// searched and placed twice. The model places nothing out of order on its
// own; the mirror has it place, after each segment, what the device may
// place early from it (model.PlaceEarly). The device's first write of such
// an octet, early or in order, matches the model's early write; the
// device's later writes of the same value, and the model's in-order
// rewrite, are writes of what is there already on both. What the model
// places early and the device never writes is a difference at Check, as
// is any device write the model did not place, early or in order.
package mirror

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// Primary is the device the driver runs on: a backend that reports its
// DMA writes (RecordWrites, TakeWrites) and answers a barrier (Run(0)):
// driver/simdev's Device.
type Primary interface {
	driver.Backend
	RecordWrites(on bool) error
	TakeWrites() []driver.DMAWrite
	Run(n uint64) (uint64, error)
}

// Backend is the mirrored device (see the package doc).
type Backend struct {
	p Primary
	m *model.Device

	mu    sync.Mutex // one input at a time, in the same order to both
	bufs  []*buf     // sorted by addr
	mq    map[uint64][]byte
	dq    map[uint64][]byte
	stats Stats

	wmu    sync.Mutex
	wire   map[uint16]*stream
	out    *queue // the primary's segments, for the driver
	netOn  sync.Once
	diffMu sync.Mutex
	diff   error
	closed bool
}

// Stats says how much the mirror compared.
type Stats struct {
	Inputs      uint64 `json:"inputs"`        // inputs given to both devices (MMIO writes, segments)
	WireOctets  uint64 `json:"wire_octets"`   // transmit octets compared
	MemOctets   uint64 `json:"dma_octets"`    // octets the device's DMA wrote that matched the model's
	DriverBytes uint64 `json:"driver_octets"` // octets the driver wrote, copied to the shadow
	EarlyULPDUs uint64 `json:"early_ulpdus"`  // ULPDUs of out-of-order segments the shadow placed early (model.PlaceEarly)
}

// buf is one Alloc: the primary's memory, its snapshot, the shadow's
// memory and the shadow's snapshot.
type buf struct {
	addr   uint64
	p, s   []byte
	ps, ss []byte
	pb, sb *driver.Buffer
}

// stream is one QP's transmit stream from both devices, decoded: each
// side's FPDUs are checked (CRC, markers) and their ULPDUs split into the
// Read Responses and everything else. The two are compared each on its own:
// when a Read Response goes out between two messages of the send queue
// depends on when the Read Request arrived (the model answers it at once,
// the device when its pipeline gets to it), so the octets on the wire may
// interleave differently while each kind is the same.
type stream struct {
	side [2]*txSide // device, model
	n    [2]uint64  // ULPDUs compared: requests, Read Responses
}

type txSide struct {
	rx  *mpa.Receiver
	seq uint32      // next sequence number
	q   [2][][]byte // ULPDUs not yet compared: requests, Read Responses
}

// New mirrors primary with a model sized from its ID block, and asks the
// primary for its DMA writes from now on. The primary must be fresh:
// nothing allocated, no admin command run.
func New(primary Primary) (*Backend, error) {
	id, err := regmap.Walk(primary, primary.BARSize())
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	cfg := model.Config{QPs: id.Conns, CQs: id.CQs, STags: id.STags, Vectors: id.Vectors, Windows: id.Windows,
		SQLog2: uint8(id.SQLog2), RQLog2: uint8(id.RQLog2), CQLog2: uint8(id.CQLog2), DataWidth: id.DataWidth,
		BuildHash: id.BuildHash}
	m, err := model.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("mirror: a model as the device's ID block says (%+v): %w", cfg, err)
	}
	if err := primary.RecordWrites(true); err != nil {
		m.Close()
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return &Backend{p: primary, m: m, mq: map[uint64][]byte{}, dq: map[uint64][]byte{}, wire: map[uint16]*stream{},
		out: newQueue()}, nil
}

// Primary is the device the driver runs on.
func (b *Backend) Primary() Primary { return b.p }

// Shadow is the model the mirror compares with (for tests that make the
// two differ on purpose).
func (b *Backend) Shadow() *model.Device { return b.m }

// Stats returns what has been compared so far.
func (b *Backend) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.stats
}

// Err is the first difference found, or nil.
func (b *Backend) Err() error {
	b.diffMu.Lock()
	defer b.diffMu.Unlock()
	return b.diff
}

func (b *Backend) differ(err error) {
	b.diffMu.Lock()
	defer b.diffMu.Unlock()
	if b.diff == nil {
		b.diff = err
	}
}

// BARSize implements driver.Backend.
func (b *Backend) BARSize() uint32 { return b.p.BARSize() }

// Read32 implements driver.Backend: the primary's answer; the model reads
// too, as a read may have effects (an admin command's STATUS polls).
func (b *Backend) Read32(off uint32) (uint32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.Err(); err != nil {
		return 0, err
	}
	before := b.modelWrites()
	if _, err := b.m.Read32(off); err != nil {
		return 0, fmt.Errorf("mirror: the model refused a read at %#x the device takes: %w", off, err)
	}
	if b.modelWrites() != before {
		b.scanShadow()
	}
	v, err := b.p.Read32(off)
	if err != nil {
		return 0, err
	}
	return v, b.Err()
}

// modelWrites is the model's count of DMA writes: a read that leaves it
// alone wrote nothing (reads are many; a scan of the shadow each is not
// needed).
func (b *Backend) modelWrites() uint64 {
	lo, _ := b.m.Read32(regs.CountersDMAWrites)
	hi, _ := b.m.Read32(regs.CountersDMAWrites + 4)
	return uint64(hi)<<32 | uint64(lo)
}

// Write32 implements driver.Backend.
func (b *Backend) Write32(off, v uint32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.sync(); err != nil {
		return err
	}
	if err := b.m.Write32(off, v); err != nil {
		return fmt.Errorf("mirror: the model refused a write of %#x at %#x: %w", v, off, err)
	}
	b.scanShadow()
	b.stats.Inputs++
	if err := b.p.Write32(off, v); err != nil {
		return err
	}
	return b.Err()
}

// Alloc implements driver.Backend: the primary's buffer, and the shadow's
// at the same device address with the same octets.
func (b *Backend) Alloc(size int) (*driver.Buffer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pb, err := b.p.Alloc(size)
	if err != nil {
		return nil, err
	}
	sb, err := b.m.AllocAt(pb.Addr, len(pb.Mem))
	if err != nil {
		b.p.Free(pb)
		return nil, fmt.Errorf("mirror: %w", err)
	}
	copy(sb.Mem, pb.Mem)
	x := &buf{addr: pb.Addr, p: pb.Mem, s: sb.Mem, ps: bytes.Clone(pb.Mem), ss: bytes.Clone(pb.Mem), pb: pb, sb: sb}
	i := sort.Search(len(b.bufs), func(i int) bool { return b.bufs[i].addr >= x.addr })
	b.bufs = append(b.bufs, nil)
	copy(b.bufs[i+1:], b.bufs[i:])
	b.bufs[i] = x
	return pb, nil
}

// Free implements driver.Backend.
func (b *Backend) Free(pb *driver.Buffer) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range b.bufs {
		if x.pb == pb {
			if err := b.m.Free(x.sb); err != nil {
				return fmt.Errorf("mirror: the model refused the Free the device takes: %w", err)
			}
			b.bufs = append(b.bufs[:i], b.bufs[i+1:]...)
			return b.p.Free(pb)
		}
	}
	return b.p.Free(pb)
}

// Vector implements driver.Backend: the primary's interrupts.
func (b *Backend) Vector(v int) (<-chan struct{}, error) { return b.p.Vector(v) }

// Network implements driver.Backend.
func (b *Backend) Network() driver.Network {
	if b.p.Network() == nil {
		return nil
	}
	b.netOn.Do(func() {
		go b.pump(b.p.Network().SegOut(), true)
		go b.pump(b.m.Network().SegOut(), false)
	})
	return network{b}
}

type network struct{ b *Backend }

// SegIn implements driver.Network: the model takes the segment, then the
// device.
func (n network) SegIn(s driver.Segment) error {
	b := n.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.sync(); err != nil {
		return err
	}
	if err := b.m.Network().SegIn(s); err != nil {
		return fmt.Errorf("mirror: the model refused a segment the device takes: %w", err)
	}
	// An out-of-order segment's FPDUs may be placed by the device before
	// the host gives the segment back (early placement, see the package
	// doc): the shadow places them now too.
	b.stats.EarlyULPDUs += uint64(b.m.PlaceEarly(s.QPN, s.Seq, s.Octets))
	b.scanShadow()
	b.stats.Inputs++
	if err := b.p.Network().SegIn(s); err != nil {
		return err
	}
	return b.Err()
}

// SegOut implements driver.Network: the primary's segments.
func (n network) SegOut() <-chan driver.Segment { return n.b.out.ch }

// Sent implements driver.Network.
func (n network) Sent() uint64 { return n.b.p.Network().Sent() }

// pump takes one side's segments: compared, and the primary's passed on.
func (b *Backend) pump(in <-chan driver.Segment, dev bool) {
	for s := range in {
		b.compareWire(s, dev)
		if dev {
			b.out.push(s)
		}
	}
	if dev {
		b.out.close()
	}
}

func (b *Backend) compareWire(s driver.Segment, dev bool) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.Err() != nil {
		return
	}
	k, name := 1, "model"
	if dev {
		k, name = 0, "device"
	}
	st := b.wire[s.QPN]
	if st == nil {
		st = &stream{}
		b.wire[s.QPN] = st
	}
	sd := st.side[k]
	if sd == nil || s.Seq != sd.seq {
		// A new connection on the QP (its first segment, or the first
		// after the QP's reuse) starts where its QP_RTS says.
		markers, crc, base, seq, ok := b.m.TxFraming(s.QPN)
		if !ok || s.Seq != seq || (sd != nil && (len(sd.q[0]) != 0 || len(sd.q[1]) != 0)) {
			at := "its first segment"
			if sd != nil {
				at = fmt.Sprintf("its stream at seq %#x", sd.seq)
			}
			b.differ(fmt.Errorf("mirror: QP %d: the %s sent a segment at seq %#x, %s (QP_RTS: seq %#x, known %v)",
				s.QPN, name, s.Seq, at, seq, ok))
			return
		}
		sd = &txSide{rx: mpa.NewReceiverAt(markers, crc, base, seq), seq: seq}
		st.side[k] = sd
	}
	sd.seq += uint32(len(s.Octets))
	err := sd.rx.Feed(s.Octets, func(_ uint32, u []byte) error {
		c := 0
		if len(u) >= 2 {
			if _, op := rdmap.ParseControl(u[1]); op == rdmap.OpReadResponse {
				c = 1
			}
		}
		sd.q[c] = append(sd.q[c], bytes.Clone(u))
		return nil
	})
	if err != nil {
		b.differ(fmt.Errorf("mirror: QP %d: the %s's transmit stream does not decode: %w", s.QPN, name, err))
		return
	}
	other := st.side[1-k]
	if other == nil {
		return
	}
	for c, kind := range []string{"send queue's messages (and Terminates)", "Read Responses"} {
		dq, mq := &st.side[0].q[c], &st.side[1].q[c]
		for len(*dq) > 0 && len(*mq) > 0 {
			d, m := (*dq)[0], (*mq)[0]
			if i := firstDiff(d, m); i >= 0 || len(d) != len(m) {
				if i < 0 {
					i = min(len(d), len(m))
				}
				b.differ(fmt.Errorf("mirror: QP %d's wire octets differ: FPDU %d of its %s, the device's and the model's, at ULPDU octet %d "+
					"(ULPDUs of %d and %d octets):\n  device %s\n  model  %s", s.QPN, st.n[c], kind, i, len(d), len(m),
					around(d, i), around(m, i)))
				return
			}
			st.n[c]++
			b.stats.WireOctets += uint64(len(d))
			*dq, *mq = (*dq)[1:], (*mq)[1:]
		}
	}
}

// sync brings the shadow's memory up to the driver's writes (see the
// package doc): a barrier, the device's writes folded in, then every
// other octet that changed copied.
func (b *Backend) sync() error {
	if err := b.Err(); err != nil {
		return err
	}
	if _, err := b.p.Run(0); err != nil {
		return err
	}
	b.takeDeviceWrites()
	for _, x := range b.bufs {
		changed(x.p, x.ps, func(i int) {
			v := x.p[i]
			x.ps[i], x.s[i], x.ss[i] = v, v, v
			b.stats.DriverBytes++
		})
	}
	return b.Err()
}

const pageSize = 4096

// changed calls f with each index where cur differs from snap, a page of
// equal octets at a time skipped with one comparison; f may update snap.
func changed(cur, snap []byte, f func(i int)) {
	for o := 0; o < len(cur); o += pageSize {
		e := min(o+pageSize, len(cur))
		if bytes.Equal(cur[o:e], snap[o:e]) {
			continue
		}
		for i := o; i < e; i++ {
			if cur[i] != snap[i] {
				f(i)
			}
		}
	}
}

// takeDeviceWrites compares the device's writes reported so far with the
// model's and folds them into the primary's snapshot.
func (b *Backend) takeDeviceWrites() {
	for _, w := range b.p.TakeWrites() {
		for i, v := range w.Octets {
			a := w.Addr + uint64(i)
			x := b.find(a)
			if x != nil {
				x.ps[a-x.addr] = v
			}
			if q := b.mq[a]; len(q) > 0 {
				if q[0] != v {
					b.differ(b.memDiff(a, v, q[0], w))
					return
				}
				b.pop(b.mq, a)
				b.stats.MemOctets++
				continue
			}
			if x != nil && x.s[a-x.addr] == v {
				continue // a write of what is there already, on both
			}
			if len(b.dq[a]) > 1<<10 {
				b.differ(fmt.Errorf("mirror: the device wrote %#x over a thousand times the model did not", a))
				return
			}
			b.dq[a] = append(b.dq[a], v)
		}
	}
}

// scanShadow takes what the model wrote during an input: each changed
// octet matches the device's write of it, waiting, or waits for it.
func (b *Backend) scanShadow() {
	for _, x := range b.bufs {
		changed(x.s, x.ss, func(i int) {
			v := x.s[i]
			x.ss[i] = v
			a := x.addr + uint64(i)
			if q := b.dq[a]; len(q) > 0 {
				if q[0] != v {
					b.differ(fmt.Errorf("mirror: host memory at %#x (buffer %#x + %#x): the device wrote %#02x "+
						"where the model writes %#02x\n  device %s\n  model  %s", a, x.addr, i, q[0], v,
						around(x.p, i), around(x.s, i)))
					return
				}
				b.pop(b.dq, a)
				b.stats.MemOctets++
				return
			}
			b.mq[a] = append(b.mq[a], v)
		})
	}
}

func (b *Backend) pop(m map[uint64][]byte, a uint64) {
	if q := m[a]; len(q) == 1 {
		delete(m, a)
	} else {
		m[a] = q[1:]
	}
}

func (b *Backend) find(a uint64) *buf {
	i := sort.Search(len(b.bufs), func(i int) bool { return b.bufs[i].addr+uint64(len(b.bufs[i].p)) > a })
	if i < len(b.bufs) && a >= b.bufs[i].addr {
		return b.bufs[i]
	}
	return nil
}

func (b *Backend) memDiff(a uint64, dev, mod byte, w driver.DMAWrite) error {
	where := fmt.Sprintf("%#x", a)
	ctx := ""
	if x := b.find(a); x != nil {
		i := int(a - x.addr)
		where = fmt.Sprintf("%#x (buffer %#x + %#x)", a, x.addr, i)
		// The device's octets as its write had them; the model's as
		// it wrote them (the shadow).
		ctx = fmt.Sprintf("\n  device %s\n  model  %s", around(w.Octets, int(a-w.Addr)), around(x.s, i))
	}
	return fmt.Errorf("mirror: host memory at %s: the device wrote %#02x, the model %#02x (the device's write of %d octets at %#x)%s",
		where, dev, mod, len(w.Octets), w.Addr, ctx)
}

// Check waits until the device has caught up with the model (up to
// 200,000 clocks of it) and reports the first difference: one found
// already, the model's writes or transmit octets the device has not made,
// or the device's the model has not.
func (b *Backend) Check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.check()
}

func (b *Backend) check() error {
	for i := 0; i < 200; i++ {
		if err := b.Err(); err != nil {
			return err
		}
		if _, err := b.p.Run(0); err != nil {
			return err
		}
		b.takeDeviceWrites()
		if len(b.mq) == 0 && len(b.dq) == 0 && b.wireEven() {
			return b.Err()
		}
		if _, err := b.p.Run(1000); err != nil {
			return err
		}
	}
	if err := b.Err(); err != nil {
		return err
	}
	if a, q, ok := first(b.mq); ok {
		return fmt.Errorf("mirror: the model wrote %d octets of host memory the device has not after 200,000 clocks; "+
			"the first at %#x: %#02x%s", count(b.mq), a, q[0], b.memContext(a))
	}
	if a, q, ok := first(b.dq); ok {
		return fmt.Errorf("mirror: the device wrote %d octets of host memory the model did not; the first at %#x: %#02x%s",
			count(b.dq), a, q[0], b.memContext(a))
	}
	b.wmu.Lock()
	defer b.wmu.Unlock()
	for qpn, st := range b.wire {
		for c := range 2 {
			var n [2]int
			for k, sd := range st.side {
				if sd != nil {
					n[k] = len(sd.q[c])
				}
			}
			if n[0] != n[1] {
				return fmt.Errorf("mirror: QP %d: after %d FPDUs alike, the device sent %d more %s and the model %d more",
					qpn, st.n[c], n[0], []string{"of its send queue's", "Read Responses"}[c], n[1])
			}
		}
	}
	return errors.New("mirror: the wire streams did not even out")
}

func (b *Backend) wireEven() bool {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	for _, st := range b.wire {
		for _, sd := range st.side {
			if sd != nil && (len(sd.q[0]) != 0 || len(sd.q[1]) != 0) {
				return false
			}
		}
	}
	return true
}

func (b *Backend) memContext(a uint64) string {
	x := b.find(a)
	if x == nil {
		return ""
	}
	i := int(a - x.addr)
	return fmt.Sprintf(" (buffer %#x + %#x)\n  device %s\n  model  %s", x.addr, i, around(x.p, i), around(x.s, i))
}

func first(m map[uint64][]byte) (uint64, []byte, bool) {
	var best uint64
	var q []byte
	for a, v := range m {
		if q == nil || a < best {
			best, q = a, v
		}
	}
	return best, q, q != nil
}

func count(m map[uint64][]byte) int {
	n := 0
	for _, q := range m {
		n += len(q)
	}
	return n
}

// Close checks (Check), then closes both devices; the first difference
// is its error.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.Err()
	}
	b.closed = true
	err := b.check()
	perr := b.p.Close()
	b.m.Close()
	if err != nil {
		return err
	}
	return perr
}

// firstDiff is the index of the first octet where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// around shows the octets of p from 16 before i to 16 after, with i's in
// brackets.
func around(p []byte, i int) string {
	lo, hi := max(i-16, 0), min(i+17, len(p))
	var s []byte
	s = fmt.Appendf(s, "[%d:%d]", lo, hi)
	for j := lo; j < hi; j++ {
		if j == i {
			s = fmt.Appendf(s, " [%02x]", p[j])
		} else {
			s = fmt.Appendf(s, " %02x", p[j])
		}
	}
	return string(s)
}

// queue passes segments on in order without ever blocking the sender (the
// device's reader must never wait for the driver, or a barrier would).
type queue struct {
	mu   sync.Mutex
	cond *sync.Cond
	q    []driver.Segment
	done bool
	ch   chan driver.Segment
}

func newQueue() *queue {
	q := &queue{ch: make(chan driver.Segment, 64)}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

func (q *queue) push(s driver.Segment) {
	q.mu.Lock()
	q.q = append(q.q, s)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *queue) close() {
	q.mu.Lock()
	q.done = true
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *queue) run() {
	defer close(q.ch)
	for {
		q.mu.Lock()
		for len(q.q) == 0 && !q.done {
			q.cond.Wait()
		}
		if len(q.q) == 0 {
			q.mu.Unlock()
			return
		}
		s := q.q[0]
		q.q[0] = driver.Segment{}
		q.q = q.q[1:]
		q.mu.Unlock()
		q.ch <- s
	}
}
