package tuf

import "fmt"

// Reason says what a receive datapath's segment seam does with a segment
// of a connection in TUF mode: hand its ULPDUs on as contained (Taken), or
// pass the whole segment to the exception path (the host) for one of the
// other reasons. The numbers are the exception reasons of the hardware
// (hw/rtl/tuf_rx.v; 1 to 5 as mpa_rx's).
type Reason uint8

const (
	Taken        Reason = 0 // in order and contained: the ULPDUs go to DDP placement
	NotEnabled   Reason = 1 // the connection is not in TUF mode
	InError      Reason = 2 // the connection is in error (a bad trailer, or failed)
	OutOfOrder   Reason = 3 // starts after the next expected octet (a hole before it)
	Duplicate    Reason = 4 // ends at or before the next expected octet
	Empty        Reason = 5 // no payload
	NotContained Reason = 6 // covers the next expected octet but is not one whole FPDU, with the key, starting there
)

func (r Reason) String() string {
	switch r {
	case Taken:
		return "taken"
	case NotEnabled:
		return "not enabled"
	case InError:
		return "in error"
	case OutOfOrder:
		return "out of order"
	case Duplicate:
		return "duplicate"
	case Empty:
		return "empty"
	case NotContained:
		return "not contained"
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// Seam is one connection as the hardware's TUF receive block sees it at
// the segment seam, and the model the block is checked against: the
// containment test (4.4) applied to each segment at the connection's next
// expected sequence number. A segment that passes is taken whole (its
// ULPDUs go on to placement, with the trailer's verdict) and moves the
// next expected sequence number past it; anything else goes to the
// exception path unchanged, and the host, which sees the stream, delineates
// it (Receiver) and may offer the FPDUs it finds back one a segment, which
// then pass. A bad trailer puts the connection in error. An out-of-order
// segment that is one whole FPDU with the key and a good trailer is
// marked Early: its ULPDUs may be placed before the hole closes (the
// draft's out-of-order placement, 3.2.4).
type Seam struct {
	Enabled bool
	Key     Key
	Next    uint32 // next expected sequence number
	Failed  bool
}

// Outcome is what the seam does with one segment.
type Outcome struct {
	Reason  Reason
	ULPDUs  []byte // Taken or Early: the framed ULPDUs (a part of the segment)
	CRCGood bool   // Taken: the trailer matched
	// Early: an out-of-order segment that is one whole FPDU with the key
	// and a good trailer. It still goes to the exception path (the host
	// gives it back in order later); its ULPDUs may be placed early
	// (draft 3.2.4), never delivered from here.
	Early bool
}

// Take classifies the segment seg at sequence number seq, in the order the
// hardware does: not enabled, in error, empty, out of order, duplicate,
// then the containment test (sequence arithmetic modulo 2^32).
func (s *Seam) Take(seq uint32, seg []byte) Outcome {
	switch {
	case !s.Enabled:
		return Outcome{Reason: NotEnabled}
	case s.Failed:
		return Outcome{Reason: InError}
	case len(seg) == 0:
		return Outcome{Reason: Empty}
	case int32(seq-s.Next) > 0:
		if u, ok := Contains(seg, s.Key); ok && CRCGood(seg) {
			return Outcome{Reason: OutOfOrder, ULPDUs: u, Early: true}
		}
		return Outcome{Reason: OutOfOrder}
	case int32(seq+uint32(len(seg))-s.Next) <= 0:
		return Outcome{Reason: Duplicate}
	}
	u, ok := Contains(seg, s.Key)
	if seq != s.Next || !ok {
		return Outcome{Reason: NotContained}
	}
	s.Next += uint32(len(seg))
	good := CRCGood(seg)
	if !good {
		s.Failed = true
	}
	return Outcome{Reason: Taken, ULPDUs: u, CRCGood: good}
}
