// Package vfio is the driver's backend for a real board: a PCI function
// bound to Linux's vfio-pci, reached through the VFIO container/group API
// (include/uapi/linux/vfio.h, Linux 6.1; no iommufd, which 6.1's headers
// lack). It implements driver.Backend (driver/driver.go):
//
//   - MMIO: the BAR is mmap()ed from the device fd at the offset
//     VFIO_DEVICE_GET_REGION_INFO gives; Read32 and Write32 are single
//     32-bit loads and stores on that mapping.
//   - DMA memory: Alloc takes anonymous memory outside the Go heap
//     (mmap, mlock), gives it an IOVA from the package's own allocator
//     (IOVAAllocator: the IOMMU's usable ranges within the device's DMA
//     mask) and maps it with VFIO_IOMMU_MAP_DMA; Free unmaps it. Mapped
//     refuses an address range outside a live mapping: check every
//     address before it is written to the device.
//   - Interrupts: MSI-X, else MSI, else INTx, each vector bound to an
//     eventfd with VFIO_DEVICE_SET_IRQS (DATA_EVENTFD | ACTION_TRIGGER);
//     a goroutine per vector forwards the eventfd's counts to Vector's
//     channel (coalescing, as an eventfd does). Wait waits for one with
//     a context.
//   - Network: nil; a board's MAC is its network.
//
// Discovery is through Bus (Sysfs, over u-root's pkg/pci), which a fake
// sysfs tree stands in for in tests. Open refuses, with what to do, a
// device not bound to vfio-pci, one without an IOMMU group, and one whose
// group the kernel finds not viable (naming the member bound to a host
// driver). Bind binds a function to vfio-pci through driver_override and
// puts the previous driver back on Restore. docs/vfio.md is the user's
// guide; interop/vfio_test.go proves it on Linux 6.1 in QEMU with QEMU's
// edu device behind intel-iommu.
package vfio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openrnic/rnic/driver"
)

// Config says which device to open and how.
type Config struct {
	// BDF is the function's PCI address (ParseBDF's forms).
	BDF string
	// Bus reads sysfs (default Sysfs{}: /sys).
	Bus Bus
	// DevDir is where the VFIO character devices are (default /dev/vfio).
	DevDir string
	// BAR is the region Read32 and Write32 address (default 0).
	BAR int
	// DMAMask is the device's DMA addressing: all ones below the highest
	// address bit it drives (default 1<<64 - 1; QEMU's edu device has
	// 1<<28 - 1). No IOVA outside it is handed out.
	DMAMask uint64
	// Vectors caps how many interrupt vectors are set up (default: all
	// the interrupt index offers).
	Vectors int
}

// IRQKind is the interrupt mechanism a device was set up with.
type IRQKind int

// The kinds, in the order Open prefers them.
const (
	IRQNone IRQKind = iota
	IRQMSIX
	IRQMSI
	IRQINTx
)

func (k IRQKind) String() string {
	return [...]string{"none", "MSI-X", "MSI", "INTx"}[k]
}

// Region is one region of the device fd (VFIO_DEVICE_GET_REGION_INFO).
type Region struct {
	Index        int
	Size, Offset uint64
	Mmap         bool
}

// Device is an open VFIO device. It implements driver.Backend.
type Device struct {
	PCI  PCIDevice
	Info struct {
		Flags, NumRegions, NumIRQs uint32
	}
	BARRegion Region
	IRQ       IRQKind

	container, group, dev int
	bar                   []byte

	mu      sync.Mutex
	closed  bool
	iova    *IOVAAllocator
	maps    map[uint64]*mapping // by IOVA, live mappings only
	buffers map[*byte]*mapping  // by Mem[0], every buffer not yet freed

	vectors []*vector
}

// mapping is one DMA buffer.
type mapping struct {
	mem    []byte
	iova   uint64
	mapped bool // in the IOMMU (false after Unmap)
}

type vector struct {
	efd  *os.File
	ch   chan struct{}
	done chan struct{}
}

var _ driver.Backend = (*Device)(nil)

// Open opens the device: the sysfs checks (bound to vfio-pci, in an IOMMU
// group), then the container (API version, type 1 v2 IOMMU), the group
// (viable), the device fd, its BAR mapping, bus mastering and its
// interrupts. Everything opened is closed again on failure.
func Open(ctx context.Context, cfg Config) (_ *Device, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bus := cfg.Bus
	if bus == nil {
		bus = Sysfs{}
	}
	devDir := cfg.DevDir
	if devDir == "" {
		devDir = "/dev/vfio"
	}
	mask := cfg.DMAMask
	if mask == 0 {
		mask = ^uint64(0)
	}
	if err := checkMask(mask); err != nil {
		return nil, err
	}
	bdf, err := ParseBDF(cfg.BDF)
	if err != nil {
		return nil, err
	}
	p, err := bus.Device(bdf)
	if err != nil {
		return nil, err
	}
	if p.Driver != "vfio-pci" {
		return nil, &NotBoundError{BDF: bdf, Driver: p.Driver}
	}
	if p.IOMMUGroup < 0 {
		return nil, &NoIOMMUGroupError{BDF: bdf}
	}

	d := &Device{PCI: p, container: -1, group: -1, dev: -1,
		maps: map[uint64]*mapping{}, buffers: map[*byte]*mapping{}}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()

	if d.container, err = unix.Open(filepath.Join(devDir, "vfio"), unix.O_RDWR|unix.O_CLOEXEC, 0); err != nil {
		return nil, fmt.Errorf("vfio: opening the container %s/vfio: %w (is the vfio module loaded? modprobe vfio-pci)", devDir, err)
	}
	if v, err := ioctlInt(d.container, ioctlGetAPIVersion, 0); err != nil || v != apiVersion {
		return nil, fmt.Errorf("vfio: VFIO_GET_API_VERSION gave %d (%v), this driver speaks version %d", v, err, apiVersion)
	}
	if ok, err := ioctlInt(d.container, ioctlCheckExt, typeIOMMUType1v2); err != nil || ok == 0 {
		return nil, fmt.Errorf("vfio: the kernel has no type 1 v2 IOMMU backend (VFIO_CHECK_EXTENSION: %d, %v): modprobe vfio_iommu_type1", ok, err)
	}
	groupPath := filepath.Join(devDir, strconv.Itoa(p.IOMMUGroup))
	if d.group, err = unix.Open(groupPath, unix.O_RDWR|unix.O_CLOEXEC, 0); err != nil {
		hint := "run as root, or give your user the group's device file (chown)"
		if errors.Is(err, unix.EBUSY) {
			hint = "another process (a VM, another driver instance) holds the group"
		}
		return nil, fmt.Errorf("vfio: opening %s: %w: %s", groupPath, err, hint)
	}
	st := groupStatus{Argsz: uint32(unsafe.Sizeof(groupStatus{}))}
	if _, err := ioctl(d.group, ioctlGroupGetStatus, unsafe.Pointer(&st)); err != nil {
		return nil, fmt.Errorf("vfio: VFIO_GROUP_GET_STATUS on %s: %w", groupPath, err)
	}
	if st.Flags&groupFlagsViable == 0 {
		holders, herr := groupHolders(bus, p.IOMMUGroup, bdf)
		if herr != nil {
			holders = nil
		}
		return nil, &GroupNotViableError{BDF: bdf, Group: p.IOMMUGroup, Holders: holders}
	}
	cfd := int32(d.container) // the ioctl reads an int
	if _, err := ioctl(d.group, ioctlGroupSetContainer, unsafe.Pointer(&cfd)); err != nil {
		return nil, fmt.Errorf("vfio: VFIO_GROUP_SET_CONTAINER: %w", err)
	}
	if _, err := ioctlInt(d.container, ioctlSetIOMMU, typeIOMMUType1v2); err != nil {
		return nil, fmt.Errorf("vfio: VFIO_SET_IOMMU (type 1 v2): %w", err)
	}
	usable, err := d.iovaRanges()
	if err != nil {
		return nil, err
	}
	if d.iova, err = NewIOVAAllocator(usable, mask); err != nil {
		return nil, err
	}

	name, err := unix.BytePtrFromString(bdf)
	if err != nil {
		return nil, err
	}
	fd, err := ioctl(d.group, ioctlGroupGetDeviceFD, unsafe.Pointer(name))
	if err != nil {
		return nil, fmt.Errorf("vfio: VFIO_GROUP_GET_DEVICE_FD %s: %w", bdf, err)
	}
	d.dev = int(fd)
	info := deviceInfo{Argsz: uint32(unsafe.Sizeof(deviceInfo{}))}
	if _, err := ioctl(d.dev, ioctlDeviceGetInfo, unsafe.Pointer(&info)); err != nil {
		return nil, fmt.Errorf("vfio: VFIO_DEVICE_GET_INFO: %w", err)
	}
	d.Info.Flags, d.Info.NumRegions, d.Info.NumIRQs = info.Flags, info.NumRegions, info.NumIRQs
	if info.Flags&deviceFlagsPCI == 0 {
		return nil, fmt.Errorf("vfio: %s is not a vfio-pci device (flags %#x)", bdf, info.Flags)
	}
	if cfg.BAR < 0 || cfg.BAR > 5 || uint32(cfg.BAR) >= info.NumRegions {
		return nil, fmt.Errorf("vfio: BAR %d: a PCI device has BARs 0 to 5", cfg.BAR)
	}
	if d.BARRegion, err = d.region(cfg.BAR); err != nil {
		return nil, err
	}
	r := d.BARRegion
	if r.Size == 0 {
		return nil, fmt.Errorf("vfio: %s has no BAR %d (size 0): choose the BAR the device's registers are in", bdf, cfg.BAR)
	}
	if !r.Mmap || r.Size > 1<<32 {
		return nil, fmt.Errorf("vfio: BAR %d of %s (%d octets) cannot be mmap()ed through VFIO", cfg.BAR, bdf, r.Size)
	}
	if d.bar, err = unix.Mmap(d.dev, int64(r.Offset), int(r.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return nil, fmt.Errorf("vfio: mmap of BAR %d: %w", cfg.BAR, err)
	}
	if err := d.enableMaster(); err != nil {
		return nil, err
	}
	if err := d.setupIRQs(cfg.Vectors); err != nil {
		return nil, err
	}
	return d, nil
}

// iovaRanges asks the IOMMU which IOVAs can be mapped (the IOVA range
// capability of VFIO_IOMMU_GET_INFO: the address width less reserved
// windows such as x86's MSI range at 0xfee00000).
func (d *Device) iovaRanges() ([]Range, error) {
	buf := make([]uint64, 512) // 4 KiB, 8-aligned
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	info := (*iommuInfo)(unsafe.Pointer(&buf[0]))
	info.Argsz = uint32(len(b))
	if _, err := ioctl(d.container, ioctlIOMMUGetInfo, unsafe.Pointer(&buf[0])); err != nil {
		return nil, fmt.Errorf("vfio: VFIO_IOMMU_GET_INFO: %w", err)
	}
	full := []Range{{0, ^uint64(0)}}
	if info.Flags&iommuInfoCaps == 0 || info.CapOffset == 0 {
		return full, nil
	}
	le := binary.LittleEndian
	for off := info.CapOffset; off != 0 && int(off)+16 <= len(b); {
		id := le.Uint16(b[off:])
		next := le.Uint32(b[off+4:])
		if id == iommuCapIOVARange {
			n := le.Uint32(b[off+8:])
			var rs []Range
			for i := uint32(0); i < n; i++ {
				at := int(off) + 16 + int(i)*16
				if at+16 > len(b) {
					break
				}
				rs = append(rs, Range{le.Uint64(b[at:]), le.Uint64(b[at+8:])})
			}
			return rs, nil
		}
		off = next
	}
	return full, nil
}

// region reads VFIO_DEVICE_GET_REGION_INFO for one index.
func (d *Device) region(index int) (Region, error) {
	ri := regionInfo{Argsz: uint32(unsafe.Sizeof(regionInfo{})), Index: uint32(index)}
	if _, err := ioctl(d.dev, ioctlDeviceGetRegionInfo, unsafe.Pointer(&ri)); err != nil {
		return Region{}, fmt.Errorf("vfio: VFIO_DEVICE_GET_REGION_INFO %d: %w", index, err)
	}
	return Region{Index: index, Size: ri.Size, Offset: ri.Offset, Mmap: ri.Flags&regionFlagMmap != 0}, nil
}

// Region returns a region of the device fd (0-5 the BARs, 7 the config
// space).
func (d *Device) Region(index int) (Region, error) { return d.region(index) }

// ConfigRead reads n (1, 2 or 4) octets of config space at off through the
// config region.
func (d *Device) ConfigRead(off, n int) (uint32, error) {
	cfg, err := d.region(pciConfigRegionIndex)
	if err != nil {
		return 0, err
	}
	var b [4]byte
	if n != 1 && n != 2 && n != 4 {
		return 0, fmt.Errorf("vfio: config read of %d octets: 1, 2 or 4", n)
	}
	if _, err := unix.Pread(d.dev, b[:n], int64(cfg.Offset)+int64(off)); err != nil {
		return 0, fmt.Errorf("vfio: config read at %#x: %w", off, err)
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// ConfigWrite writes the low n (1, 2 or 4) octets of v to config space.
func (d *Device) ConfigWrite(off, n int, v uint32) error {
	cfg, err := d.region(pciConfigRegionIndex)
	if err != nil {
		return err
	}
	if n != 1 && n != 2 && n != 4 {
		return fmt.Errorf("vfio: config write of %d octets: 1, 2 or 4", n)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	if _, err := unix.Pwrite(d.dev, b[:n], int64(cfg.Offset)+int64(off)); err != nil {
		return fmt.Errorf("vfio: config write at %#x: %w", off, err)
	}
	return nil
}

// enableMaster sets memory space and bus master enable in the command
// register: vfio-pci enables the device but leaves bus mastering to its
// user, and a device without it cannot DMA.
func (d *Device) enableMaster() error {
	cmd, err := d.ConfigRead(pciCommandOffset, 2)
	if err != nil {
		return err
	}
	return d.ConfigWrite(pciCommandOffset, 2, cmd|pciCommandMemory|pciCommandBusMaster)
}

// Reset resets the function (VFIO_DEVICE_RESET), if vfio-pci offers a
// reset for it.
func (d *Device) Reset() error {
	if d.Info.Flags&deviceFlagsReset == 0 {
		return fmt.Errorf("vfio: %s offers no reset (no FLR, PM or bus reset vfio-pci can use)", d.PCI.BDF)
	}
	if _, err := ioctlInt(d.dev, ioctlDeviceReset, 0); err != nil {
		return fmt.Errorf("vfio: VFIO_DEVICE_RESET: %w", err)
	}
	return d.enableMaster()
}

// --- MMIO ---------------------------------------------------------------

func (d *Device) barWord(off uint32) (*uint32, error) {
	if off%4 != 0 || uint64(off)+4 > uint64(len(d.bar)) {
		return nil, fmt.Errorf("vfio: MMIO offset %#x is not a 32-bit word inside the %d-octet BAR", off, len(d.bar))
	}
	return (*uint32)(unsafe.Pointer(&d.bar[off])), nil
}

// Read32 is one 32-bit load from the BAR.
func (d *Device) Read32(off uint32) (uint32, error) {
	p, err := d.barWord(off)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint32(p), nil
}

// Write32 is one 32-bit store to the BAR.
func (d *Device) Write32(off uint32, v uint32) error {
	p, err := d.barWord(off)
	if err != nil {
		return err
	}
	atomic.StoreUint32(p, v)
	return nil
}

// BARSize is the BAR's size in octets.
func (d *Device) BARSize() uint32 { return uint32(len(d.bar)) }

// --- DMA ----------------------------------------------------------------

// Alloc returns size octets (rounded up to whole pages) of locked
// anonymous memory, mapped for the device's reads and writes at an IOVA
// within its DMA mask.
func (d *Device) Alloc(size int) (*driver.Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("vfio: DMA buffer of %d octets", size)
	}
	n := alignUp(uint64(size), PageSize)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	iova, err := d.iova.Alloc(n, PageSize)
	if err != nil {
		return nil, err
	}
	mem, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		d.iova.Release(iova)
		return nil, fmt.Errorf("vfio: mmap of a %d-octet DMA buffer: %w", n, err)
	}
	if err := unix.Mlock(mem); err != nil {
		unix.Munmap(mem)
		d.iova.Release(iova)
		return nil, fmt.Errorf("vfio: mlock of a %d-octet DMA buffer: %w (raise the locked-memory limit: ulimit -l)", n, err)
	}
	m := dmaMap{Argsz: uint32(unsafe.Sizeof(dmaMap{})), Flags: dmaMapFlagRead | dmaMapFlagWrite,
		Vaddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), IOVA: iova, Size: n}
	if _, err := ioctl(d.container, ioctlIOMMUMapDMA, unsafe.Pointer(&m)); err != nil {
		unix.Munmap(mem)
		d.iova.Release(iova)
		hint := ""
		if errors.Is(err, unix.ENOMEM) {
			hint = " (VFIO pins the pages against the locked-memory limit: ulimit -l)"
		}
		return nil, fmt.Errorf("vfio: VFIO_IOMMU_MAP_DMA of %d octets at IOVA %#x: %w%s", n, iova, err, hint)
	}
	mp := &mapping{mem: mem, iova: iova, mapped: true}
	d.maps[iova] = mp
	d.buffers[&mem[0]] = mp
	return &driver.Buffer{Addr: iova, Mem: mem}, nil
}

func (d *Device) lookup(b *driver.Buffer) (*mapping, error) {
	if b == nil || len(b.Mem) == 0 {
		return nil, errors.New("vfio: not a DMA buffer of this device")
	}
	m := d.buffers[&b.Mem[0]]
	if m == nil {
		return nil, fmt.Errorf("vfio: buffer at IOVA %#x is not a DMA buffer of this device (freed already?)", b.Addr)
	}
	return m, nil
}

// unmapLocked takes a mapping out of the IOMMU and returns its IOVA.
func (d *Device) unmapLocked(m *mapping) error {
	if !m.mapped {
		return nil
	}
	u := dmaUnmap{Argsz: uint32(unsafe.Sizeof(dmaUnmap{})), IOVA: m.iova, Size: uint64(len(m.mem))}
	if _, err := ioctl(d.container, ioctlIOMMUUnmapDMA, unsafe.Pointer(&u)); err != nil {
		return fmt.Errorf("vfio: VFIO_IOMMU_UNMAP_DMA at IOVA %#x: %w", m.iova, err)
	}
	m.mapped = false
	delete(d.maps, m.iova)
	return d.iova.Release(m.iova)
}

// Unmap takes a buffer out of the IOMMU but keeps its memory: the device
// can no longer reach it (its accesses fault in the IOMMU), and the host
// can still read what is there. Free releases the memory.
func (d *Device) Unmap(b *driver.Buffer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, err := d.lookup(b)
	if err != nil {
		return err
	}
	return d.unmapLocked(m)
}

// Free unmaps a buffer (if Unmap has not) and releases its memory.
func (d *Device) Free(b *driver.Buffer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, err := d.lookup(b)
	if err != nil {
		return err
	}
	if err := d.unmapLocked(m); err != nil {
		return err
	}
	delete(d.buffers, &m.mem[0])
	return unix.Munmap(m.mem)
}

// Mapped checks that [addr, addr+n) lies inside one live mapping, and
// returns an *OutsideMappingError if not. Call it before writing an
// address to the device.
func (d *Device) Mapped(addr, n uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n > 0 && addr+n > addr {
		for _, m := range d.maps {
			if addr >= m.iova && addr+n <= m.iova+uint64(len(m.mem)) {
				return nil
			}
		}
	}
	return &OutsideMappingError{Addr: addr, Len: n}
}

// --- interrupts -----------------------------------------------------------

// setupIRQs binds an eventfd to every vector of the best interrupt index
// the device has.
func (d *Device) setupIRQs(limit int) error {
	for _, c := range []struct {
		index uint32
		kind  IRQKind
	}{{pciMSIXIRQIndex, IRQMSIX}, {pciMSIIRQIndex, IRQMSI}, {pciINTxIRQIndex, IRQINTx}} {
		if c.index >= d.Info.NumIRQs {
			continue
		}
		ii := irqInfo{Argsz: uint32(unsafe.Sizeof(irqInfo{})), Index: c.index}
		if _, err := ioctl(d.dev, ioctlDeviceGetIRQInfo, unsafe.Pointer(&ii)); err != nil {
			return fmt.Errorf("vfio: VFIO_DEVICE_GET_IRQ_INFO %d: %w", c.index, err)
		}
		if ii.Count == 0 || ii.Flags&irqInfoEventfd == 0 {
			continue
		}
		n := int(ii.Count)
		if limit > 0 && limit < n {
			n = limit
		}
		return d.bindVectors(c.index, c.kind, n)
	}
	return nil // a device without interrupts; Vector refuses every vector
}

func (d *Device) bindVectors(index uint32, kind IRQKind, n int) error {
	fds := make([]int32, n)
	for i := range n {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return fmt.Errorf("vfio: eventfd: %w", err)
		}
		fds[i] = int32(fd)
		d.vectors = append(d.vectors, &vector{efd: os.NewFile(uintptr(fd), "eventfd"),
			ch: make(chan struct{}, 1), done: make(chan struct{})})
	}
	if err := d.setIRQs(index, irqSetDataEventfd|irqSetActionTrig, 0, fds); err != nil {
		return err
	}
	d.IRQ = kind
	for i, v := range d.vectors {
		go d.forward(index, kind, i, v)
	}
	return nil
}

// setIRQs is VFIO_DEVICE_SET_IRQS with count = len(fds) eventfds (or
// count 0 and no data, to disable the index).
func (d *Device) setIRQs(index, flags, start uint32, fds []int32) error {
	hdr := irqSetHeader{Flags: flags, Index: index, Start: start, Count: uint32(len(fds))}
	size := int(unsafe.Sizeof(hdr)) + 4*len(fds)
	buf := make([]uint32, (size+3)/4)
	hdr.Argsz = uint32(size)
	*(*irqSetHeader)(unsafe.Pointer(&buf[0])) = hdr
	for i, fd := range fds {
		buf[int(unsafe.Sizeof(hdr))/4+i] = uint32(fd)
	}
	if _, err := ioctl(d.dev, ioctlDeviceSetIRQs, unsafe.Pointer(&buf[0])); err != nil {
		return fmt.Errorf("vfio: VFIO_DEVICE_SET_IRQS (index %d, %d vectors, flags %#x): %w", index, len(fds), flags, err)
	}
	return nil
}

// forward turns the eventfd's counts into channel sends until the eventfd
// is closed. INTx is masked by vfio-pci when it fires: it is unmasked once
// the fire is passed on.
func (d *Device) forward(index uint32, kind IRQKind, i int, v *vector) {
	defer close(v.done)
	var b [8]byte
	for {
		if _, err := v.efd.Read(b[:]); err != nil {
			return
		}
		select {
		case v.ch <- struct{}{}:
		default: // one pending already: fires coalesce
		}
		if kind == IRQINTx {
			_ = d.setIRQs(index, irqSetDataNone|irqSetActionUnmask, uint32(i), nil)
		}
	}
}

// Vector returns the channel that receives when vector v fires.
func (d *Device) Vector(v int) (<-chan struct{}, error) {
	if v < 0 || v >= len(d.vectors) {
		return nil, fmt.Errorf("vfio: interrupt vector %d: %s has %d (%v)", v, d.PCI.BDF, len(d.vectors), d.IRQ)
	}
	return d.vectors[v].ch, nil
}

// Wait waits until vector v fires (or has fired since the last receive) or
// ctx is done.
func (d *Device) Wait(ctx context.Context, v int) error {
	ch, err := d.Vector(v)
	if err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("vfio: waiting for interrupt vector %d (%v): %w", v, d.IRQ, ctx.Err())
	}
}

// Network returns nil: a board has its own network.
func (d *Device) Network() driver.Network { return nil }

// --- close ----------------------------------------------------------------

// Close releases everything in the reverse order of Open: interrupts off
// and their eventfds closed, every DMA buffer unmapped and freed, the BAR
// unmapped, the device fd closed, the group taken out of the container,
// the group and container fds closed. The device is left bound to
// vfio-pci (Binding.Restore gives it back to its driver).
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	var errs []error
	if len(d.vectors) > 0 {
		index := map[IRQKind]uint32{IRQMSIX: pciMSIXIRQIndex, IRQMSI: pciMSIIRQIndex, IRQINTx: pciINTxIRQIndex}[d.IRQ]
		errs = append(errs, d.setIRQs(index, irqSetDataNone|irqSetActionTrig, 0, nil))
		for _, v := range d.vectors {
			errs = append(errs, v.efd.Close())
			<-v.done
		}
	}
	d.mu.Lock()
	for _, m := range d.buffers {
		errs = append(errs, d.unmapLocked(m), unix.Munmap(m.mem))
	}
	d.buffers, d.maps = map[*byte]*mapping{}, map[uint64]*mapping{}
	d.mu.Unlock()
	if d.bar != nil {
		errs = append(errs, unix.Munmap(d.bar))
		d.bar = nil
	}
	if d.dev >= 0 {
		errs = append(errs, unix.Close(d.dev))
	}
	if d.group >= 0 {
		// Fails harmlessly (EINVAL) when Open stopped before setting it.
		_, _ = ioctl(d.group, ioctlGroupUnsetCont, nil)
		errs = append(errs, unix.Close(d.group))
	}
	if d.container >= 0 {
		errs = append(errs, unix.Close(d.container))
	}
	return errors.Join(errs...)
}
