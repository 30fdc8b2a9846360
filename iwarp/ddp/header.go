package ddp

import (
	"encoding/binary"
	"fmt"
)

// Header is a DDP header, tagged (RFC 5041 4.2) or untagged (4.3).
//
// Which fields are on the wire depends on Tagged: a tagged header carries
// ULPCtrl, STag and TO; an untagged one carries ULPCtrl, ULPInfo, QN, MSN
// and MO. Fields of the other model are ignored by Append and left zero by
// ParseHeader.
type Header struct {
	Tagged bool  // T: tagged buffer model
	Last   bool  // L: last segment of a DDP Message
	Rsvd   uint8 // the 4 reserved bits of the control field; zero on transmit, not checked on receive (4.1), kept so Append(ParseHeader(b)) == b
	DV     uint8 // DDP version, 2 bits; Version on every valid segment

	ULPCtrl uint8  // RsvdULP (tagged) or RsvdULP[0:7] (untagged): RDMAP's control byte
	ULPInfo uint32 // untagged RsvdULP[8:39]: RDMAP's Invalidate STag

	STag uint32 // tagged: Steering Tag of the Data Sink's buffer
	TO   uint64 // tagged: Tagged Offset of the first payload octet

	QN  uint32 // untagged: Queue Number
	MSN uint32 // untagged: Message Sequence Number
	MO  uint32 // untagged: Message Offset of the first payload octet
}

// Len is the length of the header on the wire: TaggedHeaderLen or
// UntaggedHeaderLen.
func (h Header) Len() int {
	if h.Tagged {
		return TaggedHeaderLen
	}
	return UntaggedHeaderLen
}

// control returns the DDP Control Field octet (4.1).
func (h Header) control() byte {
	c := h.DV&ctrlDV | (h.Rsvd<<2)&ctrlRsvd
	if h.Tagged {
		c |= ctrlTagged
	}
	if h.Last {
		c |= ctrlLast
	}
	return c
}

// Append appends the header's wire form to dst: big-endian fields in the
// order of figures 4 and 5. Rsvd and DV are truncated to their 4 and 2
// bits.
func (h Header) Append(dst []byte) []byte {
	if h.Tagged {
		dst = append(dst, h.control(), h.ULPCtrl)
		dst = binary.BigEndian.AppendUint32(dst, h.STag)
		return binary.BigEndian.AppendUint64(dst, h.TO)
	}
	dst = append(dst, h.control(), h.ULPCtrl)
	dst = binary.BigEndian.AppendUint32(dst, h.ULPInfo)
	dst = binary.BigEndian.AppendUint32(dst, h.QN)
	dst = binary.BigEndian.AppendUint32(dst, h.MSN)
	return binary.BigEndian.AppendUint32(dst, h.MO)
}

// ShortHeaderError reports input too short for the DDP header its control
// field announces. DDP's error numbers (7.2) have no entry for it: with
// MPA it means an FPDU whose ULPDU_Length is less than 14 or 18, a
// malformed DDP header that is fatal to the stream (6.2.2).
type ShortHeaderError struct {
	Tagged bool // the T bit, when there was a control octet to read it from
	Have   int  // octets available: the whole segment
	Need   int  // header length (TaggedHeaderLen when even the control octet is missing)
}

func (e *ShortHeaderError) Error() string {
	if e.Have == 0 {
		return "ddp: empty segment, no DDP header"
	}
	model := "untagged"
	if e.Tagged {
		model = "tagged"
	}
	return fmt.Sprintf("ddp: %d-octet segment is shorter than the %d-octet %s DDP header", e.Have, e.Need, model)
}

// ParseHeader parses the DDP header at the start of a DDP Segment and
// returns it with the ULP payload that follows (a sub-slice of b). The
// only error is *ShortHeaderError; field values, DV included, are checked
// by the Data Sink (Sink) where the spec puts those checks (7.1).
func ParseHeader(b []byte) (h Header, payload []byte, err error) {
	if len(b) == 0 {
		return Header{}, nil, &ShortHeaderError{Need: TaggedHeaderLen}
	}
	c := b[0]
	h.Tagged = c&ctrlTagged != 0
	h.Last = c&ctrlLast != 0
	h.Rsvd = (c & ctrlRsvd) >> 2
	h.DV = c & ctrlDV
	if h.Tagged {
		if len(b) < TaggedHeaderLen {
			return Header{}, nil, &ShortHeaderError{Tagged: true, Have: len(b), Need: TaggedHeaderLen}
		}
		h.ULPCtrl = b[1]
		h.STag = binary.BigEndian.Uint32(b[2:6])
		h.TO = binary.BigEndian.Uint64(b[6:14])
		return h, b[TaggedHeaderLen:], nil
	}
	if len(b) < UntaggedHeaderLen {
		return Header{}, nil, &ShortHeaderError{Have: len(b), Need: UntaggedHeaderLen}
	}
	h.ULPCtrl = b[1]
	h.ULPInfo = binary.BigEndian.Uint32(b[2:6])
	h.QN = binary.BigEndian.Uint32(b[6:10])
	h.MSN = binary.BigEndian.Uint32(b[10:14])
	h.MO = binary.BigEndian.Uint32(b[14:18])
	return h, b[UntaggedHeaderLen:], nil
}

// String formats the header for logs and test failures.
func (h Header) String() string {
	l := 0
	if h.Last {
		l = 1
	}
	if h.Tagged {
		return fmt.Sprintf("DDP tagged L=%d DV=%d ULP=%#02x STag=%#08x TO=%#x", l, h.DV, h.ULPCtrl, h.STag, h.TO)
	}
	return fmt.Sprintf("DDP untagged L=%d DV=%d ULP=%#02x/%#08x QN=%d MSN=%d MO=%d", l, h.DV, h.ULPCtrl, h.ULPInfo, h.QN, h.MSN, h.MO)
}
