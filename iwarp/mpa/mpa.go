// Package mpa implements Marker PDU Aligned framing for TCP (RFC 5044):
// FPDU framing with ULPDU_Length, pad and CRC32c, markers every 512 octets
// of TCP sequence space, MULPDU sizing, the Request/Reply startup frames of
// section 7.1 with MPA revision 2 (RFC 6581), an in-order stream receiver
// and an out-of-order segment receiver that places FPDUs found through
// markers and delivers them in order.
package mpa

import (
	"errors"
	"fmt"
)

// Sizes from RFC 5044 sections 4.1 to 4.5.
const (
	HeaderLen      = 2     // ULPDU_Length field (4.1)
	CRCLen         = 4     // CRC field (4.1)
	MarkerLen      = 4     // RESERVED + FPDUPTR (4.2)
	MarkerInterval = 512   // octets of TCP sequence space between markers (4.3)
	MinMULPDU      = 128   // smallest MULPDU MPA may offer (4.5)
	MaxULPDU       = 64768 // largest ULPDU a sender may post (3.x, "MPA's Interactions with DDP")
	Overhead       = HeaderLen + CRCLen
)

// ErrorCode is an MPA error number from RFC 5044 section 8, extended by
// RFC 6581 section 9 (5 to 7). These are also the LLP error codes that
// RDMAP's Terminate carries with layer 2.
type ErrorCode uint8

const (
	ErrTCPClosed        ErrorCode = 1 // TCP connection closed, terminated or lost
	ErrCRC              ErrorCode = 2 // received CRC does not match the calculated value
	ErrMarker           ErrorCode = 3 // marker and ULPDU_Length disagree on the FPDU start
	ErrBadStartupFrame  ErrorCode = 4 // invalid MPA Request or Reply frame
	ErrLocalCatastrophe ErrorCode = 5 // RFC 6581: local catastrophic error
	ErrInsufficientIRD  ErrorCode = 6 // RFC 6581: insufficient IRD resources
	ErrNoMatchingRTR    ErrorCode = 7 // RFC 6581: no matching RTR
)

func (c ErrorCode) String() string {
	switch c {
	case ErrTCPClosed:
		return "TCP connection closed, terminated or lost"
	case ErrCRC:
		return "CRC error"
	case ErrMarker:
		return "marker and ULPDU_Length disagree"
	case ErrBadStartupFrame:
		return "invalid MPA Request/Reply frame"
	case ErrLocalCatastrophe:
		return "local catastrophic error"
	case ErrInsufficientIRD:
		return "insufficient IRD resources"
	case ErrNoMatchingRTR:
		return "no matching RTR"
	}
	return fmt.Sprintf("MPA error %d", uint8(c))
}

// Error is an MPA error with its RFC 5044 section 8 code. Seq is the TCP
// sequence number (or stream offset, for receivers that count from the
// start of Full Operation) where the offending FPDU or frame starts, when
// known. Detail says what exactly was wrong.
type Error struct {
	Code   ErrorCode
	Seq    uint32
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "mpa: " + e.Code.String()
	}
	return "mpa: " + e.Code.String() + ": " + e.Detail
}

// Is lets errors.Is(err, &Error{Code: ErrCRC}) match on the code alone.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code
}

func errorf(code ErrorCode, seq uint32, format string, args ...any) *Error {
	return &Error{Code: code, Seq: seq, Detail: fmt.Sprintf(format, args...)}
}

// PadLen returns the number of pad octets after a ULPDU of n octets so that
// the FPDU (2-octet header, ULPDU, pad) is a multiple of four (4.1).
func PadLen(n int) int { return (4 - (HeaderLen+n)%4) % 4 }

// MULPDU returns the largest ULPDU that fits in one FPDU of at most emss
// octets (RFC 5044 4.5), never less than MinMULPDU.
//
//	with markers:    EMSS - (6 + 4*ceil(EMSS/512) + EMSS mod 4)
//	without markers: EMSS - (6 + EMSS mod 4)
func MULPDU(emss int, markers bool) int {
	var m int
	if markers {
		m = emss - (Overhead + MarkerLen*((emss+MarkerInterval-1)/MarkerInterval) + emss%4)
	} else {
		m = emss - (Overhead + emss%4)
	}
	if m < MinMULPDU {
		return MinMULPDU
	}
	if m > MaxULPDU {
		return MaxULPDU
	}
	return m
}
