package mpa

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
)

// OOOHandler receives what an OOOReceiver finds. Place gets each validated
// FPDU's ULPDU (valid only during the call) as soon as it is known, possibly
// out of stream order; Deliver then says, strictly in stream order, that the
// FPDU at seq and every stream octet before it have arrived (RFC 5044
// glossary, "Delivery"; appendix A.3). Both get the sequence number of the
// FPDU's ULPDU_Length field. An error from either stops the OOOReceiver.
// They are called from within Segment and must not call back into the
// receiver.
type OOOHandler interface {
	Place(seq uint32, ulpdu []byte) error
	Deliver(seq uint32) error
}

// DefaultWindow is an OOOReceiver's default window: how far beyond the next
// in-order sequence number it keeps out-of-order data.
const DefaultWindow = 1 << 20

// Sizes of the out-of-order store: pages of 4096 octets of sequence space
// counted from the marker base, so that pages, markers (every 512) and
// FPDU words (every 4) line up.
const (
	pageShift    = 12
	pageSize     = 1 << pageShift
	pageWords    = pageSize / 4 // 4-octet words per page
	maxFreePages = 4
)

// page holds the out-of-order octets of one 4096-octet stretch of sequence
// space and what is known about them.
type page struct {
	have    [pageSize / 64]uint64  // octet present
	covered [pageWords / 64]uint64 // word inside an FPDU placed out of order
	start   [pageWords / 64]uint64 // word holds the ULPDU_Length of such an FPDU
	data    [pageSize]byte
}

// candidate is a sequence number believed to hold an FPDU's ULPDU_Length
// field, found through a marker's FPDUPTR or right behind an FPDU placed out
// of order (RFC 5044 6, cases 2 and 3), waiting for the FPDU to be complete.
type candidate struct {
	need   uint32 // first missing octet: its arrival may let it progress
	loc    uint32 // furthest marker pointing here
	hasLoc bool   // found through a marker (else right behind a placed FPDU)
	fresh  bool   // not tried since it was found
	bad    bool   // can never be placed out of order
}

// OOOReceiver is the receive side of MPA Full Operation for TCP segments
// that arrive in any order, duplicated or overlapping (RFC 5044 6 and
// appendix A.3, A.4): the behaviour of an optimized MPA/TCP receiver, and so
// of the hardware.
//
// Segments are kept in sequence space from Seq() (the next in-order octet)
// to Seq()+window; data before Seq() is a duplicate and data beyond the
// window is dropped, as TCP drops data outside its receive window. Where
// copies overlap, the first copy received wins: once an octet is held it
// is never overwritten, so validated FPDUs cannot be changed by a
// retransmission (RFC 5044 appendix A.3 1).
//
// Placement. An FPDU is passed to Place once, as soon as it is complete and
// validated, found one of two ways:
//
//   - in order: the stream up to Seq() goes through a Receiver, which
//     follows the ULPDU_Length chain (RFC 5044 6 case 1). Every FPDU it
//     validates is placed, unless it was placed out of order before, and
//     then delivered.
//   - out of order, with markers on: a marker whose four octets have
//     arrived points (FPDUPTR, RFC 5044 4.2) to a ULPDU_Length field; the
//     FPDU there is placed as soon as all its octets, from its leading
//     marker (if any) to its CRC, are held, its CRC is good (when on), every
//     marker in it agrees, and the marker that found it lies inside it
//     (6 case 2). The FPDU right behind a placed one is a candidate too
//     (6 case 3). A candidate must lie wholly beyond the FPDU the in-order
//     chain is reading and must not overlap an FPDU placed out of order.
//
// With markers off nothing can be found out of order: FPDUs are placed when
// the gap before them closes.
//
// Errors. An out-of-order candidate that fails a check is simply not
// placed early. Errors are reported by the in-order chain only, so they are
// exactly the errors a Receiver reports for the same stream, at the same
// FPDU (RFC 5044 8 asks for the marker check "when a gap ... is closed").
// An FPDU placed out of order whose marker disagrees with the chain is
// therefore reported when the chain reaches the FPDU holding that marker:
// ErrMarker, or ErrCRC if that FPDU's CRC is bad too. After an error
// nothing more is placed or delivered, and every call returns the error.
//
// Memory. Out-of-order octets are kept in 4096-octet pages of sequence
// space (4096 data octets plus 768 octets of bitmaps each), allocated when
// data lands in them and freed once the in-order chain has moved past them.
// A page is also kept while the FPDU the chain is reading starts in it, so
// at most (window + 65536)/4096 + 2 pages exist: about 1.2 times the window
// plus 80 KiB, 1.3 MiB for the default 1 MiB window. Besides that there are
// two MaxULPDU reassembly buffers (the chain's and the validator's), and
// the candidates: one per marker held plus one behind each run of FPDUs
// placed out of order (each run begins with an FPDU holding the marker that
// found it), so at most 2*(window/512 + 1) that are still ahead of Seq().
// The handler must copy a ULPDU it wants to keep.
type OOOReceiver struct {
	h       OOOHandler
	markers bool
	crc     bool
	base    uint32
	window  uint32

	in  Receiver // the in-order chain; in.seq is the next in-order octet
	chk Receiver // validates FPDUs found out of order

	pages  map[uint32]*page // by page number: (seq - base) >> pageShift
	free   []*page
	lowOff uint32 // offset from base of the lowest page that may exist
	stored int    // octets held at or after in.seq

	cands map[uint32]*candidate // by ULPDU_Length sequence number
	order []uint32              // progress's scratch: candidates in stream order

	chainFn func(uint32, []byte) error
	placeFn func(uint32, []byte) error
	placeS  uint32 // FPDU chk is validating
	placeOK bool   // chk delivered it and Place accepted it
	hErr    error  // error from the handler during validation

	early int // FPDUs placed out of order
	err   error
}

// NewOOOReceiver returns an OOOReceiver for a half connection whose Full
// Operation starts at TCP sequence number base (see NewReceiver), reporting
// to h, with a window of DefaultWindow octets.
func NewOOOReceiver(markers, crc bool, base uint32, h OOOHandler) *OOOReceiver {
	o := &OOOReceiver{
		h:       h,
		markers: markers,
		crc:     crc,
		base:    base,
		window:  DefaultWindow,
		pages:   make(map[uint32]*page),
		cands:   make(map[uint32]*candidate),
	}
	o.in = Receiver{markers: markers, crc: crc, base: base}
	o.in.resetAt(base)
	o.chk = Receiver{markers: markers, crc: crc, base: base}
	o.chainFn = o.chainDeliver
	o.placeFn = o.placeChecked
	return o
}

// NewOOOReceiverAt returns an OOOReceiver like NewOOOReceiver whose
// in-order chain is at seq instead of base (as NewReceiverAt): for a
// receive side whose octets before seq someone else took. driver/model's
// PlaceEarly uses it to search one out-of-order segment the way the
// device's mpa_rx_ooo does, without the stream before it.
func NewOOOReceiverAt(markers, crc bool, base, seq uint32, h OOOHandler) *OOOReceiver {
	o := NewOOOReceiver(markers, crc, base, h)
	o.in.resetAt(seq)
	o.lowOff = (seq - base) &^ (pageSize - 1)
	return o
}

// SetWindow sets how many octets of sequence space beyond Seq() the
// receiver accepts, clamped to 1..2^30. Octets already held beyond a
// smaller new window stay.
func (o *OOOReceiver) SetWindow(octets int) {
	o.window = uint32(min(max(octets, 1), 1<<30))
}

// Window returns the window in octets.
func (o *OOOReceiver) Window() int { return int(o.window) }

// Base returns the marker base.
func (o *OOOReceiver) Base() uint32 { return o.base }

// Seq returns the next in-order sequence number: every octet before it has
// arrived.
func (o *OOOReceiver) Seq() uint32 { return o.in.seq }

// Buffered returns the number of out-of-order octets held (at or after
// Seq()); never more than the window. The in-order chain's reassembly of a
// partial FPDU (at most MaxULPDU octets) is not counted.
func (o *OOOReceiver) Buffered() int { return o.stored }

// Err returns the error that stopped the receiver, or nil.
func (o *OOOReceiver) Err() error { return o.err }

// less reports whether a comes before b in sequence space (RFC 793
// arithmetic, valid within 2^31).
func less(a, b uint32) bool { return int32(a-b) < 0 }

// Segment takes the payload of one TCP segment whose first octet has
// sequence number seq. It places and delivers whatever the segment
// completes and returns the first error (an *Error from MPA, or the
// handler's).
func (o *OOOReceiver) Segment(seq uint32, data []byte) error {
	if o.err != nil {
		return o.err
	}
	next := o.in.seq
	if d := seq - next; d >= o.window {
		if d < 1<<31 {
			return nil // beyond the window
		}
		back := uint64(next - seq) // octets before next: duplicates
		if back >= uint64(len(data)) {
			return nil
		}
		data, seq = data[back:], next
	}
	if room := uint64(o.window - (seq - next)); uint64(len(data)) > room {
		data = data[:room]
	}
	if len(data) == 0 {
		return nil
	}
	from, to := seq, seq+uint32(len(data))
	if seq == next {
		// In order: what precedes the first held octet goes straight to
		// the chain without being copied.
		k := len(data)
		if o.stored > 0 {
			k = o.firstHeld(seq, len(data))
		}
		if k > 0 {
			if err := o.in.Feed(data[:k], o.chainFn); err != nil {
				return o.fail(err)
			}
			data, seq = data[k:], seq+uint32(k)
		}
	}
	added := 0
	if len(data) > 0 {
		added = o.insert(seq, data)
	}
	if err := o.drain(); err != nil {
		return err
	}
	o.release()
	if added > 0 {
		o.discover(from, to)
		o.progress(from, to)
	}
	return o.err
}

// fail stops the receiver with err.
func (o *OOOReceiver) fail(err error) error {
	if o.err == nil {
		o.err = err
	}
	return o.err
}

// chainDeliver is the in-order chain's callback: place the FPDU unless it
// was placed out of order, then deliver it.
func (o *OOOReceiver) chainDeliver(seq uint32, ulpdu []byte) error {
	if !o.takeStart(seq) {
		if err := o.h.Place(seq, ulpdu); err != nil {
			return err
		}
	}
	delete(o.cands, seq)
	return o.h.Deliver(seq)
}

// drain feeds the held octets at the in-order point to the chain.
func (o *OOOReceiver) drain() error {
	for o.stored > 0 {
		run := o.heldRun(o.in.seq)
		if len(run) == 0 {
			return nil
		}
		o.stored -= len(run)
		if err := o.in.Feed(run, o.chainFn); err != nil {
			return o.fail(err)
		}
	}
	return nil
}

// release frees the pages wholly before the FPDU the chain is reading.
func (o *OOOReceiver) release() {
	keep := (o.in.startSeq - o.base) &^ (pageSize - 1)
	if len(o.pages) == 0 {
		o.lowOff = keep
		return
	}
	for int32(keep-o.lowOff) > 0 {
		if p := o.pages[o.lowOff>>pageShift]; p != nil {
			delete(o.pages, o.lowOff>>pageShift)
			if len(o.free) < maxFreePages {
				o.free = append(o.free, p)
			}
		}
		o.lowOff += pageSize
	}
}

// pageAt returns the page holding seq and seq's index in it; nil if none.
func (o *OOOReceiver) pageAt(seq uint32) (*page, int) {
	off := seq - o.base
	return o.pages[off>>pageShift], int(off & (pageSize - 1))
}

// insert stores the octets of data not yet held, at seq onwards (all
// within the window), and returns how many were new.
func (o *OOOReceiver) insert(seq uint32, data []byte) int {
	added := 0
	for len(data) > 0 {
		off := seq - o.base
		pn := off >> pageShift
		p := o.pages[pn]
		if p == nil {
			if n := len(o.free); n > 0 {
				p = o.free[n-1]
				o.free = o.free[:n-1]
				*p = page{}
			} else {
				p = new(page)
			}
			o.pages[pn] = p
		}
		idx := int(off & (pageSize - 1))
		k := min(len(data), pageSize-idx)
		for j := idx; j < idx+k; {
			w, b := j>>6, uint(j&63)
			n := min(64-int(b), idx+k-j)
			mask := ^uint64(0) >> (64 - uint(n)) << b
			src := data[j-idx : j-idx+n]
			switch h := p.have[w]; {
			case h&mask == 0:
				copy(p.data[j:], src)
				added += n
			case h&mask != mask:
				for t := range n {
					if h&(1<<(b+uint(t))) == 0 {
						p.data[j+t] = src[t]
						added++
					}
				}
			}
			p.have[w] |= mask
			j += n
		}
		data = data[k:]
		seq += uint32(k)
	}
	o.stored += added
	return added
}

// heldRun returns the held octets from seq to the first missing one or the
// end of seq's page, whichever comes first.
func (o *OOOReceiver) heldRun(seq uint32) []byte {
	p, idx := o.pageAt(seq)
	if p == nil {
		return nil
	}
	end := idx
	for end < pageSize {
		w, b := end>>6, uint(end&63)
		miss := ^p.have[w] >> b
		if miss != 0 {
			end += bits.TrailingZeros64(miss)
			break
		}
		end += 64 - int(b)
	}
	return p.data[idx:min(end, pageSize)]
}

// firstMissing returns the first sequence number in [from, to) whose octet
// is not held, or to.
func (o *OOOReceiver) firstMissing(from, to uint32) uint32 {
	for less(from, to) {
		run := o.heldRun(from)
		if len(run) == 0 {
			return from
		}
		if uint32(len(run)) >= to-from {
			return to
		}
		from += uint32(len(run))
		if (from-o.base)&(pageSize-1) != 0 {
			return from // the run stopped inside its page
		}
	}
	return to
}

// firstHeld returns the offset of the first held octet in [seq, seq+n), or
// n.
func (o *OOOReceiver) firstHeld(seq uint32, n int) int {
	for i := 0; i < n; {
		p, idx := o.pageAt(seq + uint32(i))
		k := min(n-i, pageSize-idx)
		if p != nil {
			for j := idx; j < idx+k; {
				w, b := j>>6, uint(j&63)
				if h := p.have[w] >> b; h != 0 {
					if t := j + bits.TrailingZeros64(h); t < idx+k {
						return i + t - idx
					}
					return n
				}
				j += 64 - int(b)
			}
		}
		i += k
	}
	return n
}

// wordBits calls fn for each page word range that [from, to) covers (both
// 4-aligned relative to base, all pages present), with the word index
// range inside the page.
func (o *OOOReceiver) wordBits(from, to uint32, fn func(p *page, w0, w1 int) bool) bool {
	for less(from, to) {
		p, idx := o.pageAt(from)
		k := min(int(to-from), pageSize-idx)
		if p == nil || !fn(p, idx/4, (idx+k)/4) {
			return false
		}
		from += uint32(k)
	}
	return true
}

// anyCovered reports whether a word of [from, to) lies in an FPDU placed
// out of order.
func (o *OOOReceiver) anyCovered(from, to uint32) bool {
	return !o.wordBits(from, to, func(p *page, w0, w1 int) bool {
		for w := w0; w < w1; w++ {
			if p.covered[w>>6]&(1<<uint(w&63)) != 0 {
				return false
			}
		}
		return true
	})
}

// markPlaced records the FPDU at [from, to) with ULPDU_Length at s as
// placed out of order.
func (o *OOOReceiver) markPlaced(from, to, s uint32) {
	o.wordBits(from, to, func(p *page, w0, w1 int) bool {
		for w := w0; w < w1; w++ {
			p.covered[w>>6] |= 1 << uint(w&63)
		}
		return true
	})
	if p, idx := o.pageAt(s); p != nil {
		p.start[idx>>8] |= 1 << uint((idx>>2)&63)
	}
}

// takeStart reports whether the FPDU with ULPDU_Length at s was placed out
// of order, and forgets it.
func (o *OOOReceiver) takeStart(s uint32) bool {
	p, idx := o.pageAt(s)
	if p == nil {
		return false
	}
	w, bit := idx>>8, uint64(1)<<uint((idx>>2)&63)
	if p.start[w]&bit == 0 {
		return false
	}
	p.start[w] &^= bit
	return true
}

// isPlaced reports whether an FPDU with ULPDU_Length at s was placed out of
// order.
func (o *OOOReceiver) isPlaced(s uint32) bool {
	p, idx := o.pageAt(s)
	return p != nil && p.start[idx>>8]&(1<<uint((idx>>2)&63)) != 0
}

// discover looks at every marker with an octet in [from, to) that is now
// held in full and records the FPDU it points to as a candidate (RFC 5044
// 4.3: the FPDU starts FPDUPTR octets before the marker, or right after it
// when FPDUPTR is 0).
func (o *OOOReceiver) discover(from, to uint32) {
	if !o.markers {
		return
	}
	first := from - (MarkerLen - 1)
	for m := first + uint32(markerDist(o.base, first)); less(m, to); m += MarkerInterval {
		if less(m, o.in.seq) || o.firstMissing(m, m+MarkerLen) != m+MarkerLen {
			continue
		}
		p, idx := o.pageAt(m) // a marker never straddles a page
		ptr := uint32(binary.BigEndian.Uint16(p.data[idx+2:]) &^ 3)
		s := m - ptr
		if ptr == 0 {
			s = m + MarkerLen
		}
		if o.isPlaced(s) {
			continue
		}
		c := o.cands[s]
		if c == nil {
			c = &candidate{need: s}
			o.cands[s] = c
		}
		if c.bad {
			continue
		}
		if !c.hasLoc || less(c.loc, m) {
			c.loc, c.hasLoc = m, true
		}
		c.fresh = true
	}
}

// progress tries every candidate whose missing octet may have arrived in
// [from, to), in stream order (so that markers that disagree give the same
// result on every run), and drops candidates the chain has overtaken.
func (o *OOOReceiver) progress(from, to uint32) {
	o.order = o.order[:0]
	for s := range o.cands {
		o.order = append(o.order, s)
	}
	base := o.in.seq
	slices.SortFunc(o.order, func(a, b uint32) int { return cmp.Compare(a-base, b-base) })
	for _, s := range o.order {
		if o.err != nil {
			return
		}
		c := o.cands[s]
		if c == nil {
			continue // a chain tried earlier in this pass dropped it
		}
		if less(s, o.in.seq) {
			delete(o.cands, s)
			continue
		}
		if c.bad || !c.fresh && (less(c.need, from) || !less(c.need, to)) {
			continue
		}
		o.try(s, c)
	}
}

// try places the candidate FPDU at s if it is complete and valid, then
// follows the ULPDU_Length chain from it as far as it can (RFC 5044 6
// case 3).
func (o *OOOReceiver) try(s uint32, c *candidate) {
	for o.err == nil {
		next, ok := o.tryOne(s, c)
		if !ok {
			return
		}
		s, c = next, o.cands[next]
	}
}

// tryOne tries one candidate; after placing it, it returns the sequence
// number of the following FPDU's ULPDU_Length field, added as a candidate,
// and true.
func (o *OOOReceiver) tryOne(s uint32, c *candidate) (uint32, bool) {
	c.fresh = false
	lead := o.markers && isMarkerSeq(o.base, s-MarkerLen)
	from := s
	if lead {
		from -= MarkerLen
	}
	// The chain's current FPDU, once its length is known, is off limits.
	limit := o.in.seq
	if o.in.phase != rxHeader {
		limit = o.in.endSeq
	}
	if less(from, limit) {
		delete(o.cands, s)
		return 0, false
	}
	if (s-o.base)%4 != 0 || o.markers && isMarkerSeq(o.base, s) {
		c.bad = true // no ULPDU_Length can sit there
		return 0, false
	}
	if f := o.firstMissing(from, s+HeaderLen); f != s+HeaderLen {
		c.need = f
		return 0, false
	}
	p, idx := o.pageAt(s) // s is 4-aligned: the field does not straddle pages
	ulen := int(binary.BigEndian.Uint16(p.data[idx:]))
	if ulen > MaxULPDU {
		c.bad = true
		return 0, false
	}
	end := s + uint32(fpduTail(o.markers, o.base, s, ulen))
	if c.hasLoc && !less(c.loc, end) {
		c.bad = true // the marker that found it is not inside it
		return 0, false
	}
	if f := o.firstMissing(from, end); f != end {
		c.need = f
		return 0, false
	}
	if o.anyCovered(from, end) {
		c.bad = true
		return 0, false
	}
	// Validate with a Receiver of its own started at the FPDU: exactly
	// the checks the chain will make (RFC 5044 4.4, 4.3).
	o.chk.resetAt(from)
	o.placeS, o.placeOK, o.hErr = s, false, nil
	for at := from; less(at, end) && o.chk.err == nil; {
		run := o.heldRun(at)
		run = run[:min(len(run), int(end-at))]
		if err := o.chk.Feed(run, o.placeFn); err != nil {
			break
		}
		at += uint32(len(run))
	}
	if o.hErr != nil {
		o.fail(o.hErr)
		return 0, false
	}
	if !o.placeOK {
		c.bad = true
		return 0, false
	}
	o.early++
	o.markPlaced(from, end, s)
	delete(o.cands, s)
	nextS := end
	if o.markers && isMarkerSeq(o.base, end) {
		nextS += MarkerLen
	}
	if o.isPlaced(nextS) {
		return 0, false
	}
	nc := o.cands[nextS]
	if nc == nil {
		nc = &candidate{need: nextS}
		o.cands[nextS] = nc
	}
	if nc.bad {
		return 0, false
	}
	return nextS, true
}

// placeChecked is chk's callback: the candidate validated, so place it.
func (o *OOOReceiver) placeChecked(seq uint32, ulpdu []byte) error {
	if seq != o.placeS {
		return errorf(ErrMarker, seq, "validator found an FPDU at %#x, expected %#x", seq, o.placeS)
	}
	if err := o.h.Place(seq, ulpdu); err != nil {
		o.hErr = err
		return err
	}
	o.placeOK = true
	return nil
}
