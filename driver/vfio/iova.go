package vfio

import (
	"fmt"
	"math/bits"
	"slices"
)

// PageSize is the granule of DMA buffers and IOVAs: 4 KiB, the smallest
// page every IOMMU (and VFIO_IOMMU_MAP_DMA) handles.
const PageSize = 4096

// Range is an IOVA range, [Start, End] with End inclusive (as struct
// vfio_iova_range has it).
type Range struct {
	Start, End uint64
}

// IOVAAllocator hands out IO virtual addresses for DMA mappings: first
// fit over the free space, which is the IOMMU's usable ranges cut down to
// the device's DMA mask, less page 0 (no buffer gets address 0, which
// devices and drivers alike read as "no address").
type IOVAAllocator struct {
	free []Range           // sorted, disjoint, not adjacent
	used map[uint64]uint64 // start -> size of each allocation
}

// NewIOVAAllocator returns an allocator over usable (the ranges the IOMMU
// can map; VFIO_IOMMU_GET_INFO's IOVA range capability) within mask, the
// device's DMA mask: all ones below some bit (edu's is 1<<28 - 1).
func NewIOVAAllocator(usable []Range, mask uint64) (*IOVAAllocator, error) {
	if err := checkMask(mask); err != nil {
		return nil, err
	}
	a := &IOVAAllocator{used: map[uint64]uint64{}}
	rs := slices.Clone(usable)
	slices.SortFunc(rs, func(x, y Range) int {
		switch {
		case x.Start < y.Start:
			return -1
		case x.Start > y.Start:
			return 1
		}
		return 0
	})
	for _, r := range rs {
		if r.End < r.Start {
			return nil, fmt.Errorf("vfio: IOVA range [%#x, %#x] ends before it starts", r.Start, r.End)
		}
		// Whole pages inside the range, the mask and above page 0.
		start := max(alignUp(r.Start, PageSize), PageSize)
		end := min(r.End, mask) // inclusive
		if end < start || end-start+1 < PageSize {
			continue
		}
		end = alignDown(end+1, PageSize) - 1
		if end < start {
			continue
		}
		a.insertFree(Range{start, end})
	}
	if len(a.free) == 0 {
		return nil, fmt.Errorf("vfio: no usable IOVA page within DMA mask %#x (IOMMU ranges %v)", mask, usable)
	}
	return a, nil
}

// Alloc returns the lowest free IOVA of size octets (a multiple of
// PageSize) aligned to align (a power of two, at least PageSize), or
// ErrIOVAExhausted.
func (a *IOVAAllocator) Alloc(size, align uint64) (uint64, error) {
	if size == 0 || size%PageSize != 0 {
		return 0, fmt.Errorf("vfio: IOVA size %#x is not a positive multiple of %d", size, PageSize)
	}
	if align < PageSize || bits.OnesCount64(align) != 1 {
		return 0, fmt.Errorf("vfio: IOVA alignment %#x is not a power of two of at least %d", align, PageSize)
	}
	for i, r := range a.free {
		start := alignUp(r.Start, align)
		if start < r.Start || start > r.End || r.End-start+1 < size {
			continue
		}
		end := start + size - 1
		// Split r around [start, end].
		var rest []Range
		if start > r.Start {
			rest = append(rest, Range{r.Start, start - 1})
		}
		if end < r.End {
			rest = append(rest, Range{end + 1, r.End})
		}
		a.free = slices.Replace(a.free, i, i+1, rest...)
		a.used[start] = size
		return start, nil
	}
	return 0, fmt.Errorf("%w (%d octets asked, %d free in %d ranges)", ErrIOVAExhausted, size, a.Free(), len(a.free))
}

// Release returns an allocation to the free space.
func (a *IOVAAllocator) Release(iova uint64) error {
	size, ok := a.used[iova]
	if !ok {
		return fmt.Errorf("vfio: IOVA %#x is not the start of an allocation (freed twice?)", iova)
	}
	delete(a.used, iova)
	a.insertFree(Range{iova, iova + size - 1})
	return nil
}

// Free returns the free octets.
func (a *IOVAAllocator) Free() uint64 {
	var n uint64
	for _, r := range a.free {
		n += r.End - r.Start + 1
	}
	return n
}

// insertFree adds r to the free list, merging it with neighbours.
func (a *IOVAAllocator) insertFree(r Range) {
	i, _ := slices.BinarySearchFunc(a.free, r.Start, func(x Range, s uint64) int {
		switch {
		case x.Start < s:
			return -1
		case x.Start > s:
			return 1
		}
		return 0
	})
	a.free = slices.Insert(a.free, i, r)
	// Merge with the next, then with the previous.
	if i+1 < len(a.free) && a.free[i].End+1 >= a.free[i+1].Start {
		a.free[i].End = max(a.free[i].End, a.free[i+1].End)
		a.free = slices.Delete(a.free, i+1, i+2)
	}
	if i > 0 && a.free[i-1].End+1 >= a.free[i].Start {
		a.free[i-1].End = max(a.free[i-1].End, a.free[i].End)
		a.free = slices.Delete(a.free, i, i+1)
	}
}

// checkMask accepts a DMA mask of all ones below some bit, 13 or more.
func checkMask(mask uint64) error {
	if mask&(mask+1) != 0 || mask < 2*PageSize-1 {
		return fmt.Errorf("vfio: DMA mask %#x is not a run of low one bits of at least 13 (like 1<<32 - 1)", mask)
	}
	return nil
}

func alignUp(x, a uint64) uint64   { return (x + a - 1) &^ (a - 1) }
func alignDown(x, a uint64) uint64 { return x &^ (a - 1) }
