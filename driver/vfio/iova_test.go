package vfio

import (
	"errors"
	"strings"
	"testing"
)

// Intel VT-d's usable IOVA space as VFIO_IOMMU_GET_INFO reports it for a
// 39-bit address width: everything but the MSI window.
var vtdRanges = []Range{{0, 0xfedfffff}, {0xfef00000, 1<<39 - 1}}

func TestIOVAAllocatorAlignmentAndMask(t *testing.T) {
	a, err := NewIOVAAllocator(vtdRanges, 1<<28-1) // edu's mask
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Free(); got != 1<<28-PageSize {
		t.Errorf("free %#x, want the mask's 256 MiB less page 0", got)
	}
	// Page 0 is never handed out: the first allocation is at 4 KiB.
	p, err := a.Alloc(PageSize, PageSize)
	if err != nil || p != PageSize {
		t.Fatalf("first allocation at %#x (%v), want 0x1000", p, err)
	}
	// A 64 KiB-aligned allocation skips to the next 64 KiB boundary ...
	q, err := a.Alloc(3*PageSize, 1<<16)
	if err != nil || q != 1<<16 {
		t.Fatalf("64 KiB-aligned allocation at %#x (%v), want 0x10000", q, err)
	}
	// ... and the gap it left is used by the next page-aligned one.
	r, err := a.Alloc(PageSize, PageSize)
	if err != nil || r != 2*PageSize {
		t.Fatalf("allocation after the aligned one at %#x (%v), want 0x2000", r, err)
	}
	// Nothing beyond the mask: the whole rest fits exactly, one more
	// page does not.
	rest := a.Free()
	big, err := a.Alloc(alignDown(rest, 1<<27), 1<<27)
	if err != nil || big+alignDown(rest, 1<<27)-1 > 1<<28-1 {
		t.Fatalf("large allocation at %#x (%v) runs past the mask", big, err)
	}
	for a.Free() > 0 {
		v, err := a.Alloc(PageSize, PageSize)
		if err != nil || v > 1<<28-PageSize {
			t.Fatalf("allocation at %#x (%v) outside the mask", v, err)
		}
	}
	if _, err := a.Alloc(PageSize, PageSize); !errors.Is(err, ErrIOVAExhausted) {
		t.Fatalf("allocation from a full space: %v, want ErrIOVAExhausted", err)
	}
}

func TestIOVAAllocatorHoles(t *testing.T) {
	// A 32-bit device on VT-d: the MSI window below 4 GiB is never given.
	a, err := NewIOVAAllocator(vtdRanges, 1<<32-1)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(1<<32 - PageSize - (0xfef00000 - 0xfee00000)); a.Free() != want {
		t.Errorf("free %#x, want %#x", a.Free(), want)
	}
	if _, err := a.Alloc(0xfee00000-PageSize, PageSize); err != nil {
		t.Fatal(err)
	}
	// The next 1 MiB cannot go in the hole: it lands above it.
	p, err := a.Alloc(1<<20, PageSize)
	if err != nil || p != 0xfef00000 {
		t.Fatalf("allocation after filling below the MSI window at %#x (%v), want 0xfef00000", p, err)
	}
	// Ranges not on page boundaries are cut to whole pages within them.
	b, err := NewIOVAAllocator([]Range{{0x1800, 0x47ff}}, 1<<32-1)
	if err != nil {
		t.Fatal(err)
	}
	if b.Free() != 2*PageSize {
		t.Errorf("free %#x of [0x1800, 0x47ff], want the two whole pages 0x2000-0x3fff", b.Free())
	}
	if p, err := b.Alloc(2*PageSize, PageSize); err != nil || p != 0x2000 {
		t.Errorf("allocation at %#x (%v), want 0x2000", p, err)
	}
}

func TestIOVAAllocatorFreeReuse(t *testing.T) {
	a, err := NewIOVAAllocator([]Range{{0, 1<<20 - 1}}, 1<<32-1)
	if err != nil {
		t.Fatal(err)
	}
	total := a.Free()
	var got []uint64
	for range 4 {
		p, err := a.Alloc(2*PageSize, PageSize)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	// Free the second: the next allocation of its size reuses it.
	if err := a.Release(got[1]); err != nil {
		t.Fatal(err)
	}
	if p, err := a.Alloc(2*PageSize, PageSize); err != nil || p != got[1] {
		t.Fatalf("reuse at %#x (%v), want %#x", p, err, got[1])
	}
	// Free all, in an order that needs merging on both sides: the free
	// space is whole again and one allocation of all of it succeeds.
	for _, i := range []int{0, 2, 1, 3} {
		if err := a.Release(got[i]); err != nil {
			t.Fatal(err)
		}
	}
	if a.Free() != total || len(a.free) != 1 {
		t.Fatalf("after freeing everything: %#x free in %d ranges, want %#x in 1", a.Free(), len(a.free), total)
	}
	if _, err := a.Alloc(total, PageSize); err != nil {
		t.Fatalf("allocating all of a merged space: %v", err)
	}
	if err := a.Release(got[1] + PageSize); err == nil || !strings.Contains(err.Error(), "not the start of an allocation") {
		t.Errorf("release of an address inside an allocation: %v", err)
	}
	if err := a.Release(PageSize); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(PageSize); err == nil {
		t.Error("a double release was accepted")
	}
}

func TestIOVAAllocatorBadArguments(t *testing.T) {
	for _, mask := range []uint64{0, 0xfff, 1<<28 - 2, 0xf0ffffff} {
		if _, err := NewIOVAAllocator(vtdRanges, mask); err == nil {
			t.Errorf("mask %#x accepted", mask)
		}
	}
	if _, err := NewIOVAAllocator([]Range{{0xfee00000, 0xfeefffff}}, 1<<28-1); err == nil {
		t.Error("ranges all above the mask accepted")
	}
	if _, err := NewIOVAAllocator([]Range{{0x2000, 0x1000}}, 1<<32-1); err == nil {
		t.Error("a range ending before its start accepted")
	}
	a, _ := NewIOVAAllocator(vtdRanges, 1<<32-1)
	for _, c := range []struct{ size, align uint64 }{{0, PageSize}, {100, PageSize}, {PageSize, 0}, {PageSize, 2048}, {PageSize, 3 * PageSize}} {
		if _, err := a.Alloc(c.size, c.align); err == nil || errors.Is(err, ErrIOVAExhausted) {
			t.Errorf("Alloc(%#x, %#x): %v, want an argument error", c.size, c.align, err)
		}
	}
}
