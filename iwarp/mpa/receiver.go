package mpa

import (
	"encoding/binary"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// rxPhase is the FPDU field a Receiver is in.
type rxPhase uint8

const (
	rxHeader rxPhase = iota // marker in front of the FPDU (if any) and ULPDU_Length
	rxBody                  // ULPDU, pad and the markers among them, up to the CRC field
	rxCRC                   // the CRC field
)

// Receiver is the receive side of MPA Full Operation for an in-order TCP
// byte stream (RFC 5044 6, "MPA Receiver FPDU Identification", case 1): it
// finds each FPDU from the ULPDU_Length of the one before, strips markers,
// checks the CRC and every marker, and hands each ULPDU to its caller in
// stream order. The stream may arrive in chunks of any size, one octet
// included.
//
// Error semantics (RFC 5044 8). Every check is made when the FPDU's CRC
// field has arrived, in this order:
//
//  1. CRCs on and the CRC does not match: ErrCRC.
//  2. A marker covered by the FPDU (the one right before its ULPDU_Length
//     field, which must hold FPDUPTR 0, and every one inside it, which must
//     point back to its ULPDU_Length field) disagrees: ErrMarker. Code 3
//     applies "in the event that the CRC is valid", so a bad CRC wins.
//  3. ULPDU_Length above MaxULPDU: ErrMarker. RFC 5044 3 forbids such a
//     ULPDU and section 8 has no code of its own for it; code 3 is MPA's
//     framing error (the ULPDU_Length is not one a conforming sender
//     writes, and the longest ones would need FPDUPTR values past 16
//     bits). The Receiver does not buffer the ULPDU of such an FPDU, it
//     only runs the CRC and the marker checks over it, so a damaged
//     ULPDU_Length is reported, as ErrCRC when CRCs are on, once the
//     octets it claims (at most 65535 plus overhead) have gone by.
//
// The Error carries the sequence number of the FPDU's ULPDU_Length field.
// Once an error is found the Receiver delivers nothing more (RFC 5044 8)
// and every later Feed returns the same error.
//
// Memory: one reassembly buffer of MaxULPDU octets, allocated the first
// time a ULPDU does not arrive whole and marker-free in one chunk (nor, with
// SetGather, whole in one chunk). Feed does not allocate per FPDU.
type Receiver struct {
	markers bool
	crc     bool
	base    uint32
	seq     uint32 // sequence number of the next octet to consume
	nextMk  uint32 // sequence number of the next marker, with markers on

	phase    rxPhase
	got      int    // octets of the current field consumed
	startSeq uint32 // first octet of the current FPDU (its leading marker or ULPDU_Length)
	fpduSeq  uint32 // its ULPDU_Length field
	endSeq   uint32 // one past its CRC field, once ULPDU_Length is known
	ulen     int    // ULPDU_Length
	bodyLen  int    // ULPDU_Length plus pad
	sum      uint32 // running CRC32c of the FPDU
	hdr      [HeaderLen]byte
	crcField [CRCLen]byte
	mk       [MarkerLen]byte
	mkGot    int

	// First marker in the current FPDU that disagrees (RFC 5044 8 code
	// 3); reported only if the CRC is good.
	mkBad     bool
	mkBadSeq  uint32
	mkBadPtr  uint16
	mkBadWant uint32

	direct []byte // the ULPDU inside the caller's chunk, when it can be used in place
	buf    []byte // reassembly of the ULPDU otherwise
	err    error

	// Gathered delivery (SetGather): the pieces of a ULPDU that markers
	// cut, all inside the caller's chunk.
	gather   func(seq uint32, pieces [][]byte, n int) error
	gathered bool     // the current FPDU is being gathered
	pieces   [][]byte // its ULPDU's pieces so far
}

// SetGather makes the Receiver hand a ULPDU that markers cut into pieces,
// and that lies wholly inside one chunk given to Feed, to gather instead
// of Feed's deliver: the pieces in stream order (markers removed, each a
// part of the chunk, valid only during the call, none empty) and n, the
// ULPDU's length, their total. Every other ULPDU still goes to deliver,
// and the checks, errors and order are the same either way. It saves the
// reassembly copy for a consumer that can place pieces where they go
// (ddp.Sink.ReceiveV). A nil gather turns it off.
func (r *Receiver) SetGather(gather func(seq uint32, pieces [][]byte, n int) error) {
	r.gather = gather
}

// NewReceiver returns a Receiver for a half connection whose Full Operation
// starts at TCP sequence number base (the first FPDU, or the marker in front
// of it, starts there; markers sit at every seq with (seq - base) mod 512 ==
// 0, RFC 5044 4.3). markers and crc say whether the peer sends markers and
// whether CRCs are checked (7.1).
func NewReceiver(markers, crc bool, base uint32) *Receiver {
	r := &Receiver{markers: markers, crc: crc, base: base}
	r.resetAt(base)
	return r
}

// NewReceiverAt returns a Receiver whose marker base is base and whose
// next octet is at seq, an FPDU boundary: for a receive side handed over
// after the first FPDUs were taken by someone else (a host's software path
// took the peer's RTR before a device took the connection over).
func NewReceiverAt(markers, crc bool, base, seq uint32) *Receiver {
	r := &Receiver{markers: markers, crc: crc, base: base}
	r.resetAt(seq)
	return r
}

// resetAt puts the Receiver at an FPDU boundary at sequence number seq,
// with no error; the marker base stays.
func (r *Receiver) resetAt(seq uint32) {
	r.seq = seq
	r.nextMk = seq + uint32(markerDist(r.base, seq))
	r.err = nil
	r.mkGot = 0
	r.newFPDU()
}

// newFPDU starts the next FPDU at r.seq.
func (r *Receiver) newFPDU() {
	r.phase = rxHeader
	r.got = 0
	r.startSeq = r.seq
	r.fpduSeq = r.seq
	r.endSeq = r.seq
	r.sum = 0
	r.mkBad = false
	r.direct = nil
	r.gathered = false
	r.pieces = r.pieces[:0]
}

// Base returns the marker base: the sequence number where Full Operation
// started on this half connection.
func (r *Receiver) Base() uint32 { return r.base }

// Seq returns the sequence number of the next stream octet the Receiver
// expects.
func (r *Receiver) Seq() uint32 { return r.seq }

// Err returns the error that stopped the Receiver, or nil.
func (r *Receiver) Err() error { return r.err }

// Buffered returns the number of ULPDU octets of an unfinished FPDU that the
// Receiver holds in its reassembly buffer; never more than MaxULPDU.
func (r *Receiver) Buffered() int {
	if r.phase == rxHeader || r.direct != nil || r.ulen > MaxULPDU {
		return 0
	}
	if r.phase == rxBody {
		return min(r.got, r.ulen)
	}
	return r.ulen
}

// Feed consumes the next chunk p of the TCP byte stream. For every FPDU it
// completes and validates it calls deliver with the sequence number of the
// FPDU's ULPDU_Length field and the ULPDU (markers, pad and CRC removed);
// the slice is only valid during the call (it may point into p or into the
// Receiver's buffer). Feed returns the first MPA error as an *Error; an
// error returned by deliver stops Feed and is returned as is. Either way
// the Receiver is stopped: nothing more is delivered and later calls
// return the same error.
func (r *Receiver) Feed(p []byte, deliver func(seq uint32, ulpdu []byte) error) error {
	if r.err != nil {
		return r.err
	}
	i := 0
	cs := 0 // p[cs:i] is covered by the current FPDU's CRC and not yet summed
	for i < len(p) {
		if r.markers && (r.mkGot > 0 || r.seq == r.nextMk) {
			// RFC 5044 4.3: a marker every 512 octets of sequence
			// space, wherever it falls in the FPDU.
			k := min(MarkerLen-r.mkGot, len(p)-i)
			copy(r.mk[r.mkGot:], p[i:i+k])
			r.mkGot += k
			i += k
			r.seq += uint32(k)
			if r.mkGot == MarkerLen {
				r.checkMarker()
				r.mkGot = 0
				r.nextMk += MarkerInterval
			}
			continue
		}
		switch r.phase {
		case rxHeader:
			if r.got == 0 {
				r.fpduSeq = r.seq
			}
			k := min(HeaderLen-r.got, len(p)-i)
			copy(r.hdr[r.got:], p[i:i+k])
			r.got += k
			i += k
			r.seq += uint32(k)
			if r.got == HeaderLen {
				r.startBody(p[i:])
			}
		case rxBody:
			if r.got == r.bodyLen {
				// Pad done, and no marker due here (or it was
				// taken above): the CRC field follows. RFC 5044 4.4:
				// the CRC covers everything up to here.
				if r.crc {
					r.sum = crc32c.Update(r.sum, p[cs:i])
				}
				r.phase = rxCRC
				r.got = 0
				continue
			}
			for {
				k := min(r.bodyLen-r.got, len(p)-i)
				if r.markers {
					k = min(k, int(r.nextMk-r.seq))
				}
				if r.direct == nil && r.got < r.ulen && r.ulen <= MaxULPDU {
					if r.gathered {
						if u := min(k, r.ulen-r.got); u > 0 {
							r.pieces = append(r.pieces, p[i:i+u])
						}
					} else {
						copy(r.buf[r.got:r.ulen], p[i:i+k])
					}
				}
				r.got += k
				i += k
				r.seq += uint32(k)
				if r.crc && i-cs >= crcBatch {
					// Fold in what was just copied while it is cached.
					r.sum = crc32c.Update(r.sum, p[cs:i])
					cs = i
				}
				// With markers the body is cut every 508 octets: a
				// marker inside the body that is whole in p is
				// checked where it lies, without a round of the
				// outer loop. Any other case (a marker split
				// across chunks, one right after the pad) goes
				// round it.
				if !r.markers || r.seq != r.nextMk || r.got == r.bodyLen || len(p)-i < MarkerLen {
					break
				}
				r.checkMarkerAt(r.seq, p[i:i+MarkerLen])
				i += MarkerLen
				r.seq += MarkerLen
				r.nextMk += MarkerInterval
			}
		case rxCRC:
			k := min(CRCLen-r.got, len(p)-i)
			copy(r.crcField[r.got:], p[i:i+k])
			r.got += k
			i += k
			r.seq += uint32(k)
			if r.got == CRCLen {
				if err := r.finish(deliver); err != nil {
					return err
				}
				cs = i
			}
		}
	}
	if r.crc && r.phase != rxCRC {
		r.sum = crc32c.Update(r.sum, p[cs:i])
	}
	return nil
}

// startBody reads ULPDU_Length (RFC 5044 4.1) and sets up the rest of the
// FPDU; rest is what follows the field in the current chunk.
func (r *Receiver) startBody(rest []byte) {
	r.ulen = int(binary.BigEndian.Uint16(r.hdr[:]))
	r.bodyLen = r.ulen + PadLen(r.ulen)
	r.phase = rxBody
	r.got = 0
	r.endSeq = r.fpduSeq + uint32(fpduTail(r.markers, r.base, r.fpduSeq, r.ulen))
	if r.ulen > MaxULPDU {
		return // never buffered; see the Receiver's error semantics
	}
	// Zero copy when the whole FPDU is in this chunk and no marker
	// splits the ULPDU (one right after the pad is fine).
	if int(r.endSeq-r.seq) <= len(rest) && (!r.markers || int(r.nextMk-r.seq) >= r.ulen) {
		r.direct = rest[:r.ulen]
		return
	}
	// Whole in the chunk but cut by markers: its pieces, if wanted.
	if r.gather != nil && int(r.endSeq-r.seq) <= len(rest) {
		r.gathered = true
		return
	}
	if r.buf == nil {
		r.buf = make([]byte, MaxULPDU)
	}
}

// checkMarker checks the marker just read against the FPDU it belongs to
// (RFC 5044 4.2, 4.3): RESERVED is ignored, the low two bits of FPDUPTR are
// taken as zero; a marker in front of the ULPDU_Length field must be 0,
// any other must point back to the ULPDU_Length field.
func (r *Receiver) checkMarker() { r.checkMarkerAt(r.seq-MarkerLen, r.mk[:]) }

// checkMarkerAt checks the marker m that starts at sequence number at, as
// checkMarker does.
func (r *Receiver) checkMarkerAt(at uint32, m []byte) {
	ptr := binary.BigEndian.Uint16(m[2:])
	var want uint32
	if r.phase != rxHeader || r.got != 0 {
		want = at - r.fpduSeq
	}
	if uint32(ptr&^3) != want && !r.mkBad {
		r.mkBad, r.mkBadSeq, r.mkBadPtr, r.mkBadWant = true, at, ptr, want
	}
}

// finish validates the FPDU whose CRC field was just read and delivers it.
func (r *Receiver) finish(deliver func(uint32, []byte) error) error {
	switch {
	case r.crc && r.sum != crc32c.Wire(r.crcField[:]):
		r.err = errorf(ErrCRC, r.fpduSeq, "FPDU at seq %#x (ULPDU_Length %d): CRC field %#08x, computed %#08x",
			r.fpduSeq, r.ulen, crc32c.Wire(r.crcField[:]), r.sum)
	case r.mkBad:
		r.err = errorf(ErrMarker, r.fpduSeq, "marker at seq %#x has FPDUPTR %#04x, FPDU at seq %#x needs %#x",
			r.mkBadSeq, r.mkBadPtr, r.fpduSeq, r.mkBadWant)
	case r.ulen > MaxULPDU:
		r.err = errorf(ErrMarker, r.fpduSeq, "FPDU at seq %#x: ULPDU_Length %d exceeds %d",
			r.fpduSeq, r.ulen, MaxULPDU)
	}
	if r.err != nil {
		return r.err
	}
	seq, u := r.fpduSeq, r.direct
	if r.gathered {
		pieces, n := r.pieces, r.ulen
		r.newFPDU()
		if err := r.gather(seq, pieces, n); err != nil {
			r.err = err
			return err
		}
		return nil
	}
	if u == nil {
		u = r.buf[:r.ulen]
	}
	r.newFPDU()
	if err := deliver(seq, u); err != nil {
		r.err = err
		return err
	}
	return nil
}
