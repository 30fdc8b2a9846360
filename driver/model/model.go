// Package model is the driver's `model` backend: an openrnic device in
// process, built from the Go reference packages, the oracle the simulated
// device (hw/sim) is checked against octet for octet (docs/device.md).
//
//   - the BAR: the ID block with this model's capabilities, the counters
//     block, the admin mailbox, the interrupt vectors' registers, the
//     doorbells;
//   - the admin commands, each checked in full before anything changes,
//     so a refusal leaves every table as it was: CQs, QPs and their
//     states, the MR table, the DMA windows, the event ring's
//     configuration (admin.go);
//   - doorbells: one to a QP or CQ that does not exist raises
//     DOORBELL_BAD, an SQ or RQ producer index past the ring's size raises
//     RING_OVERRUN and moves the QP to the error state; otherwise the SQ
//     or RQ engine runs (doorbell.go);
//   - the transmit side (datapath.go): SQ entries fetched through the
//     window check, the local buffer checked in the MR table, the RDMAP
//     message built by iwarp/rdmap, segmented by MULPDU (iwarp/ddp),
//     framed by iwarp/mpa from QP_RTS's sequence numbers and marker base,
//     one FPDU per segment out of the network seam; the ORD and the fence
//     hold Reads and fenced entries; completions in SQ order into the
//     send CQ; a bad entry completes BAD_WQE or LOCAL_ACCESS, the QP goes
//     to error and every later entry completes FLUSHED;
//   - the receive side (rx.go): segments in order through mpa.Receiver and
//     rdmap.Stream (tagged placement through an STag table that mirrors
//     the MR table, untagged into the RQ buffers the RQ engine posted),
//     Receive CQEs, Read Requests answered with Read Responses, Send with
//     Invalidate invalidating the MR entry, errors answered with a
//     Terminate, QP_ERROR and the QP's error state; segments out of order,
//     duplicate, empty or for a QP not in RTS to the exception ring;
//   - the event ring and the exception ring, written through the DMA
//     window check, CQ and vector 0 interrupts (events.go);
//   - DMA memory outside the Go heap at IOVA-like device addresses, and
//     the window check every device access goes through (mem.go).
//
// The model has no goroutine in its device logic: every step runs inside
// the driver call that causes it (a doorbell write, SegIn, an admin
// command), under the one mutex. Only SegOut's channel is fed by a
// goroutine, which moves queued segments and nothing else; TakeSegments
// steps without it. Given the same calls, the model writes the same
// octets, memory and CQEs.
//
// Where docs/device.md leaves a choice open the model decides, and says
// so where it does: which work request carries an error's status (fail),
// the exception ring overwriting its oldest buffer, a local fault's
// Terminate (RFC 5040 7, Local Catastrophic), vector moderation by time
// (the model has no clock: entries a MOD_TIME holds back are due at the
// end of the driver call that made them). Not yet: the Responder's wait
// for the first FPDU (RFC 5044 7.1.3 rule 4: the relay holds the device's
// first segments instead), RDMA Read Requests answered later than at once (the
// IRD bounds the requests a peer may have outstanding; the model never
// has more than one).
package model

import (
	"errors"
	"fmt"
	"sync"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/ddp"
)

// Config is the build the model pretends to be: its capabilities (ID
// block) and how it behaves.
type Config struct {
	QPs, CQs, STags uint32 // numbers of QPs (2^CONN_W), CQs, MR entries
	Vectors         uint32 // interrupt vectors, at most regs.VectorsVecCtrlCount
	Windows         uint32 // DMA window slots
	SQLog2, RQLog2  uint8  // largest rings, log2 entries
	CQLog2          uint8
	DataWidth       uint32
	BuildHash       uint32
	// AdminLatency is how many reads of STATUS a command stays BUSY for
	// (0: it completes at the CMD write). The model has no clock; the
	// driver's polls stand for the time a command takes, which lets a test
	// see BUSY deterministically.
	AdminLatency int
}

// DefaultConfig is a small build: 64 QPs and CQs, 256 MRs, 4 vectors, 8
// windows, rings of up to 2^12 entries.
var DefaultConfig = Config{QPs: 64, CQs: 64, STags: 256, Vectors: 4, Windows: 8,
	SQLog2: 12, RQLog2: 12, CQLog2: 12, DataWidth: 512, BuildHash: 0x0de10001}

// BARSize is the model's BAR: 128 KiB, the map's 0x18000 octets rounded
// up to a power of two.
const BARSize = 0x20000

// Device is the model device. Its methods are safe for concurrent use: one
// mutex, the model's "clock", orders every access as a bus would.
type Device struct {
	cfg Config

	mu     sync.Mutex
	t      tables
	mem    memory
	admin  adminUnit
	vec    []vector
	cnt    counters
	closed bool

	lostEvents uint64
	lostCQEs   uint64
	timed      bool // entries wait for their MOD_TIME (settle)

	// The data path (datapath.go, rx.go): each QP's state from QP_RTS
	// on, the STag table the MR table is mirrored into for iwarp/ddp's
	// placement (syncRegions), and the network seam.
	run        map[uint16]*qpRun
	stags      *ddp.STagTable
	registered []bool // MR index registered in stags
	regSTag    []uint32
	net        seam

	// The RQ engine's posts, recorded for the oracle (RecordRQPosts).
	rqPostsOn bool
	rqPosts   []RQPost
}

// New builds a model device. It refuses a configuration the register map
// has no room for (more vectors, QPs or CQs than registers and doorbells).
func New(cfg Config) (*Device, error) {
	switch {
	case cfg.QPs == 0 || cfg.QPs > regs.DoorbellsQPDBPICount/2:
		return nil, fmt.Errorf("model: %d QPs; the doorbells block has room for 1..%d", cfg.QPs, regs.DoorbellsQPDBPICount/2)
	case cfg.CQs == 0 || cfg.CQs > regs.DoorbellsCQDBCQCICount:
		return nil, fmt.Errorf("model: %d CQs; the doorbells block has room for 1..%d", cfg.CQs, regs.DoorbellsCQDBCQCICount)
	case cfg.Vectors == 0 || cfg.Vectors > regs.VectorsVecCtrlCount:
		return nil, fmt.Errorf("model: %d vectors; the vectors block has room for 1..%d", cfg.Vectors, regs.VectorsVecCtrlCount)
	case cfg.STags == 0 || cfg.STags > 1<<16:
		return nil, fmt.Errorf("model: %d MR entries; MR_WRITE's index is 16 bits (1..65536)", cfg.STags)
	case cfg.Windows == 0:
		return nil, errors.New("model: no DMA window slot; the driver could declare no memory (set Windows)")
	case cfg.SQLog2 == 0 || cfg.RQLog2 == 0 || cfg.CQLog2 == 0 || cfg.SQLog2 > 16 || cfg.RQLog2 > 16 || cfg.CQLog2 > 16:
		return nil, errors.New("model: ring sizes are log2 1..16 (indices are 16-bit free-running counters)")
	}
	d := &Device{cfg: cfg, vec: make([]vector, cfg.Vectors), run: map[uint16]*qpRun{}, stags: ddp.NewSTagTable(),
		registered: make([]bool, cfg.STags), regSTag: make([]uint32, cfg.STags)}
	d.net.cond = sync.NewCond(&d.mu)
	d.net.stop = make(chan struct{})
	d.t = newTables(cfg)
	d.mem.init()
	for i := range d.vec {
		d.vec[i].ch = make(chan struct{}, 1)
	}
	return d, nil
}

var _ driver.Backend = (*Device)(nil)

// BARSize implements driver.Backend.
func (d *Device) BARSize() uint32 { return BARSize }

func barCheck(off uint32) error {
	if off%4 != 0 || off >= BARSize {
		return fmt.Errorf("model: BAR access at %#x: outside the %d-octet BAR or not 32-bit aligned; "+
			"the driver's offsets come from driver/regs", off, BARSize)
	}
	return nil
}

// in reports whether off is in [base, base+size) and its offset there.
func in(off, base, size uint32) (uint32, bool) {
	if off >= base && off-base < size {
		return off - base, true
	}
	return 0, false
}

// Read32 implements driver.Backend: a register read.
func (d *Device) Read32(off uint32) (uint32, error) {
	if err := barCheck(off); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.settle()
	if d.closed {
		return 0, errClosed
	}
	if v, ok := d.header(off); ok {
		return v, nil
	}
	if r, ok := in(off, regs.IDBase, regs.IDSize); ok {
		return d.readID(regs.IDBase + r), nil
	}
	if _, ok := in(off, regs.CountersBase, regs.CountersSize); ok {
		return d.cnt.read(off), nil
	}
	if _, ok := in(off, regs.AdminBase, regs.AdminSize); ok {
		return d.readAdmin(off), nil
	}
	if r, ok := in(off, regs.VectorsVec, regs.VectorsVecSize); ok {
		return d.readVector(r), nil
	}
	// Doorbells read 0 (docs/device.md); so does every unused address.
	return 0, nil
}

// Write32 implements driver.Backend: a register write.
func (d *Device) Write32(off uint32, v uint32) error {
	if err := barCheck(off); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.settle()
	if d.closed {
		return errClosed
	}
	if _, ok := in(off, regs.AdminBase, regs.AdminSize); ok {
		d.writeAdmin(off, v)
		return nil
	}
	if r, ok := in(off, regs.VectorsVec, regs.VectorsVecSize); ok {
		d.writeVector(r, v)
		return nil
	}
	if r, ok := in(off, regs.DoorbellsQPDB, regs.DoorbellsQPDBSize); ok {
		d.qpDoorbell(r, v)
		return nil
	}
	if r, ok := in(off, regs.DoorbellsCQDB, regs.DoorbellsCQDBSize); ok {
		d.cqDoorbell(r, v)
		return nil
	}
	// Writes to read-only registers and unused addresses change nothing,
	// as the generated register block's (docs/registers-design.md).
	return nil
}

var errClosed = errors.New("model: the device is closed; open a new one")

// header answers the block headers of the chain: the map's blocks but the
// flash block (the model has no configuration flash; regmap.Optional).
func (d *Device) header(off uint32) (uint32, bool) {
	blocks := make([]regs.Block, 0, len(regs.Blocks))
	for _, b := range regs.Blocks {
		if !regmap.Optional(b.Type) {
			blocks = append(blocks, b)
		}
	}
	for i, b := range blocks {
		r, ok := in(off, b.Base, 12)
		if !ok {
			continue
		}
		switch r {
		case regs.HdrType:
			return b.Type, true
		case regs.HdrVersion:
			return b.VersionMajor<<regs.VersionMajorShift | b.VersionMinor, true
		default:
			if i+1 < len(blocks) {
				return blocks[i+1].Base, true
			}
			return 0, true
		}
	}
	return 0, false
}

func (d *Device) readID(off uint32) uint32 {
	c := d.cfg
	switch off {
	case regs.IDDeviceID:
		return regs.IDDeviceIDValue
	case regs.IDMapVersion:
		return regs.IDMapVersionMajorValue<<regs.IDMapVersionMajorShift | regs.IDMapVersionMinorValue
	case regs.IDBuildHash:
		return c.BuildHash
	case regs.IDDataWidth:
		return c.DataWidth
	case regs.IDCapConns:
		return c.QPs
	case regs.IDCapSTags:
		return c.STags
	case regs.IDCapQueues:
		return uint32(c.SQLog2)<<regs.IDCapQueuesSQLog2Shift | uint32(c.RQLog2)<<regs.IDCapQueuesRQLog2Shift |
			uint32(c.CQLog2)<<regs.IDCapQueuesCQLog2Shift
	case regs.IDCapCQs:
		return c.CQs
	case regs.IDCapVectors:
		return c.Vectors
	case regs.IDCapWindows:
		return c.Windows
	}
	return 0
}

// counters: the counters block, by the low word's offset; reading a low
// word latches the high word, as the hardware's buffer_reads does
// (docs/registers-design.md, Counters).
type counters struct {
	v       map[uint32]uint64
	latched map[uint32]uint32
}

func (c *counters) add(lowOff uint32, n uint64) {
	if c.v == nil {
		c.v = map[uint32]uint64{}
	}
	c.v[lowOff] += n
}

func (c *counters) value(lowOff uint32) uint64 { return c.v[lowOff] }

func (c *counters) read(off uint32) uint32 {
	for _, k := range regs.Counters {
		switch off {
		case k.Offset:
			v := c.value(k.Offset)
			if c.latched == nil {
				c.latched = map[uint32]uint32{}
			}
			c.latched[k.Offset] = uint32(v >> 32)
			return uint32(v)
		case k.Offset + 4:
			return c.latched[k.Offset]
		}
	}
	return 0
}

// Vector implements driver.Backend.
func (d *Device) Vector(v int) (<-chan struct{}, error) {
	if v < 0 || v >= len(d.vec) {
		return nil, fmt.Errorf("model: vector %d: the device has vectors 0..%d (ID cap_vectors)", v, len(d.vec)-1)
	}
	return d.vec[v].ch, nil
}

// Close implements driver.Backend: it unmaps every DMA buffer.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	close(d.net.stop)
	d.net.cond.Broadcast()
	return d.mem.freeAll()
}
