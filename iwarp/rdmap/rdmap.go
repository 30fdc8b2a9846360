// Package rdmap implements the wire side of the Remote Direct Memory Access
// Protocol (RFC 5040) over package ddp: opcodes and the RDMAP control
// octet, the Read Request and Terminate messages, RDMAP's error numbers
// and their mapping from DDP and MPA errors, the encoding of every RDMAP
// message into DDP Segments, and the classification of a received segment.
//
// RDMAP lives in DDP's RsvdULP fields: its control octet is the first
// RsvdULP octet of every DDP header (DDP header octet 1), and Send with
// Invalidate carries the STag to invalidate in the untagged RsvdULP[8:39]
// (DDP header octets 2 to 5). Work queues, completions and the state
// machine of a stream belong to the verbs layer above; this package holds
// no state.
package rdmap

import "fmt"

// Version is the RDMAP version, the RV field of every control octet.
const Version = 1

// Untagged queues of RDMAP (RFC 5040): every Send variant goes to QN 0,
// Read Requests to QN 1, Terminate to QN 2. The MSN of each starts at 1.
const (
	QNSend        uint32 = 0
	QNReadRequest uint32 = 1
	QNTerminate   uint32 = 2
	NumQueues            = 3
)

// Opcode is the 4-bit RDMAP message opcode.
type Opcode uint8

// RDMAP opcodes (RFC 5040).
const (
	OpWrite            Opcode = 0x0 // RDMA Write, tagged
	OpReadRequest      Opcode = 0x1 // RDMA Read Request, untagged QN 1
	OpReadResponse     Opcode = 0x2 // RDMA Read Response, tagged
	OpSend             Opcode = 0x3 // Send, untagged QN 0
	OpSendInvalidate   Opcode = 0x4 // Send with Invalidate, untagged QN 0
	OpSendSE           Opcode = 0x5 // Send with Solicited Event, untagged QN 0
	OpSendSEInvalidate Opcode = 0x6 // Send with Solicited Event and Invalidate, untagged QN 0
	OpTerminate        Opcode = 0x7 // Terminate, untagged QN 2

	// NumOpcodes is one more than the largest opcode RFC 5040 defines:
	// the size of a table indexed by Opcode.
	NumOpcodes = 8
)

var opNames = [NumOpcodes]string{
	"RDMA Write",
	"RDMA Read Request",
	"RDMA Read Response",
	"Send",
	"Send with Invalidate",
	"Send with Solicited Event",
	"Send with Solicited Event and Invalidate",
	"Terminate",
}

func (o Opcode) String() string {
	if o.Valid() {
		return opNames[o]
	}
	return fmt.Sprintf("RDMAP opcode %#x", uint8(o))
}

// Valid reports whether o is one of the eight RDMAP opcodes.
func (o Opcode) Valid() bool { return o < NumOpcodes }

// Tagged reports whether messages with opcode o use DDP's tagged buffer
// model: RDMA Write and RDMA Read Response.
func (o Opcode) Tagged() bool { return o == OpWrite || o == OpReadResponse }

// QN is the untagged queue of opcode o; it is meaningless for tagged
// opcodes and invalid ones.
func (o Opcode) QN() uint32 {
	switch o {
	case OpReadRequest:
		return QNReadRequest
	case OpTerminate:
		return QNTerminate
	}
	return QNSend
}

// Invalidates reports whether opcode o carries an Invalidate STag.
func (o Opcode) Invalidates() bool { return o == OpSendInvalidate || o == OpSendSEInvalidate }

// SolicitedEvent reports whether opcode o asks for a solicited event.
func (o Opcode) SolicitedEvent() bool { return o == OpSendSE || o == OpSendSEInvalidate }

// Control returns the RDMAP control octet for opcode o: RV (2 bits) |
// reserved (2 bits) | opcode (4 bits), so 0x40|o for version 1.
func Control(o Opcode) uint8 { return Version<<6 | uint8(o)&0x0f }

// ParseControl splits an RDMAP control octet into its RV field and opcode;
// the two reserved bits are not checked on receive.
func ParseControl(c uint8) (rv uint8, op Opcode) { return c >> 6, Opcode(c & 0x0f) }
