// Package ddp implements the Direct Data Placement protocol (RFC 5041; the
// text in shared/spec/ddp-draft-ietf-rddp-ddp-07.txt): the tagged and
// untagged DDP headers (section 4), segmentation of a ULP Message into DDP
// Segments no larger than the LLP's MULPDU (5.2), and the Data Sink: a
// table of STags for tagged Placement and numbered queues of posted
// buffers for untagged Placement, which validates every segment before it
// writes a byte (7.1, 8.3.1), reports the section 7.2 error numbers, stops
// placing after the first error and Delivers messages in order (5.3, 5.4).
//
// DDP knows nothing of the ULP: the RsvdULP fields are opaque (RDMAP keeps
// its control byte in the first of them), and the access right a tagged
// segment needs is passed in by the ULP with every segment.
//
// The package is the reference model that the hardware's DDP parser and
// placement engine are compared with, so every check and every error code
// is deliberate; the comments cite the section each one implements.
package ddp

import "strings"

// Wire constants (RFC 5041 4.1 to 4.3).
const (
	// Version is the DDP version this package speaks: the DV field of
	// every segment (4.1).
	Version = 1

	// TaggedHeaderLen is the length of the tagged buffer header: control,
	// RsvdULP, STag, TO (4.2).
	TaggedHeaderLen = 14

	// UntaggedHeaderLen is the length of the untagged buffer header:
	// control, RsvdULP[0:7], RsvdULP[8:39], QN, MSN, MO (4.3).
	UntaggedHeaderLen = 18

	// MaxMessageLen is the largest ULP Message Length: it "MUST be less
	// than 2^32" (5.2).
	MaxMessageLen = 1<<32 - 1

	// FirstMSN is the MSN of the first message on every queue (4.3).
	FirstMSN = 1
)

// Bits of the DDP Control Field (4.1): T | L | Rsvd(4) | DV(2).
const (
	ctrlTagged = 0x80
	ctrlLast   = 0x40
	ctrlRsvd   = 0x3c
	ctrlDV     = 0x03
)

// Access is a set of access rights to a tagged buffer. Which right an
// operation needs is the ULP's decision (RDMAP: RemoteWrite for RDMA
// Write and Read Response, RemoteRead for the Data Source of an RDMA
// Read), so it is a parameter of every placement call and of
// STagTable.Check. Placement writes, so the Sink adds RemoteWrite to
// whatever a placement call asks for.
type Access uint8

// Access rights of a Region (RFC 5041 8.3.1 item 5).
const (
	RemoteWrite Access = 1 << iota
	RemoteRead
)

func (a Access) String() string {
	if a == 0 {
		return "none"
	}
	var parts []string
	if a&RemoteWrite != 0 {
		parts = append(parts, "remote write")
	}
	if a&RemoteRead != 0 {
		parts = append(parts, "remote read")
	}
	if rest := a &^ (RemoteWrite | RemoteRead); rest != 0 {
		parts = append(parts, "unknown bits")
	}
	return strings.Join(parts, "|")
}

// MaxPayload is the largest ULP payload that fits in one DDP Segment of at
// most mulpdu octets (5.2: "1482 = 1500 (MULPDU) - 18"). It is zero or
// negative when mulpdu cannot hold even the header.
func MaxPayload(mulpdu int, tagged bool) int {
	if tagged {
		return mulpdu - TaggedHeaderLen
	}
	return mulpdu - UntaggedHeaderLen
}
