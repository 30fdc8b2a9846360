package vfio

import (
	"errors"
	"testing"

	"github.com/openrnic/rnic/driver"
)

// Mapped, the driver's check before an address goes to the device, on a
// device whose mappings are set by hand (no kernel needed).
func TestMappedRefusesOutside(t *testing.T) {
	d := &Device{maps: map[uint64]*mapping{
		0x1000: {mem: make([]byte, 2*PageSize), iova: 0x1000, mapped: true},
		0x8000: {mem: make([]byte, PageSize), iova: 0x8000, mapped: true},
	}}
	for _, c := range []struct {
		addr, n uint64
		ok      bool
	}{
		{0x1000, 2 * PageSize, true},
		{0x1800, 16, true},
		{0x2ff8, 8, true},
		{0x2ff8, 16, false}, // runs past the end of the first mapping
		{0x2ff8 + 8, 1, false},
		{0x0, 16, false},
		{0x8000, PageSize, true},
		{0x2000, 0x7000, false}, // spans two mappings and the gap
		{0x1000, 0, false},      // an empty range is not a DMA
		{^uint64(0) - 4, 16, false},
	} {
		err := d.Mapped(c.addr, c.n)
		var om *OutsideMappingError
		if c.ok && err != nil || !c.ok && (!errors.As(err, &om) || om.Addr != c.addr || om.Len != c.n) {
			t.Errorf("Mapped(%#x, %#x) = %v, want ok %v", c.addr, c.n, err, c.ok)
		}
	}
}

// MMIO is 32-bit words inside the BAR: anything else is refused.
func TestMMIOBounds(t *testing.T) {
	d := &Device{}
	d.bar = make([]byte, 64)
	if err := d.Write32(60, 0xdeadbeef); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Read32(60); err != nil || v != 0xdeadbeef {
		t.Fatalf("Read32(60) = %#x, %v", v, err)
	}
	if d.bar[60] != 0xef || d.bar[63] != 0xde {
		t.Errorf("the store is not little-endian in the BAR: % x", d.bar[60:])
	}
	for _, off := range []uint32{64, 62, 1, 0xfffffffc} {
		if _, err := d.Read32(off); err == nil {
			t.Errorf("Read32(%#x) accepted on a 64-octet BAR", off)
		}
		if err := d.Write32(off, 1); err == nil {
			t.Errorf("Write32(%#x) accepted on a 64-octet BAR", off)
		}
	}
	if d.BARSize() != 64 {
		t.Errorf("BARSize %d", d.BARSize())
	}
	if d.Network() != nil {
		t.Error("a board's backend has no network seam")
	}
	if _, err := d.Vector(0); err == nil {
		t.Error("Vector(0) on a device without interrupts accepted")
	}
	if err := d.Free(&driver.Buffer{Addr: 0x1000, Mem: make([]byte, PageSize)}); err == nil {
		t.Error("Free of a buffer the device never allocated accepted")
	}
}
