// Package tuf implements TCP ULP Framing (draft-ietf-tsvwg-tcp-ulp-frame-01,
// "TUF") as a lower layer for DDP: the 8-octet FPDU header (16-bit Length,
// 48-bit Key, section 4.1.1), the sender's segmentation rule (every FPDU
// starts a TCP segment, section 4.2) with and without ULPDU packing
// (4.1.2), MULPDU = EMSS - 8, the receiver's ULPDU containment test (4.4),
// detection of a re-segmenting path (5.2.1) after which a receiver stops
// relying on the test, and an in-stream receiver that delineates FPDUs by
// Length and Key where segment boundaries are not visible.
//
// Error detection. TUF has no digest of its own, while DDP requires its
// lower layer to provide one at least as strong as CRC32c (DDP draft
// section 3, requirement 6). This package therefore ends every FPDU with a
// CRC32c trailer (the CRC MPA uses, RFC 5044 4.4, least significant octet
// first) over the FPDU's header and ULPDUs. The trailer is always on: it is
// part of the framed data the Length field counts, so the header layout and
// the containment test (segment length == Length + 8) are the draft's
// exactly. See docs/tuf.md for the decision and its reasons.
//
// Wire layout of one FPDU:
//
//	+--------+--------+------------------------+-------------+--------+
//	| Length (16)     | Key (48)               | ULPDUs      | CRC32c |
//	+--------+--------+------------------------+-------------+--------+
//	  Length = len(ULPDUs) + 4; the FPDU is 8 + Length octets.
package tuf

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Sizes from draft-ietf-tsvwg-tcp-ulp-frame-01 4.1.1, and the trailer.
const (
	HeaderLen = 8 // Length (2) and Key (6)
	CRCLen    = 4 // the CRC32c trailer this stack adds (docs/tuf.md)
	Overhead  = HeaderLen + CRCLen
	MaxLength = 0xffff // largest Length field
	// MaxULPDUs is the most ULPDU octets one FPDU can frame: the Length
	// field also counts the trailer.
	MaxULPDUs = MaxLength - CRCLen
	// MinEMSS is the smallest EMSS a Sender accepts: room for the header,
	// the trailer and one octet. The draft (5.2.5) expects ULPs to fail
	// long before: an EMSS below 128 + 8 is "extremely unlikely".
	MinEMSS = Overhead + 1
	// KeyMask keeps the 48 bits of a Key.
	KeyMask = 1<<48 - 1
)

// Key is the 48-bit FPDU key of one direction of a connection (4.1.1),
// held in the low 48 bits.
type Key uint64

// NewKey draws a key from r, or from crypto/rand when r is nil: the draft
// requires "a good quality random number generator" (4.1.1, RFC 1750).
func NewKey(r io.Reader) (Key, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [8]byte
	if _, err := io.ReadFull(r, b[2:]); err != nil {
		return 0, fmt.Errorf("tuf: drawing a key: %w", err)
	}
	return Key(binary.BigEndian.Uint64(b[:])), nil
}

func (k Key) String() string { return fmt.Sprintf("%012x", uint64(k)&KeyMask) }

// Header is the FPDU header of draft section 4.1.1.
type Header struct {
	Length uint16 // octets after the header: the framed ULPDUs and the trailer
	Key    Key
}

// Append appends the header's 8 octets to dst: Length, then Key, both
// big-endian (network order, as the draft's figure draws them).
func (h Header) Append(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, h.Length)
	k := uint64(h.Key) & KeyMask
	return append(dst, byte(k>>40), byte(k>>32), byte(k>>24), byte(k>>16), byte(k>>8), byte(k))
}

// ErrShortHeader is returned by ParseHeader for fewer than 8 octets.
var ErrShortHeader = errors.New("tuf: fewer than 8 octets for an FPDU header")

// ParseHeader reads the header at the start of b.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("%w: %d", ErrShortHeader, len(b))
	}
	var k [8]byte
	copy(k[2:], b[2:8])
	return Header{Length: binary.BigEndian.Uint16(b), Key: Key(binary.BigEndian.Uint64(k[:]))}, nil
}

// MULPDU returns the draft's MULPDU for an EMSS: the largest set of framed
// octets that fits in an EMSS-sized FPDU, EMSS - 8 (4.1.2), at most
// MaxLength. With this stack's trailer inside it, the largest ULPDU (or run
// of packed ULPDUs) a ULP may hand over is MaxULPDU(emss) = MULPDU - 4.
func MULPDU(emss int) int {
	return max(0, min(emss-HeaderLen, MaxLength))
}

// MaxULPDU returns the largest ULPDU a ULP may hand a Sender for an EMSS:
// MULPDU(emss) - 4, the trailer's octets taken off. It is DDP's MULPDU
// (DDP draft section 3, requirement 1) when DDP runs over TUF.
func MaxULPDU(emss int) int { return max(0, MULPDU(emss)-CRCLen) }

// ErrorCode says what made a receiver stop.
type ErrorCode uint8

const (
	// ErrKey: an FPDU header in the stream carries another key than the
	// one signalled for the connection (4.1.1: all FPDUs of a direction
	// use the same key). In-stream, the header is where the previous
	// FPDU's Length said; a wrong key means the stream is damaged.
	ErrKey ErrorCode = 1
	// ErrCRC: the trailer does not match the FPDU (docs/tuf.md). The DDP
	// layer reports it as MPA's CRC error (LLP error 2) would be.
	ErrCRC ErrorCode = 2
	// ErrLength: a Length below 4 leaves no room for the trailer.
	ErrLength ErrorCode = 3
	// ErrTruncated: the stream ended inside an FPDU.
	ErrTruncated ErrorCode = 4
)

func (c ErrorCode) String() string {
	switch c {
	case ErrKey:
		return "FPDU key mismatch"
	case ErrCRC:
		return "CRC error"
	case ErrLength:
		return "FPDU Length too small for the trailer"
	case ErrTruncated:
		return "stream ended inside an FPDU"
	}
	return fmt.Sprintf("TUF error %d", uint8(c))
}

// Error is a receive error with the stream offset of the FPDU's header.
type Error struct {
	Code   ErrorCode
	Offset uint64
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "tuf: " + e.Code.String()
	}
	return "tuf: " + e.Code.String() + ": " + e.Detail
}

// Is lets errors.Is(err, &Error{Code: ErrCRC}) match on the code alone.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code
}

func errorf(code ErrorCode, off uint64, format string, args ...any) *Error {
	return &Error{Code: code, Offset: off, Detail: fmt.Sprintf(format, args...)}
}
