package model

import (
	"fmt"
	"sort"
	"syscall"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/regs"
)

const page = 4096

// iovaBase is where the model starts handing out device addresses: above
// 4 GiB, so that a driver that truncates an address to 32 bits fails at
// once instead of working by luck.
const iovaBase = 1 << 32

// memory is the model's host memory: buffers mmap()ed outside the Go heap,
// each at a device address an IOVA allocator would give (docs/device.md,
// "DMA"; driver.Backend's Alloc).
type memory struct {
	next uint64
	bufs []*driver.Buffer // sorted by Addr
}

func (m *memory) init() { m.next = iovaBase }

// Alloc implements driver.Backend.
func (d *Device) Alloc(size int) (*driver.Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("model: Alloc(%d): a buffer needs at least one octet", size)
	}
	n := (size + page - 1) &^ (page - 1)
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("model: mmap of %d octets of DMA memory: %w (check the process's memory limits)", n, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = syscall.Munmap(mem)
		return nil, errClosed
	}
	b := &driver.Buffer{Addr: d.mem.next, Mem: mem}
	// A guard page between buffers: an access that runs off one buffer
	// finds no memory rather than the next buffer.
	d.mem.next += uint64(n) + page
	d.mem.bufs = append(d.mem.bufs, b)
	return b, nil
}

// AllocAt is Alloc at a device address the caller chooses: addr
// 4 KiB-aligned, the buffer overlapping no other. The mirror
// (driver/mirror) gives the model the addresses the simulated device's
// buffers have, so that the same descriptors mean the same memory to both.
func (d *Device) AllocAt(addr uint64, size int) (*driver.Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("model: AllocAt(%#x, %d): a buffer needs at least one octet", addr, size)
	}
	if addr%page != 0 {
		return nil, fmt.Errorf("model: AllocAt(%#x): device addresses of buffers are 4 KiB-aligned", addr)
	}
	n := (size + page - 1) &^ (page - 1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errClosed
	}
	i := sort.Search(len(d.mem.bufs), func(i int) bool { return d.mem.bufs[i].Addr >= addr })
	if (i > 0 && d.mem.bufs[i-1].Addr+uint64(len(d.mem.bufs[i-1].Mem)) > addr) ||
		(i < len(d.mem.bufs) && d.mem.bufs[i].Addr < addr+uint64(n)) || addr+uint64(n) < addr {
		return nil, fmt.Errorf("model: AllocAt(%#x, %d): overlaps a buffer the model has already", addr, size)
	}
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("model: mmap of %d octets of DMA memory: %w (check the process's memory limits)", n, err)
	}
	b := &driver.Buffer{Addr: addr, Mem: mem}
	d.mem.bufs = append(d.mem.bufs, nil)
	copy(d.mem.bufs[i+1:], d.mem.bufs[i:])
	d.mem.bufs[i] = b
	if end := addr + uint64(n) + page; end > d.mem.next {
		d.mem.next = end
	}
	return b, nil
}

// Free implements driver.Backend.
func (d *Device) Free(b *driver.Buffer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	// A receive posted to a QP's sink holds the memory placement will
	// write: unmapping it under the sink would crash the model where a
	// device would write freed memory. The contract frees memory only
	// after the fence (QP_DRAIN completes every posted receive).
	for qpn, r := range d.run {
		for _, p := range r.rq {
			if p.n > 0 && p.addr < b.Addr+uint64(len(b.Mem)) && b.Addr < p.addr+p.n {
				return fmt.Errorf("model: Free of the buffer at %#x, which receive %#x posted on QP %d still names: "+
					"drain the QP (QP_DRAIN) before freeing its receive buffers", b.Addr, p.id, qpn)
			}
		}
	}
	for i, x := range d.mem.bufs {
		if x == b {
			d.mem.bufs = append(d.mem.bufs[:i], d.mem.bufs[i+1:]...)
			// No region may keep pointing into unmapped memory: a
			// driver that frees a buffer an MR still names gets
			// DMA_REFUSED for it, not a crash of the model.
			d.syncRegions()
			return syscall.Munmap(b.Mem)
		}
	}
	return fmt.Errorf("model: Free of a buffer at %#x that Alloc did not return or that was freed already", b.Addr)
}

func (m *memory) freeAll() error {
	var first error
	for _, b := range m.bufs {
		if err := syscall.Munmap(b.Mem); err != nil && first == nil {
			first = err
		}
	}
	m.bufs = nil
	return first
}

// find returns the octets at device address [addr, addr+n) if one buffer
// holds them all.
func (m *memory) find(addr uint64, n int) ([]byte, bool) {
	i := sort.Search(len(m.bufs), func(i int) bool { return m.bufs[i].Addr+uint64(len(m.bufs[i].Mem)) > addr })
	if i == len(m.bufs) || addr < m.bufs[i].Addr {
		return nil, false
	}
	b := m.bufs[i]
	off := addr - b.Addr
	if off+uint64(n) > uint64(len(b.Mem)) {
		return nil, false
	}
	return b.Mem[off : off+uint64(n)], true
}

// window is a DMA window the driver declared (DMA_WINDOW).
type window struct{ Addr, Len uint64 }

// inWindow reports whether [addr, addr+n) lies inside one declared window
// (docs/device.md, "DMA": every device address is checked before the
// request leaves).
func (t *tables) inWindow(addr, n uint64) bool {
	if addr+n < addr {
		return false
	}
	for _, w := range t.Windows {
		if w.Len != 0 && addr >= w.Addr && addr+n <= w.Addr+w.Len {
			return true
		}
	}
	return false
}

// dmaWrite is a device write to host memory: refused (false) outside every
// window or where no memory is mapped (what the IOMMU would refuse).
func (d *Device) dmaWrite(addr uint64, p []byte) bool {
	if !d.t.inWindow(addr, uint64(len(p))) {
		return false
	}
	dst, ok := d.mem.find(addr, len(p))
	if !ok {
		return false
	}
	copy(dst, p)
	d.cnt.add(regs.CountersDMAWrites, 1)
	return true
}

// dmaRead is a device read of host memory: the octets at [addr, addr+n)
// (a slice of the memory itself, to be copied before the device lets go
// of the mutex), or false outside every window or where no memory is
// mapped.
func (d *Device) dmaRead(addr uint64, n int) ([]byte, bool) {
	p, ok := d.hostMem(addr, n)
	if ok && n > 0 {
		d.cnt.add(regs.CountersDMAReads, 1)
	}
	return p, ok
}

// hostMem is the memory at [addr, addr+n) if the device may reach it (the
// window check, and mapped memory): the RQ engine's translation of a
// receive buffer, which placement writes later.
func (d *Device) hostMem(addr uint64, n int) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	if !d.t.inWindow(addr, uint64(n)) {
		return nil, false
	}
	return d.mem.find(addr, n)
}
