package mpa

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// GatherMin is the shortest payload span that Framer.GatherFPDU leaves in
// place as a piece of its own; shorter spans are copied next to the octets
// the Framer makes, where an extra piece (an iovec for the kernel to walk)
// would cost more than the copy.
const GatherMin = 256

// Gather collects FPDUs for one vectored write (writev): a list of pieces
// that, written in order, make the same octets that Framer.AppendFPDU
// would have written to a buffer. Framer.GatherFPDU adds FPDUs whose
// payload stays where it is; the octets the Framer makes itself (ULPDU
// length, DDP header, markers, pad, CRC) go into a scratch area the Gather
// owns, and adjacent ones share a piece.
//
// The zero value is an empty Gather. A Gather is reused after WriteTo or
// Reset without allocating, once its arrays have grown to the size of a
// batch.
type Gather struct {
	bufs    [][]byte
	scratch []byte
	n       int
	// tail is set when the last piece is scratch[tailAt:len(scratch)], so
	// that octets appended to scratch can extend it.
	tail   bool
	tailAt int
	wb     net.Buffers // WriteTo's copy of bufs, here so that it does not escape
}

// Len returns the number of octets in the Gather.
func (g *Gather) Len() int { return g.n }

// Pieces returns the number of pieces (iovecs) in the Gather.
func (g *Gather) Pieces() int { return len(g.bufs) }

// Buffers returns the pieces in wire order. They are valid until the next
// WriteTo or Reset; payload pieces alias the payloads given to
// Framer.GatherFPDU.
func (g *Gather) Buffers() [][]byte { return g.bufs }

// AppendTo appends the Gather's octets to dst, flattened.
func (g *Gather) AppendTo(dst []byte) []byte {
	dst = slices.Grow(dst, g.n)
	for _, b := range g.bufs {
		dst = append(dst, b...)
	}
	return dst
}

// Reset empties the Gather, keeping its arrays. It drops the references to
// the payloads it held.
func (g *Gather) Reset() {
	clear(g.bufs)
	g.bufs = g.bufs[:0]
	g.scratch = g.scratch[:0]
	g.n = 0
	g.tail = false
}

// WriteTo writes the Gather's pieces to w in order and empties the Gather,
// also on error. On a *net.TCPConn (any writer net.Buffers gathers for)
// this is writev, at most 1024 pieces per system call; any other writer
// gets one Write per piece.
func (g *Gather) WriteTo(w io.Writer) (int64, error) {
	// net.Buffers consumes the slice it writes (and nils its elements);
	// give it a copy of the header and keep the array.
	g.wb = g.bufs
	n, err := g.wb.WriteTo(w)
	g.wb = nil
	g.Reset()
	return n, err
}

// addCopy appends b to the scratch area and to the wire, extending the
// last piece when it is the scratch area's tail.
func (g *Gather) addCopy(b []byte) {
	if len(b) == 0 {
		return
	}
	start := len(g.scratch)
	g.scratch = append(g.scratch, b...)
	g.extend(start)
}

// extend makes scratch[start:] part of the wire, after the pieces already
// there. If the scratch array was reallocated meanwhile, earlier pieces
// keep pointing into the old array, whose octets do not change; the tail
// piece is cut again from the new one, which holds the same octets.
func (g *Gather) extend(start int) {
	end := len(g.scratch)
	if end == start {
		return
	}
	if g.tail {
		g.bufs[len(g.bufs)-1] = g.scratch[g.tailAt:end:end]
	} else {
		g.tail, g.tailAt = true, start
		g.bufs = append(g.bufs, g.scratch[start:end:end])
	}
	g.n += end - start
}

// addRef appends p to the wire as a piece of its own, without copying it.
func (g *Gather) addRef(p []byte) {
	if len(p) == 0 {
		return
	}
	g.bufs = append(g.bufs, p[:len(p):len(p)])
	g.tail = false
	g.n += len(p)
}

// CopyFPDU adds the FPDU for hdr||payload to g as AppendFPDU would build it,
// payload copied. Use it for payload memory that may change before g is
// written (the CRC must match what goes on the wire), and for writers that
// do not gather, where a Gather filled by CopyFPDU alone is a single piece.
// On error g and the Framer are unchanged.
func (f *Framer) CopyFPDU(g *Gather, hdr, payload []byte) error {
	start := len(g.scratch)
	s, err := f.AppendFPDU(g.scratch, hdr, payload)
	if err != nil {
		return err
	}
	g.scratch = s
	g.extend(start)
	return nil
}

// GatherFPDU adds the FPDU for the ULPDU hdr||payload to g: the same octets
// as AppendFPDU (RFC 5044 4.1 to 4.4: ULPDU_Length, ULPDU, pad, CRC, markers
// at their sequence numbers with their FPDUPTRs, the CRC over all of it),
// but the payload is not copied: the spans of it between markers become
// pieces of g (spans shorter than GatherMin are copied). The Framer moves
// on exactly as with AppendFPDU.
//
// Gathering pays when the pieces are long. With markers on, the payload
// is cut every 508 octets by a 4-octet marker, so an FPDU becomes about
// two pieces per 512 octets, and on Linux writev of such a list costs far
// more than one copy into a buffer and a plain write: BenchmarkTCPWrite
// measures 1.9 GB/s gathered against 3.2 GB/s copied with markers, and
// 4.2 against 3.7 without (loopback, 2-core EPYC VM, kernel 6.18). The CRC
// over many short pieces is also slower than over one buffer
// (BenchmarkGather64K against BenchmarkFramer64K).
//
// The CRC is computed now and the payload is read again when g is written,
// so the payload must not change until then: a change would put a wrong CRC
// on the wire. A ULPDU longer than MaxULPDU is refused with an error
// wrapping ErrULPDUTooLong; g and the Framer are then unchanged.
func (f *Framer) GatherFPDU(g *Gather, hdr, payload []byte) error {
	n := len(hdr) + len(payload)
	if n > MaxULPDU {
		return fmt.Errorf("%w: %d octets", ErrULPDUTooLong, n)
	}
	w := f.WireLen(n)
	// Room for everything but the payload, and for the short payload
	// spans that are copied: only the first and the last span of the
	// payload can be short, the others run from marker to marker.
	g.scratch = slices.Grow(g.scratch, w-len(payload)+min(len(payload), 2*GatherMin))

	fg := fpduGather{g: g, crc: f.crc, mark: len(g.scratch)}
	var lenField [HeaderLen]byte
	binary.BigEndian.PutUint16(lenField[:], uint16(n))
	var pad [3]byte

	if !f.markers {
		fg.copy(lenField[:])
		fg.copy(hdr)
		fg.payload(payload)
		fg.copy(pad[:PadLen(n)])
	} else {
		// As in AppendFPDU: d counts the FPDU octets still to emit
		// before the next marker, i the octets emitted so far, hdrAt
		// where the ULPDU_Length field is.
		d := markerDist(f.base, f.seq)
		i, hdrAt := 0, 0
		if d == 0 {
			fg.marker(0) // between FPDUs: FPDUPTR 0, part of this FPDU
			i, hdrAt, d = MarkerLen, MarkerLen, markerSpacing
		}
		i, d = fg.putCopy(i, hdrAt, d, lenField[:])
		i, d = fg.putCopy(i, hdrAt, d, hdr)
		i, d = fg.putPayload(i, hdrAt, d, payload)
		i, d = fg.putCopy(i, hdrAt, d, pad[:PadLen(n)])
		if d == 0 {
			// A marker right after the pad belongs to this FPDU
			// (RFC 5044 4.4 rule 1).
			fg.marker(uint32(i - hdrAt))
		}
	}
	fg.sumScratch()
	var crc [CRCLen]byte
	if f.crc {
		crc32c.PutWire(crc[:], fg.sum)
	}
	g.addCopy(crc[:])
	f.seq += uint32(w)
	return nil
}

// fpduGather adds one FPDU to a Gather and runs its CRC over the pieces in
// wire order: scratch[mark:] holds octets added but not yet summed.
type fpduGather struct {
	g    *Gather
	crc  bool
	sum  uint32
	mark int
}

func (x *fpduGather) copy(b []byte) { x.g.addCopy(b) }

func (x *fpduGather) marker(ptr uint32) {
	var m [MarkerLen]byte
	binary.BigEndian.PutUint32(m[:], ptr)
	x.g.addCopy(m[:])
}

// sumScratch folds the scratch octets added since the last call into the
// CRC.
func (x *fpduGather) sumScratch() {
	if x.crc {
		x.sum = crc32c.Update(x.sum, x.g.scratch[x.mark:])
	}
	x.mark = len(x.g.scratch)
}

// payload adds a span of payload: in place if it is long enough.
func (x *fpduGather) payload(p []byte) {
	if len(p) < GatherMin {
		x.g.addCopy(p)
		return
	}
	x.sumScratch()
	if x.crc {
		x.sum = crc32c.Update(x.sum, p)
	}
	x.g.addRef(p)
}

// next inserts the marker that is due, if one is, and returns how many
// octets of an n-octet piece go before the next marker, with i and d
// moved past the marker (see Framer.put).
func (x *fpduGather) next(i, hdrAt, d, n int) (k, i2, d2 int) {
	if d == 0 {
		x.marker(uint32(i - hdrAt))
		i += MarkerLen
		d = markerSpacing
	}
	return min(n, d), i, d
}

// putCopy adds src, copied, with markers where they fall.
func (x *fpduGather) putCopy(i, hdrAt, d int, src []byte) (int, int) {
	for len(src) > 0 {
		var k int
		k, i, d = x.next(i, hdrAt, d, len(src))
		x.copy(src[:k])
		i, d, src = i+k, d-k, src[k:]
	}
	return i, d
}

// putPayload adds src through payload, with markers where they fall. It
// is separate from putCopy so that the Framer's own small arrays do not
// escape to the heap through the pieces payload keeps.
func (x *fpduGather) putPayload(i, hdrAt, d int, src []byte) (int, int) {
	for len(src) > 0 {
		var k int
		k, i, d = x.next(i, hdrAt, d, len(src))
		x.payload(src[:k])
		i, d, src = i+k, d-k, src[k:]
	}
	return i, d
}
