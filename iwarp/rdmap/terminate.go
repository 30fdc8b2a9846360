package rdmap

import (
	"encoding/binary"
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// TerminateControlLen is the length of the Terminate Control field.
const TerminateControlLen = 4

// Bits of the Terminate Control field (RFC 5040 4.8): Layer (4) | EType
// (4) | Error Code (8) | M | D | R | reserved (13).
const (
	termM = 1 << 15 // the DDP Segment Length field is present
	termD = 1 << 14 // the offending DDP header is present
	termR = 1 << 13 // the offending RDMAP (Read Request) header is present
)

// MaxTerminateLen is the longest Terminate payload: control, segment
// length, untagged DDP header and Read Request header.
const MaxTerminateLen = TerminateControlLen + 2 + ddp.UntaggedHeaderLen + ReadRequestLen

// Terminate is the payload of a Terminate message (RFC 5040 4.8):
//
//	Terminate Control   4 octets  Layer | EType | Error Code | M | D | R | reserved
//	DDP Segment Length  2 octets  only if M: the offending segment's length (with MPA, its ULPDU_Length)
//	Terminated DDP Hdr 14/18 oct. only if D: the offending DDP header, its length given by its T bit
//	Terminated RDMA Hdr 28 octets only if R: the offending Read Request header
type Terminate struct {
	Layer Layer
	EType uint8
	Code  uint8

	M, D, R bool

	SegmentLen uint16 // with M
	DDPHeader  []byte // with D: 14 octets if its first octet has T=1, else 18
	RDMAHeader []byte // with R: ReadRequestLen octets

	// SwappedBitfields reports a Terminate Control that arrived with its
	// bit fields in little-endian C bitfield order (see
	// ParsePeerTerminate); the fields above hold what the peer meant.
	SwappedBitfields bool
}

// ddpHeaderLen is the length of a DDP header whose control octet is c.
func ddpHeaderLen(c byte) int {
	if c&0x80 != 0 {
		return ddp.TaggedHeaderLen
	}
	return ddp.UntaggedHeaderLen
}

// Len is the length of the Terminate payload on the wire.
func (t *Terminate) Len() int {
	n := TerminateControlLen
	if t.M {
		n += 2
	}
	if t.D {
		n += len(t.DDPHeader)
	}
	if t.R {
		n += len(t.RDMAHeader)
	}
	return n
}

// check reports fields that cannot be put on the wire as they are, or
// that contradict each other.
func (t *Terminate) check() error {
	bad := func(format string, args ...any) error {
		return &FormatError{Msg: "Terminate", Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case t.Layer > LayerLLP:
		return bad("layer %d", t.Layer)
	case t.EType > 0xf:
		return bad("EType %#x does not fit 4 bits", t.EType)
	case t.D != (len(t.DDPHeader) > 0):
		return bad("D=%v with a %d-octet DDP header", t.D, len(t.DDPHeader))
	case t.D && len(t.DDPHeader) != ddpHeaderLen(t.DDPHeader[0]):
		return bad("%d-octet DDP header whose T bit says %d", len(t.DDPHeader), ddpHeaderLen(t.DDPHeader[0]))
	case t.R != (len(t.RDMAHeader) > 0):
		return bad("R=%v with a %d-octet RDMAP header", t.R, len(t.RDMAHeader))
	case t.R && len(t.RDMAHeader) != ReadRequestLen:
		return bad("%d-octet RDMAP header, a Read Request header has %d", len(t.RDMAHeader), ReadRequestLen)
	case t.R && t.D && !isReadRequestHeader(t.DDPHeader):
		return bad("R set but the DDP header is not that of a Read Request")
	}
	return nil
}

// isReadRequestHeader reports whether a DDP header is untagged and carries
// the Read Request opcode: the only message whose RDMAP header a
// Terminate includes.
func isReadRequestHeader(h []byte) bool {
	_, op := ParseControl(h[1])
	return h[0]&0x80 == 0 && op == OpReadRequest
}

// Append appends the Terminate payload to dst. It fails, appending
// nothing, if the flags and the header fields disagree (D without a
// 14/18-octet header matching its T bit, R without a 28-octet header, R
// with a DDP header that is not a Read Request's) or a field overflows.
func (t *Terminate) Append(dst []byte) ([]byte, error) {
	if err := t.check(); err != nil {
		return dst, err
	}
	ctrl := uint32(t.Layer)<<28 | uint32(t.EType)<<24 | uint32(t.Code)<<16
	if t.M {
		ctrl |= termM
	}
	if t.D {
		ctrl |= termD
	}
	if t.R {
		ctrl |= termR
	}
	dst = binary.BigEndian.AppendUint32(dst, ctrl)
	if t.M {
		dst = binary.BigEndian.AppendUint16(dst, t.SegmentLen)
	}
	dst = append(dst, t.DDPHeader...)
	return append(dst, t.RDMAHeader...), nil
}

// ParseTerminate parses the payload of a Terminate message. The returned
// headers are sub-slices of b. It fails on input too short for what the
// flags announce, on octets after the last announced field, on a layer
// other than RDMAP, DDP or LLP, and on R with a DDP header that is not a
// Read Request's. The 13 reserved bits are not checked.
func ParseTerminate(b []byte) (Terminate, error) {
	bad := func(format string, args ...any) (Terminate, error) {
		return Terminate{}, &FormatError{Msg: "Terminate", Detail: fmt.Sprintf(format, args...)}
	}
	if len(b) < TerminateControlLen {
		return bad("%d octets, the Terminate Control alone has %d", len(b), TerminateControlLen)
	}
	ctrl := binary.BigEndian.Uint32(b)
	t := Terminate{
		Layer: Layer(ctrl >> 28),
		EType: uint8(ctrl>>24) & 0xf,
		Code:  uint8(ctrl >> 16),
		M:     ctrl&termM != 0,
		D:     ctrl&termD != 0,
		R:     ctrl&termR != 0,
	}
	rest := b[TerminateControlLen:]
	if t.M {
		if len(rest) < 2 {
			return bad("M set but no DDP Segment Length")
		}
		t.SegmentLen = binary.BigEndian.Uint16(rest)
		rest = rest[2:]
	}
	if t.D {
		if len(rest) == 0 {
			return bad("D set but no DDP header")
		}
		n := ddpHeaderLen(rest[0])
		if len(rest) < n {
			return bad("D set but only %d of the %d octets of the DDP header", len(rest), n)
		}
		t.DDPHeader, rest = rest[:n:n], rest[n:]
	}
	if t.R {
		if len(rest) < ReadRequestLen {
			return bad("R set but only %d of the %d octets of the Read Request header", len(rest), ReadRequestLen)
		}
		t.RDMAHeader, rest = rest[:ReadRequestLen:ReadRequestLen], rest[ReadRequestLen:]
	}
	if len(rest) != 0 {
		return bad("%d octets after the last field the flags announce", len(rest))
	}
	if err := t.check(); err != nil {
		return Terminate{}, err
	}
	return t, nil
}

// ParsePeerTerminate parses a Terminate received from a peer. It is
// ParseTerminate, except that a payload ParseTerminate refuses is tried
// once more with the Terminate Control read the way Linux siw writes it on
// little-endian hosts, where the control word is a C bitfield laid out from
// the least significant bit: Layer in the low nibble of octet 0 and EType in
// its high nibble, M, D and R in bits 0, 1 and 2 of octet 2 (RFC 5040 4.8
// puts Layer first, and M, D, R in the top bits of octet 2). A Terminate
// that parses in that reading is returned with SwappedBitfields set;
// docs/interop.md shows the capture. A siw Terminate without M, D and R
// cannot be told apart from a conforming one and is read as RFC 5040 says.
func ParsePeerTerminate(b []byte) (Terminate, error) {
	t, err := ParseTerminate(b)
	if err == nil || len(b) < TerminateControlLen {
		return t, err
	}
	fixed := append([]byte(nil), b...)
	fixed[0] = b[0]<<4 | b[0]>>4
	fixed[2] = (b[2]&1)<<7 | (b[2]&2)<<5 | (b[2]&4)<<3
	if st, serr := ParseTerminate(fixed); serr == nil && (st.M || st.D || st.R) {
		st.SwappedBitfields = true
		return st, nil
	}
	return t, err
}

// Err returns the error the Terminate reports, with its headers.
func (t *Terminate) Err() *Error {
	e := &Error{Layer: t.Layer, Type: t.EType, Code: t.Code, DDPHeader: t.DDPHeader, RDMAHeader: t.RDMAHeader}
	if t.M {
		e.SegmentLen = int(t.SegmentLen)
	}
	return e
}

// Error makes a Terminate the error of the stream it ended: a queue pair
// that received one reports it, and errors.As finds it.
func (t *Terminate) Error() string { return "rdmap: the peer terminated the stream: " + t.String() }

// String formats the Terminate for logs.
func (t *Terminate) String() string {
	s := fmt.Sprintf("Terminate %s layer %d type %d code %#02x: %s", t.Layer, t.Layer, t.EType, t.Code, ErrorName(t.Layer, t.EType, t.Code))
	if t.M {
		s += fmt.Sprintf(", segment length %d", t.SegmentLen)
	}
	if t.D {
		s += fmt.Sprintf(", DDP header % x", t.DDPHeader)
	}
	if t.R {
		s += fmt.Sprintf(", RDMAP header % x", t.RDMAHeader)
	}
	if t.SwappedBitfields {
		s += " (its Terminate Control had Layer/EType and M/D/R in little-endian bitfield order, as Linux siw sends it)"
	}
	return s
}
