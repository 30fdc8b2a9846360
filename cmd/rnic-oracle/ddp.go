package main

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/rdmap"
)

// The DDP/RDMAP transmit ops, for hw/rtl/ddp_tx.v: the DDP Segments
// (ULPDUs) the Go stack cuts one RDMAP message into, from the same fields
// the hardware's descriptor carries.
//
// The message is an rdmap.Message built field by field from the request,
// not through the New... constructors, so that every field the descriptor
// has reaches the Go stack's own checks (an Invalidate STag on a Send
// without Invalidate, for instance, is refused by Message.Header just as
// the hardware must refuse it). Its segments come from
// Message.AppendSegments, so every header octet is the Go stack's.

func init() {
	register("rdmap_segments",
		`DDP Segments of one RDMAP message: {opcode, stag?, to?, msn?, inv_stag?, payload | rr: {sink_stag, sink_to, size, src_stag, src_to}, mulpdu} -> {segments: [hex]} or {refused: "<Go error>"}`,
		opRDMAPSegments)
}

// readRequest is the body of an RDMA Read Request, as the descriptor's rr
// fields carry it.
type readRequest struct {
	SinkSTag *uint32 `json:"sink_stag"`
	SinkTO   *uint64 `json:"sink_to"`
	Size     *uint32 `json:"size"`
	SrcSTag  *uint32 `json:"src_stag"`
	SrcTO    *uint64 `json:"src_to"`
}

func (r *readRequest) body() (rdmap.ReadRequest, error) {
	if r.SinkSTag == nil || r.SinkTO == nil || r.Size == nil || r.SrcSTag == nil || r.SrcTO == nil {
		return rdmap.ReadRequest{}, errors.New(`"rr" needs sink_stag, sink_to, size, src_stag and src_to`)
	}
	return rdmap.ReadRequest{
		SinkSTag:   *r.SinkSTag,
		SinkTO:     *r.SinkTO,
		Size:       *r.Size,
		SourceSTag: *r.SrcSTag,
		SourceTO:   *r.SrcTO,
	}, nil
}

// segmentsReply is the answer: the segments, or why the Go stack refused
// the message. A refusal is an answer, not a failed request: the hardware
// must refuse the same descriptor.
type segmentsReply struct {
	Segments []string `json:"segments,omitempty"`
	Refused  string   `json:"refused,omitempty"`
}

func opRDMAPSegments(params []byte) (any, error) {
	var p struct {
		Opcode  *uint8       `json:"opcode"`
		STag    uint32       `json:"stag"`
		TO      uint64       `json:"to"`
		MSN     uint32       `json:"msn"`
		InvSTag uint32       `json:"inv_stag"`
		Payload *string      `json:"payload"`
		RR      *readRequest `json:"rr"`
		MULPDU  *int         `json:"mulpdu"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Opcode == nil {
		return nil, errors.New(`missing field "opcode"`)
	}
	if p.MULPDU == nil {
		return nil, errors.New(`missing field "mulpdu"`)
	}
	op := rdmap.Opcode(*p.Opcode)
	m := rdmap.Message{Opcode: op, STag: p.STag, TO: p.TO, MSN: p.MSN, InvalidateSTag: p.InvSTag}
	// The Read Request's payload is its 28-octet body, which the hardware
	// builds from the descriptor; every other message's comes from the
	// payload stream.
	if op == rdmap.OpReadRequest {
		if p.Payload != nil {
			return nil, errors.New(`a Read Request takes "rr", not "payload"`)
		}
		if p.RR == nil {
			return nil, errors.New(`missing field "rr"`)
		}
		rr, err := p.RR.body()
		if err != nil {
			return nil, err
		}
		m.Payload = rr.Append(nil)
	} else {
		if p.RR != nil {
			return nil, fmt.Errorf(`"rr" is for a Read Request, not %v`, op)
		}
		payload, err := decodeHex("payload", p.Payload)
		if err != nil {
			return nil, err
		}
		m.Payload = payload
	}
	segs, err := m.AppendSegments(nil, *p.MULPDU)
	if err != nil {
		return segmentsReply{Refused: err.Error()}, nil
	}
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = hex.EncodeToString(s)
	}
	return segmentsReply{Segments: out}, nil
}
