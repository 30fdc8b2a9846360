package rdmap

import (
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// Layer is the 4-bit layer field of a Terminate message: which layer
// detected the error (RFC 5040).
type Layer uint8

// Layers of the Terminate message.
const (
	LayerRDMAP Layer = 0
	LayerDDP   Layer = 1
	LayerLLP   Layer = 2 // the LLP below DDP: MPA over TCP, or SCTP
)

func (l Layer) String() string {
	switch l {
	case LayerRDMAP:
		return "RDMAP"
	case LayerDDP:
		return "DDP"
	case LayerLLP:
		return "LLP"
	}
	return fmt.Sprintf("layer %d", uint8(l))
}

// Error Types (EType) of each layer (RFC 5040 section 7).
const (
	// Layer RDMAP.
	ETypeLocalCatastrophic uint8 = 0x0
	ETypeRemoteProtection  uint8 = 0x1
	ETypeRemoteOperation   uint8 = 0x2

	// Layer DDP: the DDP Error Types of RFC 5041 7.2.
	ETypeDDPLocalCatastrophic = uint8(ddp.TypeLocalCatastrophic)
	ETypeTaggedBuffer         = uint8(ddp.TypeTaggedBuffer)
	ETypeUntaggedBuffer       = uint8(ddp.TypeUntaggedBuffer)

	// Layer LLP: MPA errors all have type 0.
	ETypeMPA uint8 = 0x0
)

// Error Codes of layer RDMAP (RFC 5040 section 7). A code means something
// only together with its layer and type.
const (
	// EType ETypeLocalCatastrophic.
	CodeLocalCatastrophic uint8 = 0x00

	// EType ETypeRemoteProtection.
	CodeInvalidSTag       uint8 = 0x00 // Invalid STag
	CodeBaseBounds        uint8 = 0x01 // Base or bounds violation
	CodeAccessRights      uint8 = 0x02 // Access rights violation
	CodeSTagNotAssociated uint8 = 0x03 // STag not associated with RDMAP Stream
	CodeTOWrap            uint8 = 0x04 // TO wrap

	// EType ETypeRemoteOperation.
	CodeInvalidVersion     uint8 = 0x05 // Invalid RDMAP version
	CodeUnexpectedOpcode   uint8 = 0x06 // Unexpected OpCode
	CodeStreamCatastrophic uint8 = 0x07 // Catastrophic error, localized to RDMAP Stream
	CodeGlobalCatastrophic uint8 = 0x08 // Catastrophic error, global

	// Both remote ETypes.
	CodeCannotInvalidate uint8 = 0x09 // STag cannot be Invalidated
	CodeUnspecified      uint8 = 0xff // Unspecified Error
)

// Error Codes of layer DDP: the DDP Error Codes of RFC 5041 7.2.
const (
	CodeDDPLocalCatastrophic      = ddp.CodeLocalCatastrophic
	CodeDDPInvalidSTag            = ddp.CodeInvalidSTag
	CodeDDPBaseBounds             = ddp.CodeBaseBounds
	CodeDDPSTagNotAssociated      = ddp.CodeSTagNotAssociated
	CodeDDPTOWrap                 = ddp.CodeTOWrap
	CodeDDPTaggedInvalidVersion   = ddp.CodeTaggedInvalidVersion
	CodeDDPInvalidQN              = ddp.CodeInvalidQN
	CodeDDPNoBuffer               = ddp.CodeNoBuffer
	CodeDDPMSNRange               = ddp.CodeMSNRange
	CodeDDPInvalidMO              = ddp.CodeInvalidMO
	CodeDDPTooLong                = ddp.CodeTooLong
	CodeDDPUntaggedInvalidVersion = ddp.CodeUntaggedInvalidVersion
)

// Error Codes of layer LLP with MPA: the MPA error numbers of RFC 5044
// section 8 and RFC 6581. They are plain numbers here so that rdmap does
// not depend on package mpa, whose ErrorCode has the same values.
const (
	CodeMPATCPClosed         uint8 = 1 // TCP connection closed, terminated or lost
	CodeMPACRC               uint8 = 2 // received MPA CRC does not match the calculated value
	CodeMPAMarker            uint8 = 3 // FPDU marker and ULPDU_Length disagree
	CodeMPABadStartupFrame   uint8 = 4 // invalid MPA Request or Reply frame
	CodeMPALocalCatastrophic uint8 = 5 // RFC 6581: local catastrophic error
	CodeMPAInsufficientIRD   uint8 = 6 // RFC 6581: insufficient IRD resources
	CodeMPANoMatchingRTR     uint8 = 7 // RFC 6581: no matching RTR
)

// ErrorName returns the description of a Terminate error (layer, type,
// code) in the spec's words, or a numeric one for combinations the spec
// does not define.
func ErrorName(l Layer, etype, code uint8) string {
	switch l {
	case LayerRDMAP:
		switch etype {
		case ETypeLocalCatastrophic:
			if code == CodeLocalCatastrophic {
				return "Local Catastrophic Error"
			}
		case ETypeRemoteProtection:
			switch code {
			case CodeInvalidSTag:
				return "Remote Protection Error: Invalid STag"
			case CodeBaseBounds:
				return "Remote Protection Error: Base or bounds violation"
			case CodeAccessRights:
				return "Remote Protection Error: Access rights violation"
			case CodeSTagNotAssociated:
				return "Remote Protection Error: STag not associated with RDMAP Stream"
			case CodeTOWrap:
				return "Remote Protection Error: TO wrap"
			case CodeCannotInvalidate:
				return "Remote Protection Error: STag cannot be Invalidated"
			case CodeUnspecified:
				return "Remote Protection Error: Unspecified Error"
			}
		case ETypeRemoteOperation:
			switch code {
			case CodeInvalidVersion:
				return "Remote Operation Error: Invalid RDMAP version"
			case CodeUnexpectedOpcode:
				return "Remote Operation Error: Unexpected OpCode"
			case CodeStreamCatastrophic:
				return "Remote Operation Error: Catastrophic error, localized to RDMAP Stream"
			case CodeGlobalCatastrophic:
				return "Remote Operation Error: Catastrophic error, global"
			case CodeCannotInvalidate:
				return "Remote Operation Error: STag cannot be Invalidated"
			case CodeUnspecified:
				return "Remote Operation Error: Unspecified Error"
			}
		}
	case LayerDDP:
		e := &ddp.Error{Type: ddp.ErrorType(etype), Code: code}
		return e.String()
	case LayerLLP:
		if etype == ETypeMPA {
			switch code {
			case CodeMPATCPClosed:
				return "MPA: TCP connection closed, terminated or lost"
			case CodeMPACRC:
				return "MPA: CRC error"
			case CodeMPAMarker:
				return "MPA: marker and ULPDU_Length mismatch"
			case CodeMPABadStartupFrame:
				return "MPA: invalid Request or Reply frame"
			case CodeMPALocalCatastrophic:
				return "MPA: local catastrophic error"
			case CodeMPAInsufficientIRD:
				return "MPA: insufficient IRD resources"
			case CodeMPANoMatchingRTR:
				return "MPA: no matching RTR"
			}
		}
	}
	return fmt.Sprintf("%s error type %#x code %#02x", l, etype, code)
}

// Error is an error to report to the Remote Peer in a Terminate message:
// the layer that found it, its type and code (RFC 5040 section 7), and
// the parts of the offending segment that the Terminate can carry.
type Error struct {
	Layer  Layer
	Type   uint8
	Code   uint8
	Detail string

	// Context for the Terminate message (RFC 5040 4.8), when known.
	SegmentLen int    // length of the offending DDP Segment (the MPA ULPDU_Length); 0 if unknown
	DDPHeader  []byte // the offending DDP header, 14 or 18 octets; nil if unknown
	RDMAHeader []byte // the offending Read Request header, 28 octets; nil if none

	Err error // the underlying error (a *ddp.Error, for instance), if any
}

// String is the spec's description of the error.
func (e *Error) String() string { return ErrorName(e.Layer, e.Type, e.Code) }

func (e *Error) Error() string {
	if e.Detail == "" {
		return "rdmap: " + e.String()
	}
	return "rdmap: " + e.String() + ": " + e.Detail
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, &Error{Layer: l, Type: t, Code: c}) match on
// layer, type and code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Layer == e.Layer && t.Type == e.Type && t.Code == e.Code
}

// Terminate returns the Terminate message reporting e: M with the segment
// length when it is known and fits the 16-bit field, D with the DDP header
// when it is a whole one, R with the Read Request header when there is
// one (and the DDP header, if included, is that of a Read Request).
func (e *Error) Terminate() Terminate {
	t := Terminate{Layer: e.Layer, EType: e.Type, Code: e.Code}
	if e.SegmentLen > 0 && e.SegmentLen <= 0xffff {
		t.M, t.SegmentLen = true, uint16(e.SegmentLen)
	}
	if n := len(e.DDPHeader); n > 0 && n == ddpHeaderLen(e.DDPHeader[0]) {
		t.D, t.DDPHeader = true, e.DDPHeader
	}
	if len(e.RDMAHeader) == ReadRequestLen && (!t.D || isReadRequestHeader(t.DDPHeader)) {
		t.R, t.RDMAHeader = true, e.RDMAHeader
	}
	return t
}

// ErrorFrom returns the Terminate error for err, an error from package ddp
// or rdmap (possibly wrapped); nil for nil.
//
//   - *Error: itself.
//   - *ddp.Error: layer DDP with the DDP type and code, header and length.
//   - *ddp.AccessError: RDMAP Remote Protection Error, Access rights
//     violation (DDP has no number for it).
//   - *ddp.ShortHeaderError: a segment too short for its DDP header; DDP
//     has no number for it, so it is reported as RDMAP Remote Operation
//     Error, Catastrophic error localized to the RDMAP Stream, with the
//     segment length.
//   - *FormatError (a Read Request or Terminate of the wrong length, a
//     Read Request in several DDP Segments): the same RDMAP error.
//   - anything else: RDMAP Local Catastrophic Error.
func ErrorFrom(err error) *Error {
	if err == nil {
		return nil
	}
	var (
		re *Error
		de *ddp.Error
		ae *ddp.AccessError
		se *ddp.ShortHeaderError
		fe *FormatError
	)
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &de):
		return &Error{Layer: LayerDDP, Type: uint8(de.Type), Code: de.Code, Detail: de.Detail,
			SegmentLen: de.SegmentLen, DDPHeader: de.Header, Err: err}
	case errors.As(err, &ae):
		return &Error{Layer: LayerRDMAP, Type: ETypeRemoteProtection, Code: CodeAccessRights,
			Detail:     fmt.Sprintf("STag %#08x does not grant %s", ae.STag, ae.Need),
			SegmentLen: ae.SegmentLen, DDPHeader: ae.Header, Err: err}
	case errors.As(err, &se):
		return &Error{Layer: LayerRDMAP, Type: ETypeRemoteOperation, Code: CodeStreamCatastrophic,
			Detail: se.Error(), SegmentLen: se.Have, Err: err}
	case errors.As(err, &fe):
		return &Error{Layer: LayerRDMAP, Type: ETypeRemoteOperation, Code: CodeStreamCatastrophic,
			Detail: fe.Error(), Err: err}
	}
	return &Error{Layer: LayerRDMAP, Type: ETypeLocalCatastrophic, Code: CodeLocalCatastrophic, Detail: err.Error(), Err: err}
}

// MPAError returns the Terminate error for MPA error number code (1 to 7,
// RFC 5044 section 8 and RFC 6581): layer LLP, type 0. Pass the offending
// segment's DDP header and length when MPA could still delineate the FPDU
// (a CRC error, for instance), else nil and 0.
func MPAError(code uint8, ddpHeader []byte, segmentLen int) *Error {
	return &Error{Layer: LayerLLP, Type: ETypeMPA, Code: code, SegmentLen: segmentLen, DDPHeader: ddpHeader}
}

func rdmapError(etype, code uint8, format string, args ...any) *Error {
	return &Error{Layer: LayerRDMAP, Type: etype, Code: code, Detail: fmt.Sprintf(format, args...)}
}
