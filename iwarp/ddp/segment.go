package ddp

import (
	"fmt"
	"iter"
	"math"
)

// Segmenter splits one ULP Message into DDP Segments (RFC 5041 5.2). It
// hands out each segment as a header and a sub-slice of the message, so
// the LLP can gather header and payload into its frame without a copy and
// the segmenter itself never allocates:
//
//	s, err := ddp.NewSegmenter(h, msg, mulpdu)
//	for {
//		h, payload, ok := s.Next()
//		if !ok {
//			break
//		}
//		frame = h.Append(frame[:0])
//		frame = append(frame, payload...)
//	}
//
// Every segment but the last carries MaxPayload(mulpdu, tagged) octets;
// TO (tagged) or MO (untagged) advances by the payload already sent; the
// last segment, and only it, has L=1 (4.1); a zero-length message is
// exactly one segment with L=1 and no payload (5.2).
type Segmenter struct {
	h    Header
	msg  []byte
	off  int
	max  int
	done bool
}

// NewSegmenter prepares the segmentation of msg. h is the header of the
// message's first octet: for a tagged message its STag and initial TO,
// for an untagged one its QN, MSN and MO (zero for a whole message), plus
// the ULP's RsvdULP fields; its L bit is ignored. mulpdu is the LLP's
// MULPDU: no segment, header included, is longer (5.2).
//
// It fails if mulpdu has no room for payload after the header, if the
// message is 2^32 octets or longer (5.2), or if the message's TO range
// would wrap the 64-bit TO space (TO + length must fit in 64 bits, as the
// Data Sink checks) or its MO range the 32-bit MO space.
func NewSegmenter(h Header, msg []byte, mulpdu int) (Segmenter, error) {
	max := MaxPayload(mulpdu, h.Tagged)
	if max <= 0 {
		return Segmenter{}, fmt.Errorf("ddp: MULPDU %d leaves no room for payload after the %d-octet header", mulpdu, h.Len())
	}
	n := uint64(len(msg))
	if n > MaxMessageLen {
		return Segmenter{}, fmt.Errorf("ddp: ULP Message of %d octets is not less than 2^32 (RFC 5041 5.2)", n)
	}
	if h.Tagged {
		if h.TO > math.MaxUint64-n {
			return Segmenter{}, fmt.Errorf("ddp: %d octets at TO %#x wrap the 64-bit TO", n, h.TO)
		}
	} else if uint64(h.MO)+n > MaxMessageLen {
		return Segmenter{}, fmt.Errorf("ddp: %d octets at MO %d exceed the 32-bit message length", n, h.MO)
	}
	h.Last = false
	return Segmenter{h: h, msg: msg, max: max}, nil
}

// Next returns the next segment's header and payload, or ok == false once
// the last segment has been returned.
func (s *Segmenter) Next() (h Header, payload []byte, ok bool) {
	if s.done {
		return Header{}, nil, false
	}
	n := len(s.msg) - s.off
	if n > s.max {
		n = s.max
	}
	h = s.h
	if h.Tagged {
		h.TO += uint64(s.off)
	} else {
		h.MO += uint32(s.off)
	}
	payload = s.msg[s.off : s.off+n : s.off+n]
	s.off += n
	if s.off == len(s.msg) {
		h.Last = true
		s.done = true
	}
	return h, payload, true
}

// Count is the total number of segments of the message: at least one.
func (s *Segmenter) Count() int {
	if len(s.msg) == 0 {
		return 1
	}
	return (len(s.msg) + s.max - 1) / s.max
}

// All returns an iterator over the remaining segments, for use with range.
func (s *Segmenter) All() iter.Seq2[Header, []byte] {
	return func(yield func(Header, []byte) bool) {
		for {
			h, p, ok := s.Next()
			if !ok || !yield(h, p) {
				return
			}
		}
	}
}

// AppendSegment appends one segment's wire form, header then payload.
func AppendSegment(dst []byte, h Header, payload []byte) []byte {
	return append(h.Append(dst), payload...)
}
