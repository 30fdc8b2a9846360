package ddp

import (
	"errors"
	"fmt"
)

// ErrorType is the 4-bit DDP Error Type (RFC 5041 7.2).
type ErrorType uint8

// Error Types (7.2).
const (
	TypeLocalCatastrophic ErrorType = 0x0
	TypeTaggedBuffer      ErrorType = 0x1
	TypeUntaggedBuffer    ErrorType = 0x2
	TypeLLP               ErrorType = 0x3 // reserved for use by the LLP
)

func (t ErrorType) String() string {
	switch t {
	case TypeLocalCatastrophic:
		return "Local Catastrophic"
	case TypeTaggedBuffer:
		return "Tagged Buffer Error"
	case TypeUntaggedBuffer:
		return "Untagged Buffer Error"
	case TypeLLP:
		return "Reserved for the use by the LLP"
	}
	return fmt.Sprintf("DDP error type %#x", uint8(t))
}

// Error Codes (7.2). A code means something only together with its type.
const (
	// Type TypeLocalCatastrophic.
	CodeLocalCatastrophic uint8 = 0x00

	// Type TypeTaggedBuffer.
	CodeInvalidSTag          uint8 = 0x00 // Invalid STag
	CodeBaseBounds           uint8 = 0x01 // Base or bounds violation
	CodeSTagNotAssociated    uint8 = 0x02 // STag not associated with DDP Stream
	CodeTOWrap               uint8 = 0x03 // TO wrap
	CodeTaggedInvalidVersion uint8 = 0x04 // Invalid DDP version

	// Type TypeUntaggedBuffer.
	CodeInvalidQN              uint8 = 0x01 // Invalid QN
	CodeNoBuffer               uint8 = 0x02 // Invalid MSN - no buffer available
	CodeMSNRange               uint8 = 0x03 // Invalid MSN - MSN range is not valid
	CodeInvalidMO              uint8 = 0x04 // Invalid MO
	CodeTooLong                uint8 = 0x05 // DDP Message too long for available buffer
	CodeUntaggedInvalidVersion uint8 = 0x06 // Invalid DDP version
)

// ErrorName returns the spec's description of a DDP error type and code
// (7.2), or a numeric description for pairs the spec does not define.
func ErrorName(t ErrorType, code uint8) string {
	switch t {
	case TypeLocalCatastrophic:
		if code == CodeLocalCatastrophic {
			return "Local Catastrophic"
		}
	case TypeTaggedBuffer:
		switch code {
		case CodeInvalidSTag:
			return "Invalid STag"
		case CodeBaseBounds:
			return "Base or bounds violation"
		case CodeSTagNotAssociated:
			return "STag not associated with DDP Stream"
		case CodeTOWrap:
			return "TO wrap"
		case CodeTaggedInvalidVersion:
			return "Invalid DDP version"
		}
	case TypeUntaggedBuffer:
		switch code {
		case CodeInvalidQN:
			return "Invalid QN"
		case CodeNoBuffer:
			return "Invalid MSN - no buffer available"
		case CodeMSNRange:
			return "Invalid MSN - MSN range is not valid"
		case CodeInvalidMO:
			return "Invalid MO"
		case CodeTooLong:
			return "DDP Message too long for available buffer"
		case CodeUntaggedInvalidVersion:
			return "Invalid DDP version"
		}
	}
	return fmt.Sprintf("%s, code %#02x", t, code)
}

// Error is an error detected at the Data Sink, with its DDP Error Type and
// Error Code (7.2), the offending DDP header and the length of the DDP
// Segment: the report that 7.1 says DDP SHOULD give the ULP, and what
// RDMAP copies into a Terminate message.
type Error struct {
	Type       ErrorType
	Code       uint8
	Header     []byte // the offending DDP header as it was on the wire (14 or 18 octets); nil if unknown
	SegmentLen int    // length of the offending DDP Segment, header included; 0 if unknown
	Detail     string // what exactly was wrong, for people
}

// String is the spec's description of the error type and code.
func (e *Error) String() string {
	if e.Type == TypeLocalCatastrophic || e.Type == TypeLLP {
		return ErrorName(e.Type, e.Code)
	}
	return e.Type.String() + ": " + ErrorName(e.Type, e.Code)
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "ddp: " + e.String()
	}
	return "ddp: " + e.String() + ": " + e.Detail
}

// Is lets errors.Is(err, &Error{Type: t, Code: c}) match on type and code.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Type == e.Type && t.Code == e.Code
}

func taggedError(code uint8, format string, args ...any) *Error {
	return &Error{Type: TypeTaggedBuffer, Code: code, Detail: fmt.Sprintf(format, args...)}
}

func untaggedError(code uint8, format string, args ...any) *Error {
	return &Error{Type: TypeUntaggedBuffer, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// AccessError reports a tagged segment whose STag is valid for the stream
// but whose buffer does not grant the access right the ULP required.
// DDP's error numbers have none for it (7.2 lists only what DDP itself
// checks); RDMAP reports it as a Remote Protection Error, "Access rights
// violation" (RFC 5040 section 7), and rdmap.ErrorFrom does that mapping.
type AccessError struct {
	STag       uint32
	Need       Access // the right the ULP asked for
	Have       Access // the rights the buffer was registered with
	Header     []byte // the offending DDP header; nil if unknown
	SegmentLen int    // length of the offending DDP Segment; 0 if unknown
}

func (e *AccessError) Error() string {
	return fmt.Sprintf("ddp: STag %#08x does not grant %s (has %s)", e.STag, e.Need, e.Have)
}
