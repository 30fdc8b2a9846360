// Package driver is the openrnic driver's view of a device: one interface,
// Backend, over the three ways the driver reaches a device
// (docs/device.md, "The driver's backends"), and Device, the driver's
// side of the host-interface contract on top of it (the register map walk,
// the admin mailbox, the doorbells).
//
// # The backend interface
//
// A Backend offers four things, each shaped after what VFIO gives a user
// space driver, so that the vfio backend (issue 31) implements it without
// changing it:
//
//   - MMIO: Read32 and Write32 at byte offsets in the BAR. With VFIO the
//     BAR is mmap()ed from the device fd (VFIO_DEVICE_GET_REGION_INFO) and
//     these are 32-bit loads and stores to it; the sim backend turns them
//     into MMIO_READ/MMIO_WRITE messages; the model answers them in
//     process. Errors exist for the backends that can lose the device (a
//     closed socket); a mapped BAR never fails.
//   - DMA memory: Alloc returns a Buffer with a device address and a
//     byte slice. The slice is mmap()ed memory, never Go heap: the device
//     reads and writes it behind the Go runtime's back, so it must not be
//     moved or collected, and with VFIO it must be pinned and mapped by
//     VFIO_IOMMU_MAP_DMA at an IOVA (the Buffer's Addr) that the backend
//     chooses. The sim backend carves buffers from the memfd the device
//     process maps (Addr = offset in the memfd); the model carves them from
//     anonymous mappings and assigns addresses as an IOVA allocator would.
//     The driver declares the addresses to the device with DMA_WINDOW; the
//     backend's own mapping is a separate, earlier step (the IOMMU's), so
//     the device's window check and the IOMMU both hold.
//   - Interrupts: Vector(v) is a channel that receives when vector v
//     fires; fires that come before the receiver drains it coalesce into
//     one, as an eventfd's counter does. With VFIO each MSI-X vector is
//     bound to an eventfd (VFIO_DEVICE_SET_IRQS) whose reads a goroutine
//     forwards to the channel; the sim backend forwards IRQ messages.
//   - The network seam: Network() returns the device's segment streams,
//     {qpn, sequence number, octets} in and out (docs/device.md, "Shape"),
//     for the backends where host software relays them to kernel TCP
//     sockets (sim, model). It returns nil for vfio: on a board the MAC and
//     the 4-tuple classifier are the network, and there is no seam.
//
// # What is here and what is not
//
// Device walks the register map (driver/regmap), runs admin commands
// through the mailbox (Exec) and rings doorbells. On top of that, the
// verbs-shaped API (verbs.go: PDs, MRs, CQs, QPs posting and polling over
// the rings) and the relay (relay.go: MPA startup in host software, then
// socket octets to and from the network seam).
package driver

import (
	"errors"
	"fmt"
	"sync"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/regs"
)

// Buffer is DMA memory: Mem is mapped outside the Go heap, Addr is the
// address the device uses for Mem[0].
type Buffer struct {
	Addr uint64
	Mem  []byte
}

// Segment is a piece of an offloaded connection's TCP stream: the QP (the
// datapath's connection number), the TCP sequence number of its first
// octet, and the octets.
type Segment struct {
	QPN    uint16
	Seq    uint32
	Octets []byte
}

// DMAWrite is a run of octets a device's DMA write put into host memory
// at device address Addr (what a simulated device reports for the
// sim-versus-model mirror, driver/mirror).
type DMAWrite struct {
	Addr   uint64
	Octets []byte
}

// Network is the device's side of the network seam.
type Network interface {
	// SegIn gives the device a segment received on the connection's TCP
	// socket.
	SegIn(s Segment) error
	// SegOut delivers the segments the device sends, for the host to
	// write to the connection's socket.
	SegOut() <-chan Segment
	// Sent counts the segments the device has sent so far, those SegOut's
	// channel has not delivered yet included: once a QP is drained, every
	// segment of it is among them (Relay.Remove waits for them).
	Sent() uint64
}

// Backend is the device as the driver reaches it (see the package doc).
type Backend interface {
	Read32(off uint32) (uint32, error)
	Write32(off uint32, v uint32) error
	// BARSize is the size of the BAR in octets.
	BARSize() uint32
	// Alloc returns size octets (rounded up to 4 KiB) of DMA memory,
	// aligned to 4 KiB in both the mapping and the device address.
	Alloc(size int) (*Buffer, error)
	// Free releases a buffer from Alloc. The driver frees only memory the
	// device no longer touches (after the fencing command: MR_INVALIDATE,
	// QP_DRAIN, DESTROY_CQ).
	Free(b *Buffer) error
	// Vector returns the channel of interrupt vector v.
	Vector(v int) (<-chan struct{}, error)
	// Network returns the network seam, or nil if the device has its own
	// network (vfio).
	Network() Network
	// Close releases the device.
	Close() error
}

// MaxAdminPolls bounds how many times Exec reads STATUS for one command
// before it gives up: a device that stays BUSY longer is stuck, and a
// bound in reads (not in time) keeps the answer the same on a fast or a
// loaded machine.
const MaxAdminPolls = 1 << 20

// Device is a walked device: the blocks the register map says it has and
// the capabilities of its ID block.
type Device struct {
	B   Backend
	Map *regmap.Device

	v verbsState // the verbs API's bookkeeping (verbs.go)
	// exec serialises Exec: the mailbox runs one command at a time
	// (docs/device.md), and one program may drive the device from several
	// goroutines (rnic-loader serve: its sessions and its operators).
	exec sync.Mutex
}

// Open walks the device's register map and refuses a device this driver
// cannot drive (regmap.Walk's refusals).
func Open(b Backend) (*Device, error) {
	m, err := regmap.Walk(b, b.BARSize())
	if err != nil {
		return nil, err
	}
	return &Device{B: b, Map: m}, nil
}

// AdminError is an admin command the device refused: the command, the
// status code and what the driver can do about it.
type AdminError struct {
	Cmd    hostif.Command
	Status hostif.AdminStatus
}

var adminAdvice = map[hostif.AdminStatus]string{
	hostif.AdminBadOpcode:   "the device does not know the command: use a driver built for this device",
	hostif.AdminBadIndex:    "a qpn, cqn, MR index, vector or window slot is beyond the device's capabilities (ID block)",
	hostif.AdminBadState:    "the object is not in a state the command applies to (created, drained, free): check the driver's bookkeeping",
	hostif.AdminBadArg:      "a ring size, alignment, access mask or unused argument is out of range (docs/device.md, Admin commands)",
	hostif.AdminOutOfWindow: "declare a DMA window (DMA_WINDOW) covering the ring or region first",
}

func (e *AdminError) Error() string {
	adv := adminAdvice[e.Status]
	if adv == "" {
		adv = "the device answered a status docs/device.md does not define"
	}
	return fmt.Sprintf("driver: admin %v refused: %v; %s", e.Cmd, e.Status, adv)
}

// ErrAdminStuck is returned when a command stays BUSY for MaxAdminPolls
// reads of STATUS.
var ErrAdminStuck = errors.New("driver: the admin mailbox stayed BUSY; the device is stuck: reset it (and report the command that hung it)")

// Exec runs one admin command: it writes all eight ARG words (unused ones
// 0), then CMD, polls STATUS until BUSY clears and returns the output
// words. A refusal is an *AdminError. Calls from several goroutines run
// one after the other, as the mailbox requires (docs/device.md).
func (d *Device) Exec(c hostif.Command) (hostif.Args, error) {
	args, err := c.Args()
	if err != nil {
		return hostif.Args{}, err
	}
	d.exec.Lock()
	defer d.exec.Unlock()
	base := d.Map.AdminBase()
	// Offsets from the generated map, relative to the block so that the
	// chain's base (not the constant) places them.
	rel := func(abs uint32) uint32 { return base + abs - regs.AdminBase }
	if err := d.idle(rel); err != nil {
		return hostif.Args{}, err
	}
	argOff := []uint32{regs.AdminArg0, regs.AdminArg1, regs.AdminArg2, regs.AdminArg3,
		regs.AdminArg4, regs.AdminArg5, regs.AdminArg6, regs.AdminArg7}
	for i, off := range argOff {
		if err := d.B.Write32(rel(off), args[i]); err != nil {
			return hostif.Args{}, err
		}
	}
	if err := d.B.Write32(rel(regs.AdminCmd), uint32(c.Opcode())); err != nil {
		return hostif.Args{}, err
	}
	st, err := d.wait(rel)
	if err != nil {
		return hostif.Args{}, err
	}
	var out hostif.Args
	for i, off := range argOff {
		if out[i], err = d.B.Read32(rel(off)); err != nil {
			return hostif.Args{}, err
		}
	}
	if st != hostif.AdminOK {
		return out, &AdminError{Cmd: c, Status: st}
	}
	return out, nil
}

func (d *Device) idle(rel func(uint32) uint32) error {
	v, err := d.B.Read32(rel(regs.AdminStatus))
	if err != nil {
		return err
	}
	if v&regs.AdminStatusBusyMask != 0 {
		return errors.New("driver: the admin mailbox is BUSY before a command was written: another " +
			"command is running (commands must be serialised) or the device is stuck")
	}
	return nil
}

func (d *Device) wait(rel func(uint32) uint32) (hostif.AdminStatus, error) {
	for range MaxAdminPolls {
		v, err := d.B.Read32(rel(regs.AdminStatus))
		if err != nil {
			return 0, err
		}
		if v&regs.AdminStatusBusyMask == 0 {
			return hostif.AdminStatus((v & regs.AdminStatusCodeMask) >> regs.AdminStatusCodeShift), nil
		}
	}
	return 0, ErrAdminStuck
}

// EnableVector enables interrupt vector v (its CTRL register: enabled, not
// masked); Backend.Vector(v) then receives its interrupts.
func (d *Device) EnableVector(v uint32) error {
	if v >= d.Map.Vectors {
		return fmt.Errorf("driver: vector %d: the device has %d (ID cap_vectors)", v, d.Map.Vectors)
	}
	off := d.Map.VectorsBase() + regs.VectorsVec - regs.VectorsBase + regs.VectorsVecCtrl + v*regs.VectorsVecCtrlStride
	return d.B.Write32(off, regs.VectorsVecCtrlEnableMask)
}

// Doorbell offsets, from the chain's doorbells block.
func (d *Device) dbOff(abs uint32) uint32 { return d.Map.DoorbellsBase() + abs - regs.DoorbellsBase }

// RingSQ writes the SQ_PI doorbell of qpn: the SQ's producer index.
func (d *Device) RingSQ(qpn uint16, pi uint16) error {
	return d.B.Write32(d.dbOff(regs.DoorbellsQPDB)+8*uint32(qpn), uint32(pi))
}

// RingRQ writes the RQ_PI doorbell of qpn.
func (d *Device) RingRQ(qpn uint16, pi uint16) error {
	return d.B.Write32(d.dbOff(regs.DoorbellsQPDB)+8*uint32(qpn)+4, uint32(pi))
}

// CQ_CI arm bits.
const (
	CQArm          = 1 << 31 // raise the CQ's vector at its next entry
	CQArmSolicited = 1 << 30 // only at a Send with Solicited Event or an error
)

// RingCQ writes the CQ_CI doorbell of cqn: the consumer index and the arm
// bits (CQArm, CQArmSolicited).
func (d *Device) RingCQ(cqn uint16, ci uint16, arm uint32) error {
	return d.B.Write32(d.dbOff(regs.DoorbellsCQDB)+4*uint32(cqn), uint32(ci)|arm&(CQArm|CQArmSolicited))
}
