package rdmap

import (
	"encoding/binary"
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// ReadRequestLen is the length of the RDMA Read Request header, the whole
// payload of a Read Request message.
const ReadRequestLen = 28

// ReadRequest is the RDMA Read Request header (RFC 5040): where the Data
// Source's bytes are and where the Read Response must put them.
type ReadRequest struct {
	SinkSTag   uint32 // Data Sink STag: the Read Response is tagged to it
	SinkTO     uint64 // Data Sink Tagged Offset
	Size       uint32 // RDMA Read Message Size, octets
	SourceSTag uint32 // Data Source STag
	SourceTO   uint64 // Data Source Tagged Offset
}

// Append appends the 28-octet wire form: Sink STag, Sink TO, Message Size,
// Source STag, Source TO, all big-endian.
func (r *ReadRequest) Append(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, r.SinkSTag)
	dst = binary.BigEndian.AppendUint64(dst, r.SinkTO)
	dst = binary.BigEndian.AppendUint32(dst, r.Size)
	dst = binary.BigEndian.AppendUint32(dst, r.SourceSTag)
	return binary.BigEndian.AppendUint64(dst, r.SourceTO)
}

// ParseReadRequest parses the payload of a Read Request message, which
// must be exactly ReadRequestLen octets.
func ParseReadRequest(b []byte) (ReadRequest, error) {
	if len(b) != ReadRequestLen {
		return ReadRequest{}, &FormatError{Msg: "RDMA Read Request", Detail: fmt.Sprintf("%d octets, want %d", len(b), ReadRequestLen)}
	}
	return ReadRequest{
		SinkSTag:   binary.BigEndian.Uint32(b[0:4]),
		SinkTO:     binary.BigEndian.Uint64(b[4:12]),
		Size:       binary.BigEndian.Uint32(b[12:16]),
		SourceSTag: binary.BigEndian.Uint32(b[16:20]),
		SourceTO:   binary.BigEndian.Uint64(b[20:28]),
	}, nil
}

// DeliveredReadRequest parses a Read Request message DDP has delivered
// (d.Delivered, untagged queue 1). The message must have come in one DDP
// Segment: its last segment's MO is 0, so that segment carried all 28
// octets. The sender sends it so (Message.Segments); a receiver that
// assembled it from several segments would take octets of the posted
// buffer that no segment wrote when a segment is missing, and Linux siw,
// which reads the 28 octets as part of the segment's header, takes only
// one-segment Read Requests. A Read Request in several segments, or of
// the wrong length, is a *FormatError.
func DeliveredReadRequest(d *ddp.Delivery) (ReadRequest, error) {
	if d.Header.MO != 0 {
		return ReadRequest{}, &FormatError{Msg: "RDMA Read Request",
			Detail: fmt.Sprintf("not in one DDP Segment: the last segment has MO %d", d.Header.MO)}
	}
	return ParseReadRequest(d.Buf[:d.MsgLen])
}

// FormatError reports a message body that cannot be parsed: wrong length
// or fields that contradict each other.
type FormatError struct {
	Msg    string // which message
	Detail string
}

func (e *FormatError) Error() string { return "rdmap: malformed " + e.Msg + ": " + e.Detail }
