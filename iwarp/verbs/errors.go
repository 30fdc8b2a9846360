package verbs

import (
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// RDMAP errors that only the queue pair can detect, because they depend on
// its state: the outstanding Reads.

// unexpectedReadResponse reports a Read Response that does not continue the
// oldest outstanding Read Request (RFC 5040 5.2.1): RDMAP Remote Operation
// Error, Unexpected OpCode when no Read is outstanding; otherwise a Remote
// Protection Error on the sink STag, since the segment aims at a buffer the
// request did not name.
func unexpectedReadResponse(h *ddp.Header, ulpdu []byte, pr *pendingRead) *rdmap.Error {
	e := &rdmap.Error{Layer: rdmap.LayerRDMAP, SegmentLen: len(ulpdu), DDPHeader: ulpdu[:h.Len()]}
	switch {
	case pr == nil:
		e.Type, e.Code = rdmap.ETypeRemoteOperation, rdmap.CodeUnexpectedOpcode
		e.Detail = "a Read Response with no RDMA Read Request outstanding"
	case h.STag != pr.stag:
		e.Type, e.Code = rdmap.ETypeRemoteProtection, rdmap.CodeInvalidSTag
		e.Detail = fmt.Sprintf("Read Response to STag %#08x, the oldest Read Request named %#08x", h.STag, pr.stag)
	default:
		e.Type, e.Code = rdmap.ETypeRemoteProtection, rdmap.CodeBaseBounds
		e.Detail = fmt.Sprintf("Read Response at TO %#x, expected %#x within %d octets", h.TO, pr.to+pr.got, pr.len)
	}
	return e
}
