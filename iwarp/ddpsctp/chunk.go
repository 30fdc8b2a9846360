package ddpsctp

import (
	"encoding/binary"
	"fmt"
)

// FunctionCode is a DDP Stream Session Control message's function (5.2.3).
type FunctionCode uint16

const (
	FuncInitiate  FunctionCode = 0x001
	FuncAccept    FunctionCode = 0x002
	FuncReject    FunctionCode = 0x003
	FuncTerminate FunctionCode = 0x004
)

func (f FunctionCode) String() string {
	switch f {
	case FuncInitiate:
		return "Initiate"
	case FuncAccept:
		return "Accept"
	case FuncReject:
		return "Reject"
	case FuncTerminate:
		return "Terminate"
	}
	return fmt.Sprintf("function code %#03x", uint16(f))
}

// Payload is the payload of one DATA chunk of the adaptation layer: a DDP
// Segment Chunk (PPID 0x10) or a Session Control message (PPID 0x11).
type Payload struct {
	PPID uint32
	SSN  uint16 // DDP-SSN (5.2.1)
	// Func and PrivateData are a Session Control message's.
	Func        FunctionCode
	PrivateData []byte
	// Segment is a DDP Segment Chunk's DDP segment.
	Segment []byte

	raw []byte // the received message it was parsed from (Session.ReceiveFunc)
}

// Control returns the Session Control message f with private data pd.
func Control(ssn uint16, f FunctionCode, pd []byte) Payload {
	return Payload{PPID: PPIDControl, SSN: ssn, Func: f, PrivateData: pd}
}

// Segment returns the DDP Segment Chunk carrying seg.
func Segment(ssn uint16, seg []byte) Payload {
	return Payload{PPID: PPIDSegment, SSN: ssn, Segment: seg}
}

// Len is the payload's length on the wire.
func (p *Payload) Len() int {
	if p.PPID == PPIDControl {
		return ControlHeaderLen + len(p.PrivateData)
	}
	return SSNLen + len(p.Segment)
}

// Check reports what makes p a message this layer must not send or accept
// (5.2.3): an unknown PPID or function code, private data longer than 512
// octets, or private data on a Terminate.
func (p *Payload) Check() error {
	switch p.PPID {
	case PPIDSegment:
		return nil
	case PPIDControl:
	default:
		return &FormatError{PPID: p.PPID, Detail: fmt.Sprintf("PPID %#x is neither a DDP Segment Chunk (0x10) nor a DDP Stream Session Control (0x11): a DDP association carries only these (section 5.1)", p.PPID)}
	}
	switch p.Func {
	case FuncInitiate, FuncAccept, FuncReject:
		if len(p.PrivateData) > MaxPrivateData {
			return &FormatError{PPID: p.PPID, Detail: fmt.Sprintf("%v with %d octets of private data, more than 512 (section 5.2.3)", p.Func, len(p.PrivateData))}
		}
	case FuncTerminate:
		if len(p.PrivateData) > 0 {
			return &FormatError{PPID: p.PPID, Detail: fmt.Sprintf("Terminate with %d octets of private data; it carries none (section 5.2.3)", len(p.PrivateData))}
		}
	default:
		return &FormatError{PPID: p.PPID, Detail: fmt.Sprintf("unknown %v (section 5.2.3 defines 0x001 to 0x004)", p.Func)}
	}
	return nil
}

// Append appends p's wire form to dst after checking it.
func (p *Payload) Append(dst []byte) ([]byte, error) {
	if err := p.Check(); err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint16(dst, p.SSN)
	if p.PPID == PPIDControl {
		dst = binary.BigEndian.AppendUint16(dst, uint16(p.Func))
		return append(dst, p.PrivateData...), nil
	}
	return append(dst, p.Segment...), nil
}

// ParsePayload parses a DATA chunk's payload b of PPID ppid. The result's
// slices refer to b.
func ParsePayload(ppid uint32, b []byte) (Payload, error) {
	p := Payload{PPID: ppid}
	need := SSNLen
	if ppid == PPIDControl {
		need = ControlHeaderLen
	}
	if err := p.Check(); err != nil && ppid != PPIDControl {
		return p, err
	}
	if len(b) < need {
		return p, &FormatError{PPID: ppid, Detail: fmt.Sprintf("%d octets, shorter than the %d-octet header (section 5.2)", len(b), need)}
	}
	p.SSN = binary.BigEndian.Uint16(b)
	if ppid == PPIDControl {
		p.Func = FunctionCode(binary.BigEndian.Uint16(b[2:]))
		if len(b) > ControlHeaderLen {
			p.PrivateData = b[ControlHeaderLen:]
		}
	} else {
		p.Segment = b[SSNLen:]
	}
	return p, p.Check()
}

// MULPDU is the largest DDP segment the layer offers on a path whose
// largest unfragmented user message is maxMessage: what fits with the
// DDP-SSN and room for a bundled SACK, but never less than MinMULPDU
// (section 9).
func MULPDU(maxMessage int) int {
	return max(maxMessage-SSNLen-bundleReserve, MinMULPDU)
}
