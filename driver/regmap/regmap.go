// Package regmap walks an openrnic device's register map: the chain of
// self-describing blocks that starts at offset 0 of the BAR (hw/regs/rnic.rdl,
// docs/registers-design.md), and reads its counters.
//
// Each block starts with a type, a version (major[31:16], minor[15:0]) and
// the BAR offset of the next block (0 ends the chain). Walk refuses:
//   - a device whose ID block is missing or whose device ID or register map
//     major version this driver does not know;
//   - a block of a known type whose major version this driver does not know
//     (a minor version above the driver's is accepted: it only adds
//     registers in free slots);
//   - a chain that loops, or whose next pointer is misaligned or outside
//     the BAR, so that a walk always ends;
//   - a chain without one of the blocks this driver needs (the ID, counters,
//     admin mailbox, interrupt vectors and doorbells blocks; the flash block
//     is known but optional: a device without a configuration flash, or the
//     driver's model, has none, and driver/flash says so);
//   - capabilities beyond what the map has registers for: more QPs or CQs
//     than the doorbells block has doorbells, more vectors than the vectors
//     block has registers, or no vector at all (vector 0 carries the event
//     ring, docs/device.md).
//
// A block of a type this driver does not know is skipped and listed with
// Known false: a newer device may add blocks an older driver has no use for.
package regmap

import (
	"errors"
	"fmt"
	"strings"

	"github.com/openrnic/rnic/driver/regs"
)

// MMIO reads the device's BAR: a 32-bit register at a byte offset.
type MMIO interface {
	Read32(off uint32) (uint32, error)
}

// headerSize is the size of a block header: type, version, next.
const headerSize = 12

// Block is one block found on the chain.
type Block struct {
	Name         string // regs.Blocks' name; "" for an unknown type
	Base         uint32 // BAR offset of the block
	Type         uint32
	VersionMajor uint32
	VersionMinor uint32
	Next         uint32 // BAR offset of the next block, 0 at the end
	Known        bool   // the driver knows this type (and so its major version)
}

// Device is what the ID block says, and the chain.
type Device struct {
	DeviceID     uint32
	MapMajor     uint32
	MapMinor     uint32
	BuildHash    uint32
	DataWidth    uint32 // network datapath width in bits
	Conns        uint32 // connection contexts
	STags        uint32 // STag table entries
	SQLog2       uint32
	RQLog2       uint32
	CQLog2       uint32
	CQs          uint32 // completion queues (ID 1.1)
	Vectors      uint32 // interrupt vectors (ID 1.1)
	Windows      uint32 // DMA window slots (ID 1.1)
	Blocks       []Block
	countersBase uint32
}

// Bases of the blocks a driver uses beyond the ID and counters blocks, as
// the walk found them (the chain, not the generated constants, says where
// a block is: a newer device may move blocks within a major map version's
// rules only by the chain).
func (d *Device) base(typ uint32) uint32 {
	b, _ := d.Block(typ)
	return b.Base
}

// AdminBase is the BAR offset of the admin mailbox block.
func (d *Device) AdminBase() uint32 { return d.base(regs.AdminType) }

// VectorsBase is the BAR offset of the interrupt vectors block.
func (d *Device) VectorsBase() uint32 { return d.base(regs.VectorsType) }

// DoorbellsBase is the BAR offset of the doorbells block.
func (d *Device) DoorbellsBase() uint32 { return d.base(regs.DoorbellsType) }

// Block returns the block of a type, if the chain has it.
func (d *Device) Block(typ uint32) (Block, bool) {
	for _, b := range d.Blocks {
		if b.Type == typ {
			return b, true
		}
	}
	return Block{}, false
}

// RefusedError says why the driver refuses a device and what to do about it.
type RefusedError struct {
	Reason string // what is wrong, naming the block, offset and values
	Action string // what the operator can do
}

func (e *RefusedError) Error() string {
	return "regmap: device refused: " + e.Reason + "; " + e.Action
}

const (
	actionDriver = "use a driver (rnic-loader) built from the register map the device was built from " +
		"(docs/registers.md), or load a device built from this driver's map"
	actionDevice = "check that the BAR is an openrnic device's and that the device is out of reset"
)

func refuse(action, format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...), Action: action}
}

func knownBlock(typ uint32) (regs.Block, bool) {
	for _, b := range regs.Blocks {
		if b.Type == typ {
			return b, true
		}
	}
	return regs.Block{}, false
}

func versionsKnown(b regs.Block) string {
	return fmt.Sprintf("%d.x", b.VersionMajor)
}

// Walk reads the chain from offset 0 of a BAR of barSize octets.
func Walk(m MMIO, barSize uint32) (*Device, error) {
	read := func(off uint32) (uint32, error) {
		v, err := m.Read32(off)
		if err != nil {
			return 0, fmt.Errorf("regmap: read at %#x: %w", off, err)
		}
		return v, nil
	}
	if barSize < regs.IDSize {
		return nil, refuse(actionDevice, "the BAR is %d octets, smaller than the ID block (%d)", barSize, regs.IDSize)
	}
	d := &Device{}
	visited := map[uint32]bool{}
	for off := uint32(0); ; {
		visited[off] = true
		var hdr [3]uint32
		for i := range hdr {
			v, err := read(off + 4*uint32(i))
			if err != nil {
				return nil, err
			}
			hdr[i] = v
		}
		b := Block{Base: off, Type: hdr[0], VersionMajor: hdr[1] >> regs.VersionMajorShift,
			VersionMinor: hdr[1] & regs.VersionMinorMask, Next: hdr[2]}
		if off == 0 && b.Type != regs.IDType {
			return nil, refuse(actionDevice, "the block at offset 0 has type %#08x, not the ID block's %#08x",
				b.Type, regs.IDType)
		}
		if kb, ok := knownBlock(b.Type); ok {
			b.Name, b.Known = kb.Name, true
			if b.VersionMajor != kb.VersionMajor {
				return nil, refuse(actionDriver,
					"block %q (type %#08x) at %#x has version %d.%d; this driver knows version %s",
					kb.Name, b.Type, off, b.VersionMajor, b.VersionMinor, versionsKnown(kb))
			}
			if kb.Size > barSize || off > barSize-kb.Size {
				return nil, refuse(actionDevice, "block %q at %#x (%d octets) runs past the end of the %d-octet BAR",
					kb.Name, off, kb.Size, barSize)
			}
		}
		d.Blocks = append(d.Blocks, b)
		if b.Next == 0 {
			break
		}
		switch {
		case b.Next%4 != 0:
			return nil, refuse(actionDevice, "block at %#x: next pointer %#x is not 32-bit aligned", off, b.Next)
		case b.Next > barSize-headerSize:
			return nil, refuse(actionDevice, "block at %#x: next pointer %#x is outside the %d-octet BAR",
				off, b.Next, barSize)
		case visited[b.Next]:
			return nil, refuse(actionDevice, "block at %#x: next pointer %#x goes back to a block already walked (a loop)",
				off, b.Next)
		}
		off = b.Next
	}
	if err := d.readID(read); err != nil {
		return nil, err
	}
	var missing []string
	for _, kb := range regs.Blocks {
		if _, ok := d.Block(kb.Type); !ok && !Optional(kb.Type) {
			missing = append(missing, fmt.Sprintf("%s (type %#08x)", kb.Name, kb.Type))
		}
	}
	if len(missing) > 0 {
		return nil, refuse(actionDriver, "the chain has no %s block", strings.Join(missing, ", no "))
	}
	cb, _ := d.Block(regs.CountersType)
	d.countersBase = cb.Base
	return d, nil
}

// Optional says whether a known block may be missing from a device's chain:
// the flash block (driver/flash).
func Optional(typ uint32) bool { return typ == regs.FlashType }

func (d *Device) readID(read func(uint32) (uint32, error)) error {
	words := []struct {
		off uint32
		dst *uint32
	}{
		{regs.IDDeviceID, &d.DeviceID}, {regs.IDBuildHash, &d.BuildHash},
		{regs.IDDataWidth, &d.DataWidth}, {regs.IDCapConns, &d.Conns}, {regs.IDCapSTags, &d.STags},
		{regs.IDCapCQs, &d.CQs}, {regs.IDCapVectors, &d.Vectors}, {regs.IDCapWindows, &d.Windows},
	}
	for _, w := range words {
		v, err := read(w.off)
		if err != nil {
			return err
		}
		*w.dst = v
	}
	if d.DeviceID != regs.IDDeviceIDValue {
		return refuse(actionDevice, "device ID %#08x at %#x is not an openrnic device's (%#08x)",
			d.DeviceID, regs.IDDeviceID, regs.IDDeviceIDValue)
	}
	mv, err := read(regs.IDMapVersion)
	if err != nil {
		return err
	}
	d.MapMajor = (mv & regs.IDMapVersionMajorMask) >> regs.IDMapVersionMajorShift
	d.MapMinor = (mv & regs.IDMapVersionMinorMask) >> regs.IDMapVersionMinorShift
	if d.MapMajor != regs.IDMapVersionMajorValue {
		return refuse(actionDriver, "register map version %d.%d; this driver knows version %d.x",
			d.MapMajor, d.MapMinor, regs.IDMapVersionMajorValue)
	}
	q, err := read(regs.IDCapQueues)
	if err != nil {
		return err
	}
	d.SQLog2 = (q & regs.IDCapQueuesSQLog2Mask) >> regs.IDCapQueuesSQLog2Shift
	d.RQLog2 = (q & regs.IDCapQueuesRQLog2Mask) >> regs.IDCapQueuesRQLog2Shift
	d.CQLog2 = (q & regs.IDCapQueuesCQLog2Mask) >> regs.IDCapQueuesCQLog2Shift
	return d.checkCaps()
}

// The map's maxima: the doorbells and vector registers it has room for.
const (
	MaxQPs     = regs.DoorbellsQPDBPICount / 2 // SQ_PI and RQ_PI per QP
	MaxCQs     = regs.DoorbellsCQDBCQCICount
	MaxVectors = regs.VectorsVecCtrlCount
)

func (d *Device) checkCaps() error {
	for _, c := range []struct {
		name     string
		off, val uint32
		min, max uint32
		why      string
	}{
		{"connections (QPs)", regs.IDCapConns, d.Conns, 1, MaxQPs, "the doorbells block has SQ_PI and RQ_PI for"},
		{"completion queues", regs.IDCapCQs, d.CQs, 1, MaxCQs, "the doorbells block has CQ_CI for"},
		{"interrupt vectors", regs.IDCapVectors, d.Vectors, 1, MaxVectors, "the vectors block has registers for"},
	} {
		if c.val < c.min || c.val > c.max {
			return refuse(actionDevice, "the ID block (%#x) says %d %s; %s %d, and at least %d is needed",
				c.off, c.val, c.name, c.why, c.max, c.min)
		}
	}
	return nil
}

// Counter is one counter's value.
type Counter struct {
	Name  string
	Value uint64
}

// Counters reads every counter of the counters block, each low word first:
// the device latches the high word when the low word is read, so a carry
// between the two reads is never torn.
func (d *Device) Counters(m MMIO) ([]Counter, error) {
	if d.countersBase == 0 {
		return nil, errors.New("regmap: no counters block (Device not from Walk)")
	}
	out := make([]Counter, 0, len(regs.Counters))
	for _, c := range regs.Counters {
		off := c.Offset - regs.CountersBase + d.countersBase
		lo, err := m.Read32(off)
		if err != nil {
			return nil, fmt.Errorf("regmap: counter %s at %#x: %w", c.Name, off, err)
		}
		hi, err := m.Read32(off + 4)
		if err != nil {
			return nil, fmt.Errorf("regmap: counter %s at %#x: %w", c.Name, off+4, err)
		}
		out = append(out, Counter{Name: c.Name, Value: uint64(hi)<<32 | uint64(lo)})
	}
	return out, nil
}
