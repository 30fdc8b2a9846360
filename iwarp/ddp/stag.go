package ddp

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// An STag is 32 bits: the usual layout, and the one this package and the
// hardware use, is a 24-bit index that selects the table entry and an
// 8-bit key that the owner changes each time the entry is reused, so a
// Remote Peer that kept an old STag is refused (RFC 5041 8.3 item 2: STags
// are valid only for the duration the ULP establishes).

// MakeSTag returns the STag with the given 24-bit index and 8-bit key.
func MakeSTag(index uint32, key uint8) uint32 { return index<<8 | uint32(key) }

// STagIndex returns the 24-bit index of an STag.
func STagIndex(stag uint32) uint32 { return stag >> 8 }

// STagKey returns the 8-bit key of an STag.
func STagKey(stag uint32) uint8 { return uint8(stag) }

// Region is a tagged buffer: the memory an STag names and what it may be
// used for (8.2, 8.3.1).
type Region struct {
	STag   uint32
	PD     uint32 // Protection Domain: only streams of the same PD may use the STag (8.2)
	Stream uint64 // DDP Stream the STag is bound to; 0 = any stream of the PD (8.2)
	Access Access // rights granted to the Remote Peer (8.3.1 item 5)
	Base   uint64 // TO of Buf[0]
	Buf    []byte // the memory: TOs Base .. Base+len(Buf)-1
}

// contains reports whether n octets at TO to lie inside the region; n > 0
// and to+n not wrapping are the caller's business.
func (r *Region) contains(to, n uint64) bool {
	return to >= r.Base && to-r.Base <= uint64(len(r.Buf)) && n <= uint64(len(r.Buf))-(to-r.Base)
}

// Slice returns the n octets of the region that start at TO to, after the
// same bounds checks as placement. It is for a Data Source serving an
// RDMA Read from a region it obtained through STagTable.Check.
func (r *Region) Slice(to uint64, n uint64) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	if to > math.MaxUint64-n || !r.contains(to, n) {
		return nil, false
	}
	off := to - r.Base
	return r.Buf[off : off+n : off+n], true
}

type stagEntry struct {
	r     Region
	valid bool
}

// STagTable holds the tagged buffers of an RNIC, shared by all its
// streams. It is safe for concurrent use; placement holds the table's read
// lock while it checks and copies, and Invalidate and Deregister take the
// write lock, so once they return no byte is written to the region any
// more (8.3.1 item 6).
type STagTable struct {
	mu      sync.RWMutex
	entries map[uint32]*stagEntry // by STag index
}

// NewSTagTable returns an empty table.
func NewSTagTable() *STagTable {
	return &STagTable{entries: make(map[uint32]*stagEntry)}
}

// ErrSTagInUse is returned by Register when the STag's index names a valid
// region.
var ErrSTagInUse = errors.New("ddp: STag index already names a valid region")

// Register makes r valid. The index of r.STag must be free or name an
// invalidated region (which r then replaces, typically with a new key).
// It fails if Base+len(Buf) does not fit in 64 bits, the region's TO range
// would wrap (see checkLocked).
func (t *STagTable) Register(r Region) error {
	if n := uint64(len(r.Buf)); r.Base > math.MaxUint64-n {
		return fmt.Errorf("ddp: region of %d octets at TO %#x wraps the 64-bit TO", n, r.Base)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	idx := STagIndex(r.STag)
	if e := t.entries[idx]; e != nil && e.valid {
		return ErrSTagInUse
	}
	t.entries[idx] = &stagEntry{r: r, valid: true}
	return nil
}

// lookupLocked returns the valid region whose STag is exactly stag: the
// index must exist, the region must not be invalidated and the key must
// match (a stale key is an invalid STag).
func (t *STagTable) lookupLocked(stag uint32) (*Region, error) {
	e := t.entries[STagIndex(stag)]
	switch {
	case e == nil:
		return nil, taggedError(CodeInvalidSTag, "STag %#08x: no region with index %#x", stag, STagIndex(stag))
	case e.r.STag != stag:
		return nil, taggedError(CodeInvalidSTag, "STag %#08x: key %#02x does not match the region's key %#02x", stag, STagKey(stag), STagKey(e.r.STag))
	case !e.valid:
		return nil, taggedError(CodeInvalidSTag, "STag %#08x has been invalidated", stag)
	}
	return &e.r, nil
}

// Lookup returns the valid region named by stag.
func (t *STagTable) Lookup(stag uint32) (Region, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	r, err := t.lookupLocked(stag)
	if err != nil {
		return Region{}, false
	}
	return *r, true
}

// Invalidate makes the region named by stag invalid, on behalf of its
// local owner. From its return on, no segment is placed into the region.
// It fails with a *Error (Invalid STag) if stag does not name a valid
// region.
func (t *STagTable) Invalidate(stag uint32) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, err := t.lookupLocked(stag)
	if err != nil {
		return err
	}
	t.entries[STagIndex(r.STag)].valid = false
	return nil
}

// InvalidateRemote invalidates stag on behalf of a Remote Peer on the
// stream (pd, stream), as RDMAP's Send with Invalidate does: the STag must
// be valid and associated with the stream (8.2). It fails with a *Error
// (Invalid STag or STag not associated with DDP Stream).
func (t *STagTable) InvalidateRemote(stag, pd uint32, stream uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, err := t.lookupLocked(stag)
	if err != nil {
		return err
	}
	if err := associated(r, pd, stream); err != nil {
		return err
	}
	t.entries[STagIndex(r.STag)].valid = false
	return nil
}

// Deregister removes the region named by stag (valid or invalidated, but
// with a matching key), freeing its index.
func (t *STagTable) Deregister(stag uint32) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[STagIndex(stag)]
	if e == nil || e.r.STag != stag {
		return taggedError(CodeInvalidSTag, "STag %#08x is not registered", stag)
	}
	delete(t.entries, STagIndex(stag))
	return nil
}

// associated checks the PD and stream association of 8.2.
func associated(r *Region, pd uint32, stream uint64) error {
	if r.PD != pd {
		return taggedError(CodeSTagNotAssociated, "STag %#08x belongs to PD %d, the stream to PD %d", r.STag, r.PD, pd)
	}
	if r.Stream != 0 && r.Stream != stream {
		return taggedError(CodeSTagNotAssociated, "STag %#08x is bound to stream %d, not %d", r.STag, r.Stream, stream)
	}
	return nil
}

// checkLocked runs the tagged checks of 7.1 and 8.2 for n > 0 octets at
// TO to, in this order: STag valid (Invalid STag), association with the
// stream's PD and stream (STag not associated with DDP Stream), access
// right (*AccessError), 64-bit wrap of TO+n (TO wrap), base and bounds
// (Base or bounds violation). Wrap is checked before bounds because a
// wrapped end would pass a naive bounds check. 7.1 item 5 asks that "a
// 64-bit unsigned sum of the DDP Segment payload length and the TO does
// not wrap": a sum of exactly 2^64, a segment ending on the last TO, does
// not fit in 64 bits either and is a TO wrap, as a 64-bit adder's carry
// out would say.
func (t *STagTable) checkLocked(stag, pd uint32, stream uint64, to, n uint64, need Access) (*Region, error) {
	r, err := t.lookupLocked(stag)
	if err != nil {
		return nil, err
	}
	if err := associated(r, pd, stream); err != nil {
		return nil, err
	}
	if r.Access&need != need {
		return nil, &AccessError{STag: stag, Need: need, Have: r.Access}
	}
	if to > math.MaxUint64-n {
		return nil, taggedError(CodeTOWrap, "%d octets at TO %#x wrap the 64-bit TO", n, to)
	}
	if !r.contains(to, n) {
		return nil, taggedError(CodeBaseBounds, "%d octets at TO %#x outside STag %#08x's TOs %#x..%#x", n, to, stag, r.Base, r.Base+uint64(len(r.Buf)))
	}
	return r, nil
}

// Check runs the checks that placement runs for n octets at TO to through
// stag on the stream (pd, stream) needing access need, and returns the
// region. It is for the Data Source of an RDMA Read (need RemoteRead),
// whose Read Request names a source STag and TO; n must not be zero
// (a zero-length transfer checks neither STag nor TO, 5.2).
// Errors are *Error (tagged buffer errors) and *AccessError.
func (t *STagTable) Check(stag, pd uint32, stream uint64, to, n uint64, need Access) (Region, error) {
	if n == 0 {
		return Region{}, errors.New("ddp: Check of a zero-length range")
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	r, err := t.checkLocked(stag, pd, stream, to, n, need)
	if err != nil {
		return Region{}, err
	}
	return *r, nil
}

// place checks n octets at TO to of stag and copies the pieces there, one
// after another, all under the read lock so that invalidation cannot
// interleave. Nothing is written past the n octets checked, whatever the
// pieces hold.
func (t *STagTable) place(stag, pd uint32, stream uint64, to uint64, pieces [][]byte, n int, need Access) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	r, err := t.checkLocked(stag, pd, stream, to, uint64(n), need)
	if err != nil {
		return err
	}
	dst := r.Buf[to-r.Base:][:n]
	for _, p := range pieces {
		dst = dst[copy(dst, p):]
	}
	return nil
}
