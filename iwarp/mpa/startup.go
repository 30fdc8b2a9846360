package mpa

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The startup phase (RFC 5044 7.1): the Initiator sends an MPA Request
// Frame, the Responder answers with an MPA Reply Frame, and both then enter
// Full Operation. Both frames share one format (RFC 5044 7.1.1, Figure 8):
//
//	 0..15  Key: "MPA ID Req Frame" or "MPA ID Rep Frame"
//	16      M | C | R | Res (5 bits; RFC 6581 takes 0x10 as "Enhanced")
//	17      Rev
//	18..19  PD_Length
//	20..    Private Data (0..512 octets)
//
// With MPA revision 2 and the Enhanced flag (RFC 6581 3), the private data
// begins with 4 octets of IRD/ORD and peer-to-peer controls:
//
//	P2P | ZeroLengthSendRTR | IRD (14 bits) | WriteRTR | ReadRTR | ORD (14 bits)

// Keys of the startup frames (RFC 5044 7.1.1).
const (
	KeyRequest = "MPA ID Req Frame"
	KeyReply   = "MPA ID Rep Frame"
)

const (
	// StartupHeaderLen is the length of a startup frame without private data.
	StartupHeaderLen = 20
	// MaxPrivateData is the largest private data field RFC 5044 7.1.1 allows.
	MaxPrivateData = 512
	// EnhancedParamsLen is the length of the RFC 6581 IRD/ORD prefix.
	EnhancedParamsLen = 4
	// MaxIRD is the largest IRD or ORD the 14-bit fields carry.
	MaxIRD = 0x3fff
)

// Flag bits of octet 16 of a startup frame.
const (
	flagMarkers  = 0x80 // M: RFC 5044 7.1.1
	flagCRC      = 0x40 // C
	flagReject   = 0x20 // R
	flagEnhanced = 0x10 // RFC 6581 3: enhanced connection establishment
)

// RTR is a set of ready-to-receive message types of RFC 6581 peer-to-peer
// mode: the zero-length message the Initiator sends first so that the
// Responder, which must not send before it has received an FPDU
// (RFC 5044 7.1.3 rule 4), may start.
type RTR uint8

const (
	RTRSend  RTR = 1 << iota // zero-length Send
	RTRWrite                 // zero-length RDMA Write
	RTRRead                  // zero-length RDMA Read Request
)

func (r RTR) String() string {
	if r == 0 {
		return "none"
	}
	s := ""
	for _, n := range []struct {
		bit  RTR
		name string
	}{{RTRSend, "send"}, {RTRWrite, "write"}, {RTRRead, "read"}} {
		if r&n.bit != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
		}
	}
	return s
}

// EnhancedParams are the RFC 6581 section 3 parameters carried in the first
// four octets of the private data of a revision 2 frame with the Enhanced
// flag.
type EnhancedParams struct {
	P2P bool   // peer-to-peer mode: an RTR message opens Full Operation
	IRD uint16 // inbound RDMA Read Requests the sender can have outstanding
	ORD uint16 // outbound RDMA Read Requests the sender wants outstanding
	RTR RTR    // RTR types offered (Request) or chosen (Reply)
}

func (p EnhancedParams) append(dst []byte) []byte {
	ird := p.IRD & MaxIRD
	ord := p.ORD & MaxIRD
	if p.P2P {
		ird |= 0x8000
	}
	if p.RTR&RTRSend != 0 {
		ird |= 0x4000
	}
	if p.RTR&RTRWrite != 0 {
		ord |= 0x8000
	}
	if p.RTR&RTRRead != 0 {
		ord |= 0x4000
	}
	dst = binary.BigEndian.AppendUint16(dst, ird)
	return binary.BigEndian.AppendUint16(dst, ord)
}

func parseEnhancedParams(b []byte) EnhancedParams {
	ird := binary.BigEndian.Uint16(b)
	ord := binary.BigEndian.Uint16(b[2:])
	p := EnhancedParams{P2P: ird&0x8000 != 0, IRD: ird & MaxIRD, ORD: ord & MaxIRD}
	if ird&0x4000 != 0 {
		p.RTR |= RTRSend
	}
	if ord&0x8000 != 0 {
		p.RTR |= RTRWrite
	}
	if ord&0x4000 != 0 {
		p.RTR |= RTRRead
	}
	return p
}

// StartupFrame is an MPA Request or Reply Frame (RFC 5044 7.1.1).
type StartupFrame struct {
	Reply    bool  // key "MPA ID Rep Frame"; false for "MPA ID Req Frame"
	Markers  bool  // M: the sender requires markers on what it receives
	CRC      bool  // C: the sender prefers CRCs
	Reject   bool  // R: the Responder rejects the connection (Reply only)
	Enhanced bool  // RFC 6581 Enhanced flag; Params is then valid
	Rev      uint8 // MPA revision: 0 (RDMAC), 1 (RFC 5044), 2 (RFC 6581)
	Params   EnhancedParams
	// PrivateData is the consumer's private data; with Enhanced set it
	// excludes the 4-octet IRD/ORD prefix (which PD_Length counts).
	PrivateData []byte
}

// pdLength is the PD_Length field value of f.
func (f *StartupFrame) pdLength() int {
	n := len(f.PrivateData)
	if f.Enhanced {
		n += EnhancedParamsLen
	}
	return n
}

// Len is the length of f on the wire.
func (f *StartupFrame) Len() int { return StartupHeaderLen + f.pdLength() }

// Append appends f in wire format. It fails when the private data exceeds
// the 512 octets RFC 5044 7.1.1 allows.
func (f *StartupFrame) Append(dst []byte) ([]byte, error) {
	pd := f.pdLength()
	if pd > MaxPrivateData {
		return dst, fmt.Errorf("mpa: private data of %d octets exceeds the %d RFC 5044 7.1.1 allows", pd, MaxPrivateData)
	}
	if f.Reply {
		dst = append(dst, KeyReply...)
	} else {
		dst = append(dst, KeyRequest...)
	}
	var flags byte
	if f.Markers {
		flags |= flagMarkers
	}
	if f.CRC {
		flags |= flagCRC
	}
	if f.Reject {
		flags |= flagReject
	}
	if f.Enhanced {
		flags |= flagEnhanced
	}
	dst = append(dst, flags, f.Rev)
	dst = binary.BigEndian.AppendUint16(dst, uint16(pd))
	if f.Enhanced {
		dst = f.Params.append(dst)
	}
	return append(dst, f.PrivateData...), nil
}

// ErrIncomplete reports that a buffer holds only part of a startup frame.
var ErrIncomplete = errors.New("mpa: incomplete startup frame")

// ParseStartupFrame parses the startup frame at the start of b, accepting
// private data of up to maxPD octets (RFC 5044 7.1.3 rule 9: the receive
// buffer bounds it; maxPD <= 0 means MaxPrivateData). It returns the frame
// and the number of octets it occupied. A buffer that holds a valid prefix
// of a frame gives ErrIncomplete; anything improperly formatted gives an
// *Error with code ErrBadStartupFrame. PrivateData aliases b.
//
// Per RFC 5044 7.1.1 the R bit of a Request and the reserved bits are not
// checked; a Rev 2 frame without the Enhanced flag carries plain private
// data.
func ParseStartupFrame(b []byte, maxPD int) (StartupFrame, int, error) {
	if maxPD <= 0 || maxPD > MaxPrivateData {
		maxPD = MaxPrivateData
	}
	var f StartupFrame
	n := min(len(b), len(KeyRequest))
	switch {
	case string(b[:n]) == KeyRequest[:n]:
	case string(b[:n]) == KeyReply[:n]:
		f.Reply = true
	default:
		// RFC 5044 7.1.3 rule 5: a key mismatch closes the connection.
		return f, 0, errorf(ErrBadStartupFrame, 0, "key %q is neither %q nor %q", printable(b[:n]), KeyRequest, KeyReply)
	}
	if len(b) < StartupHeaderLen {
		return f, 0, ErrIncomplete
	}
	flags := b[16]
	f.Markers = flags&flagMarkers != 0
	f.CRC = flags&flagCRC != 0
	f.Reject = f.Reply && flags&flagReject != 0
	f.Rev = b[17]
	pd := int(binary.BigEndian.Uint16(b[18:]))
	if pd > maxPD {
		return f, 0, errorf(ErrBadStartupFrame, 0, "PD_Length %d exceeds the %d-octet private data limit", pd, maxPD)
	}
	if len(b) < StartupHeaderLen+pd {
		return f, 0, ErrIncomplete
	}
	body := b[StartupHeaderLen : StartupHeaderLen+pd]
	if f.Rev >= 2 && flags&flagEnhanced != 0 {
		if pd < EnhancedParamsLen {
			return f, 0, errorf(ErrBadStartupFrame, 0, "Enhanced flag set but PD_Length %d cannot hold the 4 IRD/ORD octets (RFC 6581 3)", pd)
		}
		f.Enhanced = true
		f.Params = parseEnhancedParams(body)
		body = body[EnhancedParamsLen:]
	}
	if len(body) > 0 {
		f.PrivateData = body
	}
	return f, StartupHeaderLen + pd, nil
}

// ReadStartupFrame reads exactly one startup frame from r: it never reads an
// octet past the frame, so that the FPDUs after it stay in r.
func ReadStartupFrame(r io.Reader, maxPD int) (StartupFrame, error) {
	var hdr [StartupHeaderLen]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// A short header may still say enough to be rejected.
			if _, _, perr := ParseStartupFrame(hdr[:n], maxPD); perr != nil && perr != ErrIncomplete {
				return StartupFrame{}, perr
			}
		}
		return StartupFrame{}, err
	}
	f, _, err := ParseStartupFrame(hdr[:], maxPD)
	if err != ErrIncomplete {
		return f, err
	}
	pd := int(binary.BigEndian.Uint16(hdr[18:]))
	buf := make([]byte, StartupHeaderLen+pd)
	copy(buf, hdr[:])
	if _, err := io.ReadFull(r, buf[StartupHeaderLen:]); err != nil {
		return StartupFrame{}, err
	}
	f, _, err = ParseStartupFrame(buf, maxPD)
	return f, err
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}
