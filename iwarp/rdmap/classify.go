package rdmap

import (
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// Segment is a received DDP Segment classified as part of an RDMAP
// message.
type Segment struct {
	Header  ddp.Header
	Opcode  Opcode
	Payload []byte // sub-slice of the segment
}

// PlacementAccess is the access right the Data Sink must find on the STag
// of a tagged segment with this opcode: RemoteWrite for RDMA Write and
// RDMA Read Response (iWARP requires remote write access on the sink
// buffer of an RDMA Read too). It is zero for untagged opcodes.
func (o Opcode) PlacementAccess() ddp.Access {
	if o.Tagged() {
		return ddp.RemoteWrite
	}
	return 0
}

// Classify parses a received DDP Segment and checks its RDMAP fields,
// before the segment reaches the Data Sink. Errors are *Error, ready for a
// Terminate, with the offending DDP header and segment length:
//
//   - too short for its DDP header: see ErrorFrom (*ddp.ShortHeaderError);
//   - DV not 1: DDP, Invalid DDP version (tagged 0x04, untagged 0x06);
//   - RV not 1: RDMAP Remote Operation Error, Invalid RDMAP version;
//   - an opcode above 7, a tagged opcode in an untagged segment or the
//     reverse, or an untagged opcode on another RDMAP queue (a Send on QN
//     1, say): RDMAP Remote Operation Error, Unexpected OpCode;
//   - an untagged segment on a QN above 2, which no RDMAP opcode uses:
//     DDP, Invalid QN.
//
// The DDP checks come first because DDP processes its header before
// RDMAP sees the segment; the QN check comes last because on a queue
// RDMAP has, a mismatch is the opcode's fault, not the QN's.
func Classify(seg []byte) (Segment, error) {
	h, payload, err := ddp.ParseHeader(seg)
	if err != nil {
		return Segment{}, ErrorFrom(err)
	}
	op, err := ClassifyHeader(&h)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.SegmentLen = len(seg)
		}
		return Segment{}, err
	}
	return Segment{Header: h, Opcode: op, Payload: payload}, nil
}

// ClassifyHeader runs the checks of Classify on a parsed DDP header and
// returns its opcode. Errors carry the header but not the segment length.
func ClassifyHeader(h *ddp.Header) (Opcode, error) {
	fail := func(e *Error) (Opcode, error) {
		e.DDPHeader = h.Append(nil)
		return 0, e
	}
	if h.DV != ddp.Version {
		if h.Tagged {
			return fail(&Error{Layer: LayerDDP, Type: ETypeTaggedBuffer, Code: CodeDDPTaggedInvalidVersion, Detail: fmt.Sprintf("DV %d", h.DV)})
		}
		return fail(&Error{Layer: LayerDDP, Type: ETypeUntaggedBuffer, Code: CodeDDPUntaggedInvalidVersion, Detail: fmt.Sprintf("DV %d", h.DV)})
	}
	rv, op := ParseControl(h.ULPCtrl)
	if rv != Version {
		return fail(rdmapError(ETypeRemoteOperation, CodeInvalidVersion, "RV %d", rv))
	}
	if !op.Valid() {
		return fail(rdmapError(ETypeRemoteOperation, CodeUnexpectedOpcode, "opcode %#x", uint8(op)))
	}
	if op.Tagged() != h.Tagged {
		model := "untagged"
		if h.Tagged {
			model = "tagged"
		}
		return fail(rdmapError(ETypeRemoteOperation, CodeUnexpectedOpcode, "%v in a %s segment", op, model))
	}
	if !h.Tagged {
		if h.QN >= NumQueues {
			return fail(&Error{Layer: LayerDDP, Type: ETypeUntaggedBuffer, Code: CodeDDPInvalidQN, Detail: fmt.Sprintf("QN %d", h.QN)})
		}
		if h.QN != op.QN() {
			return fail(rdmapError(ETypeRemoteOperation, CodeUnexpectedOpcode, "%v on QN %d", op, h.QN))
		}
	}
	return op, nil
}
