package mpa

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// ErrULPDUTooLong is returned (wrapped) by Framer.AppendFPDU for a ULPDU
// longer than MaxULPDU: RFC 5044 3 forbids DDP to post one, and with
// markers on its FPDUPTR values would no longer fit in 16 bits (4.2).
var ErrULPDUTooLong = errors.New("mpa: ULPDU longer than 64768 octets")

// markerSpacing is the number of FPDU octets (header, ULPDU, pad) between
// two markers: a marker every 512 octets of sequence space, 4 of them the
// marker itself (RFC 5044 4.3).
const markerSpacing = MarkerInterval - MarkerLen

// markerDist returns the number of octets from seq to the next marker
// position at or after seq, given the marker base (RFC 5044 4.3: markers
// start at the sequence numbers s with (s - base) mod 512 == 0). The
// arithmetic is modulo 2^32, a multiple of 512, so it survives sequence
// number wrap.
func markerDist(base, seq uint32) int { return int((base - seq) & (MarkerInterval - 1)) }

// isMarkerSeq reports whether a marker starts at seq.
func isMarkerSeq(base, seq uint32) bool { return (seq-base)&(MarkerInterval-1) == 0 }

// markerCount returns how many markers a run of c FPDU octets (header,
// ULPDU, pad) holds when the run starts d octets before a marker position:
// markers sit before content octets d, d+508, d+1016, ... and one that
// falls right after the last content octet (before the CRC) counts too.
// With d == 0 the first one is the marker right before the ULPDU_Length
// field (RFC 5044 4.3, the FPDUPTR 0 case).
func markerCount(d, c int) int {
	if d > c {
		return 0
	}
	return 1 + (c-d)/markerSpacing
}

// fpduTail returns the number of octets from the ULPDU_Length field of an
// FPDU that starts at seq with a ULPDU of n octets through the last octet of
// its CRC, markers inside included (a marker before the ULPDU_Length field
// is not counted: it never sits at seq itself when seq holds a header).
func fpduTail(markers bool, base, seq uint32, n int) int {
	c := HeaderLen + n + PadLen(n)
	if markers {
		c += MarkerLen * markerCount(markerDist(base, seq), c)
	}
	return c + CRCLen
}

// Framer is the transmit side of MPA Full Operation on one half connection
// (RFC 5044 4): it turns ULPDUs into FPDUs (ULPDU_Length, ULPDU, pad, CRC)
// and inserts markers every 512 octets of TCP sequence space when markers
// are on. It remembers the TCP sequence number of the next octet it emits,
// which is all the state that marker placement needs.
//
// A Framer never allocates when dst has room for WireLen octets.
type Framer struct {
	markers bool
	crc     bool
	base    uint32
	seq     uint32
}

// NewFramer returns a Framer for a half connection whose Full Operation
// starts at TCP sequence number base: the first octet of the first FPDU (or
// of the marker in front of it, with markers on) is sent at base, and
// markers sit at every seq with (seq - base) mod 512 == 0 (RFC 5044 4.3).
// With crc false the CRC field is sent as zeros (RFC 5044 4.1 allows any
// value).
func NewFramer(markers, crc bool, base uint32) *Framer {
	return &Framer{markers: markers, crc: crc, base: base, seq: base}
}

// NewFramerAt returns a Framer whose marker base is base (where Full
// Operation started, RFC 5044 4.3) and whose next octet goes out at seq:
// for a transmit side handed over after the first FPDUs were sent by
// someone else (a host's software path sent the RTR, and a device frames
// from there on). seq must be an FPDU boundary.
func NewFramerAt(markers, crc bool, base, seq uint32) *Framer {
	return &Framer{markers: markers, crc: crc, base: base, seq: seq}
}

// Seq returns the TCP sequence number of the next octet the Framer emits.
func (f *Framer) Seq() uint32 { return f.seq }

// Base returns the marker base: the sequence number where Full Operation
// started on this half connection.
func (f *Framer) Base() uint32 { return f.base }

// WireLen returns how many octets the next FPDU would occupy on the wire
// for a ULPDU of ulpduLen octets, markers included, at the Framer's current
// position. It returns 0 for a length outside 0..MaxULPDU.
func (f *Framer) WireLen(ulpduLen int) int {
	if ulpduLen < 0 || ulpduLen > MaxULPDU {
		return 0
	}
	if !f.markers {
		return HeaderLen + ulpduLen + PadLen(ulpduLen) + CRCLen
	}
	// Counting from f.seq with d == 0 includes the marker in front of
	// the ULPDU_Length field, which belongs to this FPDU (RFC 5044 4.3).
	c := HeaderLen + ulpduLen + PadLen(ulpduLen)
	return c + MarkerLen*markerCount(markerDist(f.base, f.seq), c) + CRCLen
}

// AppendFPDU appends the FPDU for the ULPDU hdr||payload to dst and returns
// the extended slice. The ULPDU comes in two pieces so that a DDP header and
// its data need not be copied together first. The FPDU is (RFC 5044 4.1)
// ULPDU_Length (big-endian), the ULPDU, zero pad to a multiple of four, and
// the CRC32c (least significant octet first), with markers at their
// sequence numbers (4.3): a marker right before the ULPDU_Length field has
// FPDUPTR 0 and belongs to this FPDU; every other marker inside the FPDU,
// including one right after the pad, carries the distance from the
// ULPDU_Length field to the marker. The CRC covers everything from the
// first octet (marker or ULPDU_Length) through the pad and any marker after
// it (4.4). With CRCs off the CRC field is zero.
//
// A ULPDU longer than MaxULPDU is refused with an error wrapping
// ErrULPDUTooLong; dst is then returned unchanged and the Framer does not
// move.
func (f *Framer) AppendFPDU(dst []byte, hdr, payload []byte) ([]byte, error) {
	n := len(hdr) + len(payload)
	if n > MaxULPDU {
		return dst, fmt.Errorf("%w: %d octets", ErrULPDUTooLong, n)
	}
	w := f.WireLen(n)
	start := len(dst)
	dst = slices.Grow(dst, w)[:start+w]
	out := dst[start:]

	var lenField [HeaderLen]byte
	binary.BigEndian.PutUint16(lenField[:], uint16(n))
	var pad [3]byte

	if !f.markers {
		i := copy(out, lenField[:])
		i += copy(out[i:], hdr)
		i += copy(out[i:], payload)
		i += copy(out[i:], pad[:PadLen(n)])
		f.putCRC(out, i)
		f.seq += uint32(w)
		return dst, nil
	}

	// d counts the FPDU octets still to emit before the next marker.
	d := markerDist(f.base, f.seq)
	i, hdrAt := 0, 0
	if d == 0 {
		// RFC 5044 4.3: the marker falls between FPDUs, so it has
		// FPDUPTR 0 and is part of (and CRC'd with) this FPDU.
		binary.BigEndian.PutUint32(out, 0)
		i, hdrAt, d = MarkerLen, MarkerLen, markerSpacing
	}
	var sum uint32
	cs := 0
	i, d, cs, sum = f.put(out, i, hdrAt, d, cs, sum, lenField[:])
	i, d, cs, sum = f.put(out, i, hdrAt, d, cs, sum, hdr)
	i, d, cs, sum = f.put(out, i, hdrAt, d, cs, sum, payload)
	i, d, cs, sum = f.put(out, i, hdrAt, d, cs, sum, pad[:PadLen(n)])
	if d == 0 {
		// A marker right after the pad is inside this FPDU and covered
		// by its CRC (RFC 5044 4.4 rule 1).
		binary.BigEndian.PutUint32(out[i:], uint32(i-hdrAt))
		i += MarkerLen
	}
	if f.crc {
		crc32c.PutWire(out[i:], crc32c.Update(sum, out[cs:i]))
	} else {
		binary.LittleEndian.PutUint32(out[i:], 0)
	}
	f.seq += uint32(w)
	return dst, nil
}

// crcBatch is how many freshly written octets the Framer lets pile up
// before it folds them into the CRC: large enough for the CPU's CRC32
// instruction to run at full speed on big blocks, small enough for them to
// still be in the L1 cache.
const crcBatch = 8 << 10

// put copies src to out[i:], inserting a marker whenever d (the octets
// left before the next marker) reaches zero before another octet of src.
// FPDUPTR is the distance from the ULPDU_Length field at out[hdrAt] (RFC
// 5044 4.2); it fits in 16 bits because the ULPDU is at most MaxULPDU
// octets. out[cs:i] is written but not yet in sum: every crcBatch octets it
// is folded in, while it is still in the cache.
func (f *Framer) put(out []byte, i, hdrAt, d, cs int, sum uint32, src []byte) (int, int, int, uint32) {
	for len(src) > 0 {
		if d == 0 {
			binary.BigEndian.PutUint32(out[i:], uint32(i-hdrAt))
			i += MarkerLen
			d = markerSpacing
		}
		k := min(len(src), d)
		copy(out[i:], src[:k])
		i += k
		d -= k
		src = src[k:]
		if f.crc && i-cs >= crcBatch {
			sum = crc32c.Update(sum, out[cs:i])
			cs = i
		}
	}
	return i, d, cs, sum
}

// putCRC writes the CRC field at out[i:] for an FPDU without markers.
func (f *Framer) putCRC(out []byte, i int) {
	if f.crc {
		crc32c.PutWire(out[i:], crc32c.Checksum(out[:i]))
	} else {
		binary.LittleEndian.PutUint32(out[i:], 0)
	}
}
