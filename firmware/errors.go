package firmware

import (
	"errors"
	"fmt"
)

// Kind says why an image, a header field or a target was refused, so that
// callers (the flash updater, the CLI's JSON) can tell the reasons apart
// without reading messages.
type Kind uint8

// The reasons an image is refused. The first group are the header's own
// rules (docs/firmware.md, "The header"), then the signature and payload
// checks of Verify, then the target policy of Check.
const (
	_                Kind = iota
	Truncated             // the file ends inside the header or the payload
	Oversized             // octets follow the payload the header declares
	BadMagic              // the first four octets are not "RIMG"
	BadFormatVersion      // format version is not 1
	BadHeaderLength       // signed header length is not 256
	BadFlags              // a reserved flag is set
	Reserved              // a reserved field is not all zero
	BadString             // board or part is not printable ASCII, NUL-padded
	EmptyPayload          // payload length 0
	UnknownKey            // the key id names no key of the trust set
	BadSignature          // the Ed25519 signature does not verify
	HashMismatch          // the payload's SHA-256 is not the header's
	WrongBoard            // the image is for another board
	WrongPart             // the image is for another FPGA part
	WrongPCI              // the image is for other PCI IDs
	Rollback              // security counter below the device's
	TooLarge              // payload larger than the slot (or than the format allows)
	BadTarget             // the target to check against is incomplete
	NoTrustedKeys         // the trust set is empty
)

// String is the kind's name as the CLI's JSON gives it ("bad_signature").
func (k Kind) String() string {
	switch k {
	case Truncated:
		return "truncated"
	case Oversized:
		return "oversized"
	case BadMagic:
		return "bad_magic"
	case BadFormatVersion:
		return "bad_format_version"
	case BadHeaderLength:
		return "bad_header_length"
	case BadFlags:
		return "bad_flags"
	case Reserved:
		return "reserved_not_zero"
	case BadString:
		return "bad_string"
	case EmptyPayload:
		return "empty_payload"
	case UnknownKey:
		return "unknown_key"
	case BadSignature:
		return "bad_signature"
	case HashMismatch:
		return "hash_mismatch"
	case WrongBoard:
		return "wrong_board"
	case WrongPart:
		return "wrong_part"
	case WrongPCI:
		return "wrong_pci_ids"
	case Rollback:
		return "security_counter_rollback"
	case TooLarge:
		return "too_large"
	case BadTarget:
		return "bad_target"
	case NoTrustedKeys:
		return "no_trusted_keys"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Error is why an image was refused: the kind, the field it concerns as
// docs/firmware.md names it ("security counter", "payload"), and a message
// that says what is wrong and what to do next.
type Error struct {
	Kind  Kind
	Field string
	Msg   string
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

func refuse(k Kind, field, format string, args ...any) *Error {
	return &Error{Kind: k, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the Kind of the *Error in err's chain, or 0 when there is
// none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
