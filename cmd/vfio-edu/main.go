// Command vfio-edu proves the driver's vfio backend (driver/vfio) on a real
// Linux kernel against QEMU's edu device (1234:11e8) behind an emulated
// IOMMU. interop/vfio_test.go builds it, puts it in a QEMU guest (q35,
// intel-iommu, one edu device alone in its IOMMU group and two behind a
// conventional PCI bridge, which share one) and runs it as root there:
//
//	vfio-edu -alone 0000:00:04.0 -shared 0000:01:01.0 -holder 0000:01:02.0
//
// -holder must be bound to a host driver (the test binds uio_pci_generic)
// beforehand. It checks discovery, binding, BAR reads, the liveness and
// factorial registers, interrupts through an eventfd, a DMA round trip
// through the IOMMU and the refusals, printing one "ok NAME: ..." or
// "FAIL NAME: ..." line per check, and exits 1 if any failed. It leaves
// every device bound as it found it.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/openrnic/rnic/driver/vfio"
)

type run struct {
	failed int
	passed int
}

func (r *run) ok(name, format string, a ...any) {
	r.passed++
	fmt.Printf("ok %s: %s\n", name, fmt.Sprintf(format, a...))
}

func (r *run) fail(name, format string, a ...any) {
	r.failed++
	fmt.Printf("FAIL %s: %s\n", name, fmt.Sprintf(format, a...))
}

func main() {
	alone := flag.String("alone", "", "an edu device alone in its IOMMU group, bound to no driver")
	shared := flag.String("shared", "", "an edu device sharing its IOMMU group with -holder")
	holder := flag.String("holder", "", "an edu device bound to a host driver, in -shared's group")
	sysfs := flag.String("sysfs", "/sys", "sysfs root")
	timeout := flag.Duration("timeout", 60*time.Second, "give up after this long")
	flag.Parse()
	if *alone == "" || *shared == "" || *holder == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: vfio-edu -alone BDF -shared BDF -holder BDF")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	r := &run{}
	bus := vfio.Sysfs{Root: *sysfs}
	r.discover(bus, *alone, *shared, *holder)
	r.device(ctx, bus, *alone)
	r.group(ctx, bus, *shared, *holder)
	fmt.Printf("vfio-edu: %d checks passed, %d failed\n", r.passed, r.failed)
	if r.failed > 0 {
		os.Exit(1)
	}
}

// discover finds the edu devices by vendor:device and checks the groups.
func (r *run) discover(bus vfio.Bus, alone, shared, holder string) {
	devs, err := vfio.Find(bus, eduVendor, eduDevice)
	if err != nil {
		r.fail("discover", "%v", err)
		return
	}
	var bdfs []string
	for _, d := range devs {
		bdfs = append(bdfs, d.BDF)
		fmt.Printf("found %v class %06x IOMMU group %d\n", d, d.Class, d.IOMMUGroup)
	}
	for _, want := range []string{alone, shared, holder} {
		if !slices.Contains(bdfs, want) {
			r.fail("discover", "%s is not among the edu devices %v", want, bdfs)
			return
		}
	}
	byBDF := map[string]vfio.PCIDevice{}
	for _, d := range devs {
		byBDF[d.BDF] = d
	}
	a, s, h := byBDF[alone], byBDF[shared], byBDF[holder]
	members, err := bus.GroupMembers(a.IOMMUGroup)
	if err != nil || len(members) != 1 {
		r.fail("discover", "group %d of %s has members %v (%v), want it alone", a.IOMMUGroup, alone, members, err)
		return
	}
	if s.IOMMUGroup != h.IOMMUGroup || s.IOMMUGroup < 0 {
		r.fail("discover", "%s (group %d) and %s (group %d) should share a group", shared, s.IOMMUGroup, holder, h.IOMMUGroup)
		return
	}
	r.ok("discover", "%d edu devices [1234:11e8]: %s alone in group %d; %s and %s share group %d",
		len(devs), alone, a.IOMMUGroup, shared, holder, s.IOMMUGroup)
}

// device runs the checks on the device alone in its group.
func (r *run) device(ctx context.Context, bus vfio.Sysfs, bdf string) {
	cfg := vfio.Config{BDF: bdf, Bus: bus, DMAMask: eduDMAMask}
	// Not bound yet: refused.
	var nb *vfio.NotBoundError
	if d, err := vfio.Open(ctx, cfg); errors.As(err, &nb) {
		r.ok("refuse-unbound", "%v", err)
	} else {
		if d != nil {
			d.Close()
		}
		r.fail("refuse-unbound", "Open of an unbound device gave %v, want a NotBoundError", err)
	}

	b, err := bus.Bind(ctx, bdf)
	if err != nil {
		r.fail("bind", "%v", err)
		return
	}
	defer func() {
		if err := b.Restore(ctx); err != nil {
			r.fail("restore", "%v", err)
			return
		}
		p, err := bus.Device(bdf)
		if err != nil || p.Driver != b.Previous {
			r.fail("restore", "%s is bound to %q (%v), want %q", bdf, p.Driver, err, b.Previous)
			return
		}
		r.ok("restore", "%s back to %q", bdf, b.Previous)
	}()
	p, _ := bus.Device(bdf)
	r.ok("bind", "%s bound to %s (was %q) through driver_override and drivers_probe", bdf, p.Driver, b.Previous)

	d, err := vfio.Open(ctx, cfg)
	if err != nil {
		r.fail("open", "%v", err)
		return
	}
	defer func() {
		if err := d.Close(); err != nil {
			r.fail("close", "%v", err)
			return
		}
		r.ok("close", "interrupts off, DMA unmapped, BAR unmapped, fds closed")
	}()
	r.ok("open", "%s: BAR0 %d octets at device-fd offset %#x (mmap), %d regions, %d irq indexes, interrupts by %v",
		bdf, d.BARSize(), d.BARRegion.Offset, d.Info.NumRegions, d.Info.NumIRQs, d.IRQ)
	e := edu{d}

	if id := e.read(eduID); id == 0x010000ed {
		r.ok("bar-id", "BAR0 ID register reads %#08x", id)
	} else {
		r.fail("bar-id", "BAR0 ID register reads %#08x, want 0x010000ed", id)
	}

	live := true
	for _, v := range []uint32{0, 0x12345678, 0xffffffff, 0xa5a5a5a5, 0x00c0ffee} {
		e.write(eduLiveness, v)
		if got := e.read(eduLiveness); got != ^v {
			r.fail("liveness", "wrote %#08x, read %#08x, want %#08x", v, got, ^v)
			live = false
		}
	}
	if live {
		r.ok("liveness", "5 values read back inverted (0x12345678 -> %#08x)", ^uint32(0x12345678))
	}

	fact := true
	want := uint32(1)
	for n := uint32(0); n <= 12; n++ {
		if n > 0 {
			want *= n
		}
		got, err := e.factorial(ctx, n)
		if err != nil || got != want {
			r.fail("factorial", "%d! read %d (%v), want %d", n, got, err, want)
			fact = false
			break
		}
	}
	if fact {
		r.ok("factorial", "0! to 12! computed by the device (12! = %d)", want)
	}

	r.interrupts(ctx, e)
	r.dma(ctx, d, e)
}

// interrupts checks MSI through the eventfd: on factorial completion, and
// raised by a write to 0x60; acknowledged at 0x64.
func (r *run) interrupts(ctx context.Context, e edu) {
	ch, err := e.d.Vector(0)
	if err != nil {
		r.fail("interrupt", "%v", err)
		return
	}
	select {
	case <-ch:
		r.fail("interrupt", "vector 0 fired before any interrupt was asked for")
		return
	default:
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	e.write(eduStatus, eduStatusIRQ)
	e.write(eduFactorial, 10)
	if err := e.d.Wait(wctx, 0); err != nil {
		r.fail("interrupt-factorial", "%v", err)
		return
	}
	st := e.read(eduIRQStatus)
	f := e.read(eduFactorial)
	e.write(eduIRQAck, st)
	after := e.read(eduIRQStatus)
	e.write(eduStatus, 0)
	if st != eduIRQFactorial || f != 3628800 || after != 0 {
		r.fail("interrupt-factorial", "status %#x (want %#x), 10! = %d, status after ack %#x", st, eduIRQFactorial, f, after)
	} else {
		r.ok("interrupt-factorial", "%v vector 0 fired through its eventfd on factorial completion: status %#x, 10! = %d; acknowledged, status now 0", e.d.IRQ, st, f)
	}

	const raised = 0x5a5a0000
	e.write(eduIRQRaise, raised)
	if err := e.d.Wait(wctx, 0); err != nil {
		r.fail("interrupt-raise", "%v", err)
		return
	}
	st = e.read(eduIRQStatus)
	e.write(eduIRQAck, st)
	after = e.read(eduIRQStatus)
	if st != raised || after != 0 {
		r.fail("interrupt-raise", "status %#x (want %#x), after ack %#x", st, raised, after)
	} else {
		r.ok("interrupt-raise", "write of %#x to 0x60 fired vector 0; status %#x; acknowledged at 0x64", uint32(raised), st)
	}
}

// dma checks a round trip through the IOMMU, the driver's refusal of an
// address outside a mapping, and the IOMMU blocking a stray one.
func (r *run) dma(ctx context.Context, d *vfio.Device, e edu) {
	src, err := d.Alloc(eduBufferSize)
	if err != nil {
		r.fail("dma-roundtrip", "%v", err)
		return
	}
	dst, err := d.Alloc(eduBufferSize)
	if err != nil {
		r.fail("dma-roundtrip", "%v", err)
		return
	}
	rng := rand.New(rand.NewPCG(31, 1))
	for i := range src.Mem {
		src.Mem[i] = byte(rng.Uint32())
	}
	clear(dst.Mem)
	// Two halves, each host -> edu buffer -> host (a transfer reaches at
	// most half of edu's buffer, see edu.dma).
	for off := uint64(0); off < eduBufferSize; off += eduChunk {
		if err := e.dma(ctx, src.Addr+off, eduBuffer, eduChunk, false, true); err != nil {
			r.fail("dma-roundtrip", "host %#x -> edu: %v", src.Addr+off, err)
			return
		}
		if err := e.dma(ctx, dst.Addr+off, eduBuffer, eduChunk, true, true); err != nil {
			r.fail("dma-roundtrip", "edu -> host %#x: %v", dst.Addr+off, err)
			return
		}
	}
	if i := mismatch(src.Mem, dst.Mem); i >= 0 {
		r.fail("dma-roundtrip", "octet %d differs: sent %#02x, got back %#02x", i, src.Mem[i], dst.Mem[i])
		return
	}
	r.ok("dma-roundtrip", "%d octets host IOVA %#x -> edu buffer %#x -> host IOVA %#x through the IOMMU in %d-octet transfers, every octet equal (each DMA-done interrupt seen)",
		len(src.Mem), src.Addr, eduBuffer, dst.Addr, eduChunk)

	// The driver refuses an address outside every mapping, and a range
	// running past a buffer's end, before the device sees it.
	before := e.read(eduDMADst)
	stray := uint64(eduDMAMask + 1 - eduBufferSize) // within edu's mask, never allocated
	var om *vfio.OutsideMappingError
	err1 := e.dma(ctx, stray, eduBuffer, eduChunk, true, true)
	err2 := e.dma(ctx, dst.Addr+eduBufferSize-8, eduBuffer, 16, true, true)
	if errors.As(err1, &om) && errors.As(err2, &om) && e.read(eduDMADst) == before {
		r.ok("dma-refuse-unmapped", "driver refused IOVA %#x and a range past the end of %#x before the device saw them: %v", stray, dst.Addr, err1)
	} else {
		r.fail("dma-refuse-unmapped", "got %v and %v (want OutsideMappingError), DMA destination register %#x (was %#x)", err1, err2, e.read(eduDMADst), before)
	}

	// A buffer taken out of the IOMMU, then the device made to write to
	// its old IOVA anyway (the check bypassed): the IOMMU blocks it.
	victim, err := d.Alloc(eduBufferSize)
	if err != nil {
		r.fail("dma-iommu-blocks", "%v", err)
		return
	}
	for i := range victim.Mem {
		victim.Mem[i] = 0x5a
	}
	old := slices.Clone(victim.Mem)
	if err := d.Unmap(victim); err != nil {
		r.fail("dma-iommu-blocks", "%v", err)
		return
	}
	if err := d.Mapped(victim.Addr, eduBufferSize); err == nil {
		r.fail("dma-iommu-blocks", "Mapped accepts IOVA %#x after Unmap", victim.Addr)
	}
	fmt.Printf("making the device write to unmapped IOVA %#x (expect a DMAR fault in the kernel log)\n", victim.Addr)
	if err := e.dma(ctx, victim.Addr, eduBuffer, eduChunk, true, false); err != nil {
		r.fail("dma-iommu-blocks", "%v", err)
		return
	}
	if !bytes.Equal(victim.Mem, old) {
		r.fail("dma-iommu-blocks", "the unmapped buffer changed (octet %d): the IOMMU let the write through", mismatch(victim.Mem, old))
		return
	}
	r.ok("dma-iommu-blocks", "device DMA to unmapped IOVA %#x completed on the device's side; the buffer there is unchanged (%d octets of 0x5a)", victim.Addr, len(victim.Mem))
	if err := d.Free(victim); err != nil {
		r.fail("dma-iommu-blocks", "Free after Unmap: %v", err)
	}
}

// mismatch returns the first index at which a and b (of one length)
// differ, or -1.
func mismatch(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// group checks the refusal of a group with a member bound to a host
// driver, and of a device bound to that host driver.
func (r *run) group(ctx context.Context, bus vfio.Sysfs, shared, holder string) {
	h, err := bus.Device(holder)
	if err != nil || h.Driver == "" || h.Driver == "vfio-pci" {
		r.fail("refuse-group", "%s should be bound to a host driver first (is %q, %v)", holder, h.Driver, err)
		return
	}
	var nb *vfio.NotBoundError
	if d, err := vfio.Open(ctx, vfio.Config{BDF: holder, Bus: bus}); errors.As(err, &nb) && nb.Driver == h.Driver {
		r.ok("refuse-host-driver", "%v", err)
	} else {
		if d != nil {
			d.Close()
		}
		r.fail("refuse-host-driver", "Open of a device bound to %s gave %v", h.Driver, err)
	}

	b, err := bus.Bind(ctx, shared)
	if err != nil {
		r.fail("refuse-group", "bind %s: %v", shared, err)
		return
	}
	defer func() {
		if err := b.Restore(ctx); err != nil {
			r.fail("restore", "%s: %v", shared, err)
		}
	}()
	var nv *vfio.GroupNotViableError
	d, err := vfio.Open(ctx, vfio.Config{BDF: shared, Bus: bus})
	if errors.As(err, &nv) && len(nv.Holders) == 1 && nv.Holders[0].BDF == holder {
		r.ok("refuse-group", "%v", err)
	} else {
		if d != nil {
			d.Close()
		}
		r.fail("refuse-group", "Open of %s (group shared with %s on %s) gave %v, want a GroupNotViableError naming %s",
			shared, holder, h.Driver, err, holder)
	}
}
