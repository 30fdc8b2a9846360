// Package hostif is the device's host interface as data: the layouts in
// host memory (send and receive queue entries, completion queue entries,
// events, the exception ring's entry header) and the admin mailbox's
// commands, argument words and status codes, as docs/device.md defines
// them. The driver, its `model` backend and the tests of the simulated
// device all encode and decode through this package, so the three cannot
// drift apart on a layout.
//
// Everything in host memory is little-endian (docs/device.md). Decoding is
// strict: a non-zero reserved field, an unknown opcode, type, status or
// reason is refused with a *FieldError naming the layout, the field and its
// octet offset. The device refuses such an entry too (an SQ entry with a
// reserved bit set completes with BAD_WQE), so a decoder that accepted it
// would hide a producer's bug.
package hostif

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

var le = binary.LittleEndian

// FieldError is a refused field of a host-memory entry or an admin
// command: the layout, the field, where it is and what was found.
type FieldError struct {
	Layout string // "SQ entry", "CQ entry", "CREATE_QP arguments", ...
	Field  string // the field as docs/device.md names it
	Offset int    // octet offset in the entry, or the ARG word's number
	Word   bool   // Offset is an ARG word's number, not an octet offset
	Value  uint64 // what was found
	Reason string // what is wrong with it
}

func (e *FieldError) Error() string {
	where := fmt.Sprintf("octet %d", e.Offset)
	if e.Word {
		where = fmt.Sprintf("ARG%d", e.Offset)
	}
	return fmt.Sprintf("hostif: %s: %s (%s) is %#x: %s; the producer does not follow docs/device.md "+
		"(fix the encoder that wrote it, or the reader's idea of where the entry starts)",
		e.Layout, e.Field, where, e.Value, e.Reason)
}

func reserved(layout, field string, off int, v uint64) error {
	return &FieldError{Layout: layout, Field: field, Offset: off, Value: v, Reason: "reserved, must be zero"}
}

// zeros refuses a run of reserved octets that is not all zero, naming the
// first non-zero octet.
func zeros(layout, field string, b []byte, from, to int) error {
	for i := from; i <= to; i++ {
		if b[i] != 0 {
			return reserved(layout, fmt.Sprintf("%s (octets %d..%d)", field, from, to), i, uint64(b[i]))
		}
	}
	return nil
}

func short(layout string, n, want int) error {
	return fmt.Errorf("hostif: %s: %d octets, an entry is %d; pass the whole entry (docs/device.md)", layout, n, want)
}

// Opcode is a work request's operation, in the SQ entry's octet 0 and the
// CQE's octet 14; the values are iwarp/verbs' Opcode (docs/device.md).
type Opcode uint8

const (
	OpWrite     Opcode = 0 // RDMA Write
	OpRead      Opcode = 1 // RDMA Read
	OpSend      Opcode = 2 // Send
	OpSendInv   Opcode = 3 // Send with Invalidate
	OpSendSE    Opcode = 4 // Send with Solicited Event
	OpSendSEInv Opcode = 5 // Send with Solicited Event and Invalidate
	OpRecv      Opcode = 6 // a receive completion (CQEs only)
)

var opNames = [...]string{"RDMA Write", "RDMA Read", "Send", "Send with Invalidate", "Send with SE",
	"Send with SE and Invalidate", "Receive"}

func (o Opcode) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("opcode %d (unknown)", uint8(o))
}

// InSQ reports whether the opcode may be posted to a send queue.
func (o Opcode) InSQ() bool { return o <= OpSendSEInv }

// Sizes of the entries in host memory.
const (
	SQESize      = 64
	RQESize      = 32
	CQESize      = 32
	EventSize    = 16
	ExcHeaderLen = 16
)

// SQE is a send queue entry (64 octets).
type SQE struct {
	Op             Opcode
	Signaled       bool // complete with a CQE even on success (flags bit 0)
	Fence          bool // start only when every Read before it has completed (flags bit 1)
	Length         uint32
	ID             uint64 // work request ID, returned in the CQE
	LKey           uint32 // local STag
	LocalTO        uint64
	RKey           uint32 // remote STag: a Write's sink, a Read's source
	InvalidateSTag uint32 // Send with Invalidate
	RemoteTO       uint64
}

const (
	sqeFlagSignaled = 1 << 0
	sqeFlagFence    = 1 << 1
)

// Encode writes the entry into b[:SQESize]. It refuses an opcode that is
// not a send queue's, which the device would complete with BAD_WQE.
func (e *SQE) Encode(b []byte) error {
	if len(b) < SQESize {
		return short("SQ entry", len(b), SQESize)
	}
	if !e.Op.InSQ() {
		return &FieldError{Layout: "SQ entry", Field: "opcode", Offset: 0, Value: uint64(e.Op),
			Reason: "not a send queue opcode (0..5)"}
	}
	clear(b[:SQESize])
	b[0] = byte(e.Op)
	if e.Signaled {
		b[1] |= sqeFlagSignaled
	}
	if e.Fence {
		b[1] |= sqeFlagFence
	}
	le.PutUint32(b[4:], e.Length)
	le.PutUint64(b[8:], e.ID)
	le.PutUint32(b[16:], e.LKey)
	le.PutUint64(b[24:], e.LocalTO)
	le.PutUint32(b[32:], e.RKey)
	le.PutUint32(b[36:], e.InvalidateSTag)
	le.PutUint64(b[40:], e.RemoteTO)
	return nil
}

// DecodeSQE reads a send queue entry, refusing an unknown opcode and any
// non-zero reserved field.
func DecodeSQE(b []byte) (SQE, error) {
	const l = "SQ entry"
	if len(b) < SQESize {
		return SQE{}, short(l, len(b), SQESize)
	}
	if !Opcode(b[0]).InSQ() {
		return SQE{}, &FieldError{Layout: l, Field: "opcode", Offset: 0, Value: uint64(b[0]),
			Reason: "not a send queue opcode (0..5)"}
	}
	if f := b[1] &^ (sqeFlagSignaled | sqeFlagFence); f != 0 {
		return SQE{}, reserved(l, "flags bits 7:2", 1, uint64(b[1]))
	}
	for _, r := range [][2]int{{2, 3}, {20, 23}, {48, 63}} {
		if err := zeros(l, "reserved", b, r[0], r[1]); err != nil {
			return SQE{}, err
		}
	}
	return SQE{
		Op: Opcode(b[0]), Signaled: b[1]&sqeFlagSignaled != 0, Fence: b[1]&sqeFlagFence != 0,
		Length: le.Uint32(b[4:]), ID: le.Uint64(b[8:]), LKey: le.Uint32(b[16:]), LocalTO: le.Uint64(b[24:]),
		RKey: le.Uint32(b[32:]), InvalidateSTag: le.Uint32(b[36:]), RemoteTO: le.Uint64(b[40:]),
	}, nil
}

func (e SQE) String() string {
	return fmt.Sprintf("SQE{%v id=%#x len=%d lkey=%#x lto=%#x rkey=%#x rto=%#x inv=%#x signaled=%v fence=%v}",
		e.Op, e.ID, e.Length, e.LKey, e.LocalTO, e.RKey, e.RemoteTO, e.InvalidateSTag, e.Signaled, e.Fence)
}

// RQE is a receive queue entry (32 octets).
type RQE struct {
	ID      uint64
	LKey    uint32
	Length  uint32
	LocalTO uint64
}

// Encode writes the entry into b[:RQESize].
func (e *RQE) Encode(b []byte) error {
	if len(b) < RQESize {
		return short("RQ entry", len(b), RQESize)
	}
	clear(b[:RQESize])
	le.PutUint64(b[0:], e.ID)
	le.PutUint32(b[8:], e.LKey)
	le.PutUint32(b[12:], e.Length)
	le.PutUint64(b[16:], e.LocalTO)
	return nil
}

// DecodeRQE reads a receive queue entry, refusing non-zero reserved octets.
func DecodeRQE(b []byte) (RQE, error) {
	const l = "RQ entry"
	if len(b) < RQESize {
		return RQE{}, short(l, len(b), RQESize)
	}
	if err := zeros(l, "reserved", b, 24, 31); err != nil {
		return RQE{}, err
	}
	return RQE{ID: le.Uint64(b[0:]), LKey: le.Uint32(b[8:]), Length: le.Uint32(b[12:]), LocalTO: le.Uint64(b[16:])}, nil
}

func (e RQE) String() string {
	return fmt.Sprintf("RQE{id=%#x lkey=%#x len=%d lto=%#x}", e.ID, e.LKey, e.Length, e.LocalTO)
}

// Status is a completion's status (CQE octet 15).
type Status uint8

const (
	StatusSuccess     Status = 0
	StatusFlushed     Status = 1 // the QP was in the error state
	StatusBadWQE      Status = 2 // unknown opcode or non-zero reserved field
	StatusLocalAccess Status = 3 // the local buffer failed its check
	StatusRemote      Status = 4 // the peer sent a Terminate (CQE octets 21..22)
	StatusProtocol    Status = 5 // the device found an error in the peer's stream and sent a Terminate
	StatusConn        Status = 6 // the connection failed: CRC or framing (RFC 5044 code 1)
)

var statusNames = [...]string{"SUCCESS", "FLUSHED", "BAD_WQE", "LOCAL_ACCESS", "REMOTE", "PROTOCOL", "CONN"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status %d (unknown)", uint8(s))
}

// CarriesTerminate reports whether a CQE of this status holds a
// Terminate's layer/etype and code (octets 21..22).
func (s Status) CarriesTerminate() bool { return s == StatusRemote || s == StatusProtocol }

// CQE is a completion queue entry (32 octets).
type CQE struct {
	ID              uint64
	Length          uint32 // octets received or read
	QPN             uint16
	Op              Opcode
	Status          Status
	InvalidatedSTag uint32 // the STag a Send with Invalidate invalidated (receives), or 0
	Solicited       bool   // flags bit 0
	Invalidated     bool   // flags bit 1
	TermLayerEType  uint8  // RFC 5040 4.8: layer [7:4], etype [3:0] (REMOTE, PROTOCOL)
	TermCode        uint8  // the Terminate's error code (REMOTE, PROTOCOL)
	Phase           bool   // octet 31 bit 0
}

const (
	cqeFlagSolicited   = 1 << 0
	cqeFlagInvalidated = 1 << 1
)

// Encode writes the entry into b[:CQESize]; the device writes octets 0..30
// and octet 31 in one DMA write, so the phase bit never shows before the
// rest.
func (e *CQE) Encode(b []byte) error {
	const l = "CQ entry"
	if len(b) < CQESize {
		return short(l, len(b), CQESize)
	}
	if e.Op > OpRecv {
		return &FieldError{Layout: l, Field: "opcode", Offset: 14, Value: uint64(e.Op), Reason: "unknown opcode (0..6)"}
	}
	if int(e.Status) >= len(statusNames) {
		return &FieldError{Layout: l, Field: "status", Offset: 15, Value: uint64(e.Status), Reason: "unknown status (0..6)"}
	}
	if !e.Status.CarriesTerminate() && (e.TermLayerEType != 0 || e.TermCode != 0) {
		return &FieldError{Layout: l, Field: "Terminate layer/etype and code", Offset: 21,
			Value: uint64(e.TermLayerEType)<<8 | uint64(e.TermCode), Reason: "only REMOTE and PROTOCOL carry a Terminate"}
	}
	clear(b[:CQESize])
	le.PutUint64(b[0:], e.ID)
	le.PutUint32(b[8:], e.Length)
	le.PutUint16(b[12:], e.QPN)
	b[14] = byte(e.Op)
	b[15] = byte(e.Status)
	le.PutUint32(b[16:], e.InvalidatedSTag)
	if e.Solicited {
		b[20] |= cqeFlagSolicited
	}
	if e.Invalidated {
		b[20] |= cqeFlagInvalidated
	}
	b[21] = e.TermLayerEType
	b[22] = e.TermCode
	if e.Phase {
		b[31] = 1
	}
	return nil
}

// DecodeCQE reads a completion queue entry.
func DecodeCQE(b []byte) (CQE, error) {
	const l = "CQ entry"
	if len(b) < CQESize {
		return CQE{}, short(l, len(b), CQESize)
	}
	if b[14] > byte(OpRecv) {
		return CQE{}, &FieldError{Layout: l, Field: "opcode", Offset: 14, Value: uint64(b[14]), Reason: "unknown opcode (0..6)"}
	}
	if int(b[15]) >= len(statusNames) {
		return CQE{}, &FieldError{Layout: l, Field: "status", Offset: 15, Value: uint64(b[15]), Reason: "unknown status (0..6)"}
	}
	st := Status(b[15])
	if b[20]&^(cqeFlagSolicited|cqeFlagInvalidated) != 0 {
		return CQE{}, reserved(l, "flags bits 7:2", 20, uint64(b[20]))
	}
	if !st.CarriesTerminate() {
		if err := zeros(l, "Terminate layer/etype and code (status "+st.String()+")", b, 21, 22); err != nil {
			return CQE{}, err
		}
	}
	if err := zeros(l, "reserved", b, 23, 30); err != nil {
		return CQE{}, err
	}
	if b[31]&^1 != 0 {
		return CQE{}, reserved(l, "octet 31 bits 7:1", 31, uint64(b[31]))
	}
	return CQE{
		ID: le.Uint64(b[0:]), Length: le.Uint32(b[8:]), QPN: le.Uint16(b[12:]), Op: Opcode(b[14]), Status: st,
		InvalidatedSTag: le.Uint32(b[16:]), Solicited: b[20]&cqeFlagSolicited != 0,
		Invalidated: b[20]&cqeFlagInvalidated != 0, TermLayerEType: b[21], TermCode: b[22], Phase: b[31]&1 != 0,
	}, nil
}

func (e CQE) String() string {
	s := fmt.Sprintf("CQE{qp %d %v %v id=%#x len=%d", e.QPN, e.Op, e.Status, e.ID, e.Length)
	if e.Solicited {
		s += " solicited"
	}
	if e.Invalidated {
		s += fmt.Sprintf(" invalidated=%#x", e.InvalidatedSTag)
	}
	if e.Status.CarriesTerminate() {
		s += fmt.Sprintf(" terminate layer/etype=%#02x code=%#02x", e.TermLayerEType, e.TermCode)
	}
	return s + fmt.Sprintf(" phase=%d}", b2i(e.Phase))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Phase is the phase bit of the entries written on the pass of a ring of
// 2^log2 entries that free-running index idx (16 bits, docs/device.md
// "Rings") falls in: 1 on the first pass, 0 on the second, and so on. A
// consumer takes the entry at idx when its phase bit is Phase(idx, log2).
func Phase(idx uint16, log2 uint8) bool { return (uint32(idx)>>log2)&1 == 0 }

// EventType is an event's type (event octet 0).
type EventType uint8

const (
	EventQPError           EventType = 1
	EventTerminateReceived EventType = 2
	EventException         EventType = 3
	EventDoorbellBad       EventType = 4
	EventRingOverrun       EventType = 5
	EventCQOverrun         EventType = 6
	EventDMARefused        EventType = 7
)

var eventNames = [...]string{"", "QP_ERROR", "TERMINATE_RECEIVED", "EXCEPTION", "DOORBELL_BAD", "RING_OVERRUN",
	"CQ_OVERRUN", "DMA_REFUSED"}

func (t EventType) known() bool { return t >= EventQPError && t <= EventDMARefused }

func (t EventType) String() string {
	if t.known() {
		return eventNames[t]
	}
	return fmt.Sprintf("event type %d (unknown)", uint8(t))
}

// Doorbell kinds (DOORBELL_BAD's detail) and rings (RING_OVERRUN's).
const (
	DoorbellSQ uint8 = 0
	DoorbellRQ uint8 = 1
	DoorbellCQ uint8 = 2
)

// DMA_REFUSED's detail: what the refused access was for.
const (
	DMAForSQWQE     uint8  = 1
	DMAForRQWQE     uint8  = 2
	DMAForPayload   uint8  = 3
	DMAForPlacement uint8  = 4
	DMAForCQE       uint8  = 5
	DMAForEvent     uint8  = 6
	DMAForException uint8  = 7
	maxAddress56           = 1<<56 - 1
	NoIndex         uint16 = 0xffff // an event's index when no QP or CQ is concerned
)

// Event is an entry of the event ring (16 octets).
type Event struct {
	Type    EventType
	Detail  uint8  // by type (docs/device.md)
	Index   uint16 // qpn or cqn, NoIndex for none
	Value   uint32 // by type
	Address uint64 // DMA_REFUSED only; 56 bits
	Phase   bool
}

// eventRule says what a type may carry: the largest detail and value, and
// whether it has an address.
type eventRule struct {
	maxDetail uint8
	maxValue  uint32
	address   bool
}

var eventRules = map[EventType]eventRule{
	EventQPError:           {0xff, 0xff, false},
	EventTerminateReceived: {0xff, 0xff, false},
	EventException:         {5, 0xffff, false},
	EventDoorbellBad:       {DoorbellCQ, 0xffffffff, false},
	EventRingOverrun:       {DoorbellRQ, 0xffff, false},
	EventCQOverrun:         {0, 0, false},
	EventDMARefused:        {DMAForException, 0xffffffff, true},
}

func (e *Event) check() error {
	const l = "event"
	r, ok := eventRules[e.Type]
	if !ok {
		return &FieldError{Layout: l, Field: "type", Offset: 0, Value: uint64(e.Type), Reason: "unknown event type (1..7)"}
	}
	if e.Detail > r.maxDetail {
		return &FieldError{Layout: l, Field: "detail of " + e.Type.String(), Offset: 1, Value: uint64(e.Detail),
			Reason: fmt.Sprintf("above %d, the largest this type defines", r.maxDetail)}
	}
	if e.Type == EventException && e.Detail == 0 {
		return &FieldError{Layout: l, Field: "detail of EXCEPTION (reason)", Offset: 1, Value: 0,
			Reason: "reasons are 1..5"}
	}
	if e.Type == EventDMARefused && e.Detail == 0 {
		return &FieldError{Layout: l, Field: "detail of DMA_REFUSED (what for)", Offset: 1, Value: 0,
			Reason: "purposes are 1..7"}
	}
	if e.Value > r.maxValue {
		return &FieldError{Layout: l, Field: "value of " + e.Type.String(), Offset: 4, Value: uint64(e.Value),
			Reason: fmt.Sprintf("above %#x, the largest this type defines", r.maxValue)}
	}
	if !r.address && e.Address != 0 {
		// Name the first non-zero octet of the address field.
		return reserved(l, "address (only DMA_REFUSED has one)", 8+bits.TrailingZeros64(e.Address)/8, e.Address)
	}
	if e.Address > maxAddress56 {
		return &FieldError{Layout: l, Field: "address", Offset: 8, Value: e.Address, Reason: "wider than 56 bits"}
	}
	return nil
}

// Encode writes the event into b[:EventSize].
func (e *Event) Encode(b []byte) error {
	if len(b) < EventSize {
		return short("event", len(b), EventSize)
	}
	if err := e.check(); err != nil {
		return err
	}
	clear(b[:EventSize])
	b[0] = byte(e.Type)
	b[1] = e.Detail
	le.PutUint16(b[2:], e.Index)
	le.PutUint32(b[4:], e.Value)
	le.PutUint64(b[8:], e.Address) // octets 8..14; octet 15 is 0 (56 bits)
	if e.Phase {
		b[15] = 1
	}
	return nil
}

// DecodeEvent reads an event ring entry.
func DecodeEvent(b []byte) (Event, error) {
	const l = "event"
	if len(b) < EventSize {
		return Event{}, short(l, len(b), EventSize)
	}
	if b[15]&^1 != 0 {
		return Event{}, reserved(l, "octet 15 bits 7:1", 15, uint64(b[15]))
	}
	var a [8]byte
	copy(a[:7], b[8:15])
	e := Event{Type: EventType(b[0]), Detail: b[1], Index: le.Uint16(b[2:]), Value: le.Uint32(b[4:]),
		Address: le.Uint64(a[:]), Phase: b[15]&1 != 0}
	if err := e.check(); err != nil {
		return Event{}, err
	}
	return e, nil
}

func (e Event) String() string {
	s := fmt.Sprintf("Event{%v", e.Type)
	if e.Index != NoIndex {
		s += fmt.Sprintf(" index %d", e.Index)
	}
	s += fmt.Sprintf(" detail=%d value=%#x", e.Detail, e.Value)
	if e.Type == EventDMARefused {
		s += fmt.Sprintf(" address=%#x", e.Address)
	}
	return s + fmt.Sprintf(" phase=%d}", b2i(e.Phase))
}

// ExcReason is why rnic_rx passed a segment to the exception ring
// (mpa_rx's reason codes, the counters block's rx_exc_* counters).
type ExcReason uint8

const (
	ExcNotEnabled ExcReason = 1
	ExcInError    ExcReason = 2
	ExcOutOfOrder ExcReason = 3
	ExcDuplicate  ExcReason = 4
	ExcEmpty      ExcReason = 5
)

var excNames = [...]string{"", "not enabled", "in error", "out of order", "duplicate", "empty"}

func (r ExcReason) String() string {
	if r >= ExcNotEnabled && r <= ExcEmpty {
		return excNames[r]
	}
	return fmt.Sprintf("exception reason %d (unknown)", uint8(r))
}

// ExcHeader is the 16-octet header of an exception ring entry; the
// segment's octets follow it in the entry's buffer.
type ExcHeader struct {
	QPN    uint16
	Length uint16 // octets of the segment after the header
	Seq    uint32 // TCP sequence number of the segment's first octet
	Reason ExcReason
	Phase  bool
}

// Encode writes the header into b[:ExcHeaderLen].
func (h *ExcHeader) Encode(b []byte) error {
	const l = "exception entry"
	if len(b) < ExcHeaderLen {
		return short(l, len(b), ExcHeaderLen)
	}
	if h.Reason < ExcNotEnabled || h.Reason > ExcEmpty {
		return &FieldError{Layout: l, Field: "reason", Offset: 8, Value: uint64(h.Reason), Reason: "unknown reason (1..5)"}
	}
	clear(b[:ExcHeaderLen])
	le.PutUint16(b[0:], h.QPN)
	le.PutUint16(b[2:], h.Length)
	le.PutUint32(b[4:], h.Seq)
	b[8] = byte(h.Reason)
	if h.Phase {
		b[15] = 1
	}
	return nil
}

// DecodeExcHeader reads an exception ring entry's header. bufSize is the
// ring's buffer size: a length that does not fit the buffer is refused.
func DecodeExcHeader(b []byte, bufSize int) (ExcHeader, error) {
	const l = "exception entry"
	if len(b) < ExcHeaderLen {
		return ExcHeader{}, short(l, len(b), ExcHeaderLen)
	}
	r := ExcReason(b[8])
	if r < ExcNotEnabled || r > ExcEmpty {
		return ExcHeader{}, &FieldError{Layout: l, Field: "reason", Offset: 8, Value: uint64(r), Reason: "unknown reason (1..5)"}
	}
	if err := zeros(l, "reserved", b, 9, 14); err != nil {
		return ExcHeader{}, err
	}
	if b[15]&^1 != 0 {
		return ExcHeader{}, reserved(l, "octet 15 bits 7:1", 15, uint64(b[15]))
	}
	h := ExcHeader{QPN: le.Uint16(b[0:]), Length: le.Uint16(b[2:]), Seq: le.Uint32(b[4:]), Reason: r, Phase: b[15]&1 != 0}
	if int(h.Length) > bufSize-ExcHeaderLen {
		return ExcHeader{}, &FieldError{Layout: l, Field: "length", Offset: 2, Value: uint64(h.Length),
			Reason: fmt.Sprintf("more than the %d octets a %d-octet buffer holds after the header", bufSize-ExcHeaderLen, bufSize)}
	}
	return h, nil
}

func (h ExcHeader) String() string {
	return fmt.Sprintf("Exception{qp %d seq %d len %d %v phase=%d}", h.QPN, h.Seq, h.Length, h.Reason, b2i(h.Phase))
}
