package hostif

import "fmt"

// AdminOpcode is an admin command's opcode (CMD [7:0], docs/device.md
// "Admin commands").
type AdminOpcode uint8

const (
	OpCreateCQ     AdminOpcode = 0x01
	OpDestroyCQ    AdminOpcode = 0x02
	OpCreateQP     AdminOpcode = 0x03
	OpQPRTS        AdminOpcode = 0x04
	OpQPDrain      AdminOpcode = 0x05
	OpDestroyQP    AdminOpcode = 0x06
	OpMRWrite      AdminOpcode = 0x07
	OpMRInvalidate AdminOpcode = 0x08
	OpEventRing    AdminOpcode = 0x09
	OpDMAWindow    AdminOpcode = 0x0a
)

var adminNames = map[AdminOpcode]string{
	OpCreateCQ: "CREATE_CQ", OpDestroyCQ: "DESTROY_CQ", OpCreateQP: "CREATE_QP", OpQPRTS: "QP_RTS",
	OpQPDrain: "QP_DRAIN", OpDestroyQP: "DESTROY_QP", OpMRWrite: "MR_WRITE", OpMRInvalidate: "MR_INVALIDATE",
	OpEventRing: "EVENT_RING", OpDMAWindow: "DMA_WINDOW",
}

func (o AdminOpcode) String() string {
	if n, ok := adminNames[o]; ok {
		return n
	}
	return fmt.Sprintf("admin opcode %#02x (unknown)", uint8(o))
}

// AdminStatus is STATUS.CODE: the result of the last admin command.
type AdminStatus uint8

const (
	AdminOK          AdminStatus = 0
	AdminBadOpcode   AdminStatus = 1
	AdminBadIndex    AdminStatus = 2 // qpn, cqn, MR index, vector or slot out of range
	AdminBadState    AdminStatus = 3 // e.g. QP_RTS on a QP not created, CREATE_QP on one that exists
	AdminBadArg      AdminStatus = 4 // a ring size out of range, a misaligned ring, unknown access bits, a non-zero unused word
	AdminOutOfWindow AdminStatus = 5 // a ring or MR outside every DMA window
)

var adminStatusNames = [...]string{"OK", "BAD_OPCODE", "BAD_INDEX", "BAD_STATE", "BAD_ARG", "OUT_OF_WINDOW"}

func (s AdminStatus) String() string {
	if int(s) < len(adminStatusNames) {
		return adminStatusNames[s]
	}
	return fmt.Sprintf("admin status %d (unknown)", uint8(s))
}

// Args are the mailbox's eight argument words, ARG0..ARG7.
type Args [8]uint32

// Command is an admin command as typed values: its opcode and its
// argument words (every word a command does not use is 0).
type Command interface {
	Opcode() AdminOpcode
	// Args packs the command into the argument words, refusing a value
	// that does not fit its field.
	Args() (Args, error)
	String() string
}

// MR access bits (MR_WRITE ARG0 [31:24]).
const (
	AccessLocalRead   uint8 = 1 << 0
	AccessLocalWrite  uint8 = 1 << 1
	AccessRemoteRead  uint8 = 1 << 2
	AccessRemoteWrite uint8 = 1 << 3
	accessKnown             = AccessLocalRead | AccessLocalWrite | AccessRemoteRead | AccessRemoteWrite
)

// NotBound is MR_WRITE's bound qpn for a region bound to no QP.
const NotBound uint16 = 0xffff

// QP_RTS flags (ARG1 [19:16]): RFC 5044 7.1.2's negotiated M and C of each
// direction.
const (
	RTSMarkersTx uint8 = 1 << 0
	RTSMarkersRx uint8 = 1 << 1
	RTSCRCTx     uint8 = 1 << 2
	RTSCRCRx     uint8 = 1 << 3
)

func lo(v uint64) uint32      { return uint32(v) }
func hi(v uint64) uint32      { return uint32(v >> 32) }
func join(l, h uint32) uint64 { return uint64(h)<<32 | uint64(l) }
func argErr(op AdminOpcode, word int, field string, v uint64, why string) error {
	return &FieldError{Layout: op.String() + " arguments", Field: field, Offset: word, Word: true, Value: v, Reason: why}
}

// CreateCQ (0x01): a completion queue on a ring of 2^Log2 CQEs.
type CreateCQ struct {
	CQN    uint32
	Ring   uint64 // device address of the ring
	Log2   uint32 // log2 of the number of entries
	Vector uint32
}

func (CreateCQ) Opcode() AdminOpcode { return OpCreateCQ }
func (c CreateCQ) Args() (Args, error) {
	return Args{c.CQN, lo(c.Ring), hi(c.Ring), c.Log2, c.Vector}, nil
}
func (c CreateCQ) String() string {
	return fmt.Sprintf("CREATE_CQ cq %d ring %#x 2^%d entries vector %d", c.CQN, c.Ring, c.Log2, c.Vector)
}

// DestroyCQ (0x02).
type DestroyCQ struct{ CQN uint32 }

func (DestroyCQ) Opcode() AdminOpcode   { return OpDestroyCQ }
func (c DestroyCQ) Args() (Args, error) { return Args{c.CQN}, nil }
func (c DestroyCQ) String() string      { return fmt.Sprintf("DESTROY_CQ cq %d", c.CQN) }

// CreateQP (0x03): a QP with its two rings and the CQs they complete into.
type CreateQP struct {
	QPN            uint32
	PD             uint32
	SQRing, RQRing uint64
	SQLog2, RQLog2 uint8
	SendCQ, RecvCQ uint16
}

func (CreateQP) Opcode() AdminOpcode { return OpCreateQP }
func (c CreateQP) Args() (Args, error) {
	return Args{c.QPN, c.PD, lo(c.SQRing), hi(c.SQRing), lo(c.RQRing), hi(c.RQRing),
		uint32(c.SQLog2) | uint32(c.RQLog2)<<8, uint32(c.SendCQ) | uint32(c.RecvCQ)<<16}, nil
}
func (c CreateQP) String() string {
	return fmt.Sprintf("CREATE_QP qp %d pd %d sq %#x 2^%d rq %#x 2^%d send cq %d recv cq %d",
		c.QPN, c.PD, c.SQRing, c.SQLog2, c.RQRing, c.RQLog2, c.SendCQ, c.RecvCQ)
}

// QPRTS (0x04): the connection's Full Operation parameters (RFC 5044
// 7.1.2); from then on the device frames, checks and places its traffic.
type QPRTS struct {
	QPN                    uint16
	IRD, ORD               uint8
	MULPDU                 uint16
	Flags                  uint8 // RTSMarkersTx | RTSMarkersRx | RTSCRCTx | RTSCRCRx
	TxMarkerBase           uint32
	RxMarkerBase           uint32
	TxSeq, RxSeq           uint32 // next TCP sequence numbers
	RxMSNSend, RxMSNReadRq uint32 // next MSN expected on queues 0 and 1 (RFC 5041 4.3)
}

func (QPRTS) Opcode() AdminOpcode { return OpQPRTS }
func (c QPRTS) Args() (Args, error) {
	if c.Flags > 0xf {
		return Args{}, argErr(OpQPRTS, 1, "flags [19:16]", uint64(c.Flags), "only bits 0..3 are defined")
	}
	return Args{uint32(c.QPN) | uint32(c.IRD)<<16 | uint32(c.ORD)<<24, uint32(c.MULPDU) | uint32(c.Flags)<<16,
		c.TxMarkerBase, c.RxMarkerBase, c.TxSeq, c.RxSeq, c.RxMSNSend, c.RxMSNReadRq}, nil
}
func (c QPRTS) String() string {
	return fmt.Sprintf("QP_RTS qp %d ird %d ord %d mulpdu %d flags %#x marker base tx %d rx %d seq tx %d rx %d msn send %d read %d",
		c.QPN, c.IRD, c.ORD, c.MULPDU, c.Flags, c.TxMarkerBase, c.RxMarkerBase, c.TxSeq, c.RxSeq, c.RxMSNSend, c.RxMSNReadRq)
}

// QPDrain (0x05). Its outputs are DrainResult.
type QPDrain struct{ QPN uint32 }

func (QPDrain) Opcode() AdminOpcode   { return OpQPDrain }
func (c QPDrain) Args() (Args, error) { return Args{c.QPN}, nil }
func (c QPDrain) String() string      { return fmt.Sprintf("QP_DRAIN qp %d", c.QPN) }

// DrainResult is QP_DRAIN's output: how far the device consumed each ring.
type DrainResult struct{ SQIndex, RQIndex uint16 }

// Args is the output words as the device writes them.
func (r DrainResult) Args() Args { return Args{uint32(r.SQIndex), uint32(r.RQIndex)} }

// DecodeDrainResult reads QP_DRAIN's outputs.
func DecodeDrainResult(a Args) (DrainResult, error) {
	for i, w := range a {
		if i < 2 && w>>16 != 0 {
			return DrainResult{}, argErr(OpQPDrain, i, "output ring index [31:16]", uint64(w), "indices are 16 bits")
		}
	}
	return DrainResult{SQIndex: uint16(a[0]), RQIndex: uint16(a[1])}, nil
}

// DestroyQP (0x06).
type DestroyQP struct{ QPN uint32 }

func (DestroyQP) Opcode() AdminOpcode   { return OpDestroyQP }
func (c DestroyQP) Args() (Args, error) { return Args{c.QPN}, nil }
func (c DestroyQP) String() string      { return fmt.Sprintf("DESTROY_QP qp %d", c.QPN) }

// MRWrite (0x07): an MR table entry. STag = Index << 8 | Key.
type MRWrite struct {
	Index    uint16
	Key      uint8
	Access   uint8 // Access* bits
	PD       uint16
	BoundQPN uint16 // NotBound for none
	BaseTO   uint64
	Length   uint64
	Addr     uint64 // device address of the region's first octet
}

func (MRWrite) Opcode() AdminOpcode { return OpMRWrite }
func (c MRWrite) Args() (Args, error) {
	if c.Access&^accessKnown != 0 {
		return Args{}, argErr(OpMRWrite, 0, "access [31:24]", uint64(c.Access), "unknown access bits (only 0..3)")
	}
	return Args{uint32(c.Index) | uint32(c.Key)<<16 | uint32(c.Access)<<24, uint32(c.PD) | uint32(c.BoundQPN)<<16,
		lo(c.BaseTO), hi(c.BaseTO), lo(c.Length), hi(c.Length), lo(c.Addr), hi(c.Addr)}, nil
}

// STag is the region's STag.
func (c MRWrite) STag() uint32 { return uint32(c.Index)<<8 | uint32(c.Key) }
func (c MRWrite) String() string {
	b := "unbound"
	if c.BoundQPN != NotBound {
		b = fmt.Sprintf("bound to qp %d", c.BoundQPN)
	}
	return fmt.Sprintf("MR_WRITE stag %#x (index %d key %#02x) access %#x pd %d %s to %#x len %d addr %#x",
		c.STag(), c.Index, c.Key, c.Access, c.PD, b, c.BaseTO, c.Length, c.Addr)
}

// MRInvalidate (0x08).
type MRInvalidate struct{ Index uint32 }

func (MRInvalidate) Opcode() AdminOpcode   { return OpMRInvalidate }
func (c MRInvalidate) Args() (Args, error) { return Args{c.Index}, nil }
func (c MRInvalidate) String() string      { return fmt.Sprintf("MR_INVALIDATE index %d", c.Index) }

// EventRing (0x09): the event ring and the exception ring.
type EventRing struct {
	Ring       uint64
	Log2       uint8
	ExcRing    uint64
	ExcLog2    uint8
	ExcBufLog2 uint8 // log2 of each exception buffer's size
}

func (EventRing) Opcode() AdminOpcode { return OpEventRing }
func (c EventRing) Args() (Args, error) {
	return Args{lo(c.Ring), hi(c.Ring), uint32(c.Log2) | uint32(c.ExcLog2)<<8 | uint32(c.ExcBufLog2)<<16,
		lo(c.ExcRing), hi(c.ExcRing)}, nil
}
func (c EventRing) String() string {
	return fmt.Sprintf("EVENT_RING events %#x 2^%d exceptions %#x 2^%d of 2^%d octets",
		c.Ring, c.Log2, c.ExcRing, c.ExcLog2, c.ExcBufLog2)
}

// DMAWindow (0x0a): window Slot covers [Addr, Addr+Length); Length 0 clears it.
type DMAWindow struct {
	Slot   uint32
	Addr   uint64
	Length uint64
}

func (DMAWindow) Opcode() AdminOpcode { return OpDMAWindow }
func (c DMAWindow) Args() (Args, error) {
	return Args{c.Slot, lo(c.Addr), hi(c.Addr), lo(c.Length), hi(c.Length)}, nil
}
func (c DMAWindow) String() string {
	if c.Length == 0 {
		return fmt.Sprintf("DMA_WINDOW slot %d cleared", c.Slot)
	}
	return fmt.Sprintf("DMA_WINDOW slot %d [%#x, %#x)", c.Slot, c.Addr, c.Addr+c.Length)
}

// unused refuses non-zero words from `from` on, and non-zero bits outside
// mask in the words masks lists.
func unused(op AdminOpcode, a Args, from int, masks map[int]uint32) error {
	for i := range a {
		if i >= from && a[i] != 0 {
			return argErr(op, i, "unused word", uint64(a[i]), "must be zero")
		}
		if m, ok := masks[i]; ok && a[i]&^m != 0 {
			return argErr(op, i, fmt.Sprintf("bits outside %#08x", m), uint64(a[i]), "unused bits must be zero")
		}
	}
	return nil
}

// DecodeCommand reads the command the driver wrote: the opcode from CMD
// and the eight argument words. It refuses an unknown opcode (the device
// answers BAD_OPCODE: the error is an *UnknownOpcodeError) and a non-zero
// unused word, bit or access bit (BAD_ARG: a *FieldError). Ranges that
// depend on the device (how many QPs, CQs, vectors) are the device's to
// check, not this package's.
func DecodeCommand(op AdminOpcode, a Args) (Command, error) {
	switch op {
	case OpCreateCQ:
		if err := unused(op, a, 5, nil); err != nil {
			return nil, err
		}
		return CreateCQ{CQN: a[0], Ring: join(a[1], a[2]), Log2: a[3], Vector: a[4]}, nil
	case OpDestroyCQ:
		if err := unused(op, a, 1, nil); err != nil {
			return nil, err
		}
		return DestroyCQ{CQN: a[0]}, nil
	case OpCreateQP:
		if err := unused(op, a, 8, map[int]uint32{6: 0xffff}); err != nil {
			return nil, err
		}
		return CreateQP{QPN: a[0], PD: a[1], SQRing: join(a[2], a[3]), RQRing: join(a[4], a[5]),
			SQLog2: uint8(a[6]), RQLog2: uint8(a[6] >> 8), SendCQ: uint16(a[7]), RecvCQ: uint16(a[7] >> 16)}, nil
	case OpQPRTS:
		if err := unused(op, a, 8, map[int]uint32{1: 0xfffff}); err != nil {
			return nil, err
		}
		return QPRTS{QPN: uint16(a[0]), IRD: uint8(a[0] >> 16), ORD: uint8(a[0] >> 24), MULPDU: uint16(a[1]),
			Flags: uint8(a[1] >> 16), TxMarkerBase: a[2], RxMarkerBase: a[3], TxSeq: a[4], RxSeq: a[5],
			RxMSNSend: a[6], RxMSNReadRq: a[7]}, nil
	case OpQPDrain:
		if err := unused(op, a, 1, nil); err != nil {
			return nil, err
		}
		return QPDrain{QPN: a[0]}, nil
	case OpDestroyQP:
		if err := unused(op, a, 1, nil); err != nil {
			return nil, err
		}
		return DestroyQP{QPN: a[0]}, nil
	case OpMRWrite:
		if acc := uint8(a[0] >> 24); acc&^accessKnown != 0 {
			return nil, argErr(op, 0, "access [31:24]", uint64(acc), "unknown access bits (only 0..3)")
		}
		return MRWrite{Index: uint16(a[0]), Key: uint8(a[0] >> 16), Access: uint8(a[0] >> 24), PD: uint16(a[1]),
			BoundQPN: uint16(a[1] >> 16), BaseTO: join(a[2], a[3]), Length: join(a[4], a[5]), Addr: join(a[6], a[7])}, nil
	case OpMRInvalidate:
		if err := unused(op, a, 1, nil); err != nil {
			return nil, err
		}
		return MRInvalidate{Index: a[0]}, nil
	case OpEventRing:
		if err := unused(op, a, 5, map[int]uint32{2: 0xffffff}); err != nil {
			return nil, err
		}
		return EventRing{Ring: join(a[0], a[1]), Log2: uint8(a[2]), ExcLog2: uint8(a[2] >> 8),
			ExcBufLog2: uint8(a[2] >> 16), ExcRing: join(a[3], a[4])}, nil
	case OpDMAWindow:
		if err := unused(op, a, 5, nil); err != nil {
			return nil, err
		}
		return DMAWindow{Slot: a[0], Addr: join(a[1], a[2]), Length: join(a[3], a[4])}, nil
	}
	return nil, &UnknownOpcodeError{Op: op}
}

// UnknownOpcodeError is a CMD write with an opcode docs/device.md does not
// define (status BAD_OPCODE).
type UnknownOpcodeError struct{ Op AdminOpcode }

func (e *UnknownOpcodeError) Error() string {
	return fmt.Sprintf("hostif: admin opcode %#02x is not a command (0x01..0x0a, docs/device.md); "+
		"the driver and the device disagree on the command set: use a driver built for this device", uint8(e.Op))
}
