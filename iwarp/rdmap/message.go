package rdmap

import (
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// Message is one RDMAP message to send, before segmentation. Build it with
// the New... functions; Segments cuts it into DDP Segments.
type Message struct {
	Opcode Opcode

	// Tagged messages (RDMA Write, Read Response): the Data Sink's STag and
	// the TO of the first payload octet.
	STag uint32
	TO   uint64

	// Untagged messages: the MSN on the opcode's queue (each queue counts
	// from 1 on its own) and, for Send with Invalidate and Send with SE and
	// Invalidate, the STag the Data Sink is to invalidate.
	MSN            uint32
	InvalidateSTag uint32

	// The message's payload: the data of a Write, Read Response or Send,
	// the 28-octet Read Request header, the Terminate payload.
	Payload []byte
}

// NewWrite returns an RDMA Write of data to TO to of the Data Sink's STag.
func NewWrite(stag uint32, to uint64, data []byte) Message {
	return Message{Opcode: OpWrite, STag: stag, TO: to, Payload: data}
}

// NewReadRequest returns an RDMA Read Request with MSN msn on QN 1.
func NewReadRequest(msn uint32, rr ReadRequest) Message {
	return Message{Opcode: OpReadRequest, MSN: msn, Payload: rr.Append(make([]byte, 0, ReadRequestLen))}
}

// NewReadResponse returns the RDMA Read Response that carries data to the
// Data Sink STag and TO named in the Read Request.
func NewReadResponse(sinkSTag uint32, sinkTO uint64, data []byte) Message {
	return Message{Opcode: OpReadResponse, STag: sinkSTag, TO: sinkTO, Payload: data}
}

// NewSend returns a Send with MSN msn on QN 0.
func NewSend(msn uint32, data []byte) Message {
	return Message{Opcode: OpSend, MSN: msn, Payload: data}
}

// NewSendInvalidate returns a Send with Invalidate of stag.
func NewSendInvalidate(msn, stag uint32, data []byte) Message {
	return Message{Opcode: OpSendInvalidate, MSN: msn, InvalidateSTag: stag, Payload: data}
}

// NewSendSE returns a Send with Solicited Event.
func NewSendSE(msn uint32, data []byte) Message {
	return Message{Opcode: OpSendSE, MSN: msn, Payload: data}
}

// NewSendSEInvalidate returns a Send with Solicited Event and Invalidate
// of stag.
func NewSendSEInvalidate(msn, stag uint32, data []byte) Message {
	return Message{Opcode: OpSendSEInvalidate, MSN: msn, InvalidateSTag: stag, Payload: data}
}

// NewTerminate returns a Terminate with MSN msn on QN 2.
func NewTerminate(msn uint32, t *Terminate) (Message, error) {
	p, err := t.Append(make([]byte, 0, t.Len()))
	if err != nil {
		return Message{}, err
	}
	return Message{Opcode: OpTerminate, MSN: msn, Payload: p}, nil
}

// Header returns the DDP header of the message's first segment: DV 1, the
// RDMAP control octet as ULPCtrl, and STag and TO (tagged) or the
// opcode's QN, MSN, MO 0 and, for the Invalidate variants, the Invalidate
// STag in RsvdULP[8:39] (untagged).
func (m *Message) Header() (ddp.Header, error) {
	if !m.Opcode.Valid() {
		return ddp.Header{}, fmt.Errorf("rdmap: cannot send opcode %#x", uint8(m.Opcode))
	}
	h := ddp.Header{Tagged: m.Opcode.Tagged(), DV: ddp.Version, ULPCtrl: Control(m.Opcode)}
	if h.Tagged {
		h.STag, h.TO = m.STag, m.TO
		return h, nil
	}
	if m.InvalidateSTag != 0 && !m.Opcode.Invalidates() {
		// RsvdULP[8:39] is reserved, zero on transmit, for every other
		// untagged message.
		return ddp.Header{}, fmt.Errorf("rdmap: %v cannot carry an Invalidate STag", m.Opcode)
	}
	h.ULPInfo = m.InvalidateSTag
	h.QN, h.MSN = m.Opcode.QN(), m.MSN
	return h, nil
}

// Segments returns the segmenter that cuts the message into DDP Segments
// of at most mulpdu octets. A Read Request must be exactly 28 octets and a
// Terminate a well-formed Terminate payload, and both must fit in a single
// segment (they are at most 46 and 70 octets; MPA never offers a MULPDU
// below 128).
func (m *Message) Segments(mulpdu int) (ddp.Segmenter, error) {
	h, err := m.Header()
	if err != nil {
		return ddp.Segmenter{}, err
	}
	switch m.Opcode {
	case OpReadRequest:
		if _, err := ParseReadRequest(m.Payload); err != nil {
			return ddp.Segmenter{}, err
		}
	case OpTerminate:
		if _, err := ParseTerminate(m.Payload); err != nil {
			return ddp.Segmenter{}, err
		}
	}
	if m.Opcode == OpReadRequest || m.Opcode == OpTerminate {
		if h.Len()+len(m.Payload) > mulpdu {
			return ddp.Segmenter{}, fmt.Errorf("rdmap: %v of %d octets does not fit one segment of MULPDU %d", m.Opcode, h.Len()+len(m.Payload), mulpdu)
		}
	}
	return ddp.NewSegmenter(h, m.Payload, mulpdu)
}

// AppendSegments appends the wire form of each of the message's DDP
// Segments (header and payload, each in its own new slice) to segs. It
// allocates; the transmit path uses Segments.
func (m *Message) AppendSegments(segs [][]byte, mulpdu int) ([][]byte, error) {
	s, err := m.Segments(mulpdu)
	if err != nil {
		return segs, err
	}
	for {
		h, p, ok := s.Next()
		if !ok {
			return segs, nil
		}
		segs = append(segs, ddp.AppendSegment(make([]byte, 0, h.Len()+len(p)), h, p))
	}
}
