package main

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/crc32c"
	"github.com/openrnic/rnic/iwarp/mpa"
)

// MPA framing ops: FPDUs as a transmitter frames them, for checking what a
// CRC or framing block computes over real FPDUs (markers and pad included).

func init() {
	register("mpa_fpdus",
		`frame ULPDUs back to back from a new Framer: {ulpdus, markers?=false, crc?=true, base?=0} -> {fpdus: [{seq, wire, crc_len, crc}]}`,
		opMPAFPDUs)
}

// fpdu is one framed FPDU: the TCP sequence number of its first octet, its
// octets on the wire (the marker in front of the ULPDU_Length field, when
// there is one, included), how many leading octets its CRC covers (all but
// the CRC field: RFC 5044 4.4) and the CRC it carries.
type fpdu struct {
	Seq    uint32 `json:"seq"`
	Wire   string `json:"wire"`
	CRCLen int    `json:"crc_len"`
	CRC    uint32 `json:"crc"`
}

func opMPAFPDUs(params []byte) (any, error) {
	var p struct {
		ULPDUs  *[]string `json:"ulpdus"`
		Markers bool      `json:"markers"`
		CRC     *bool     `json:"crc"`
		Base    uint32    `json:"base"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ULPDUs == nil {
		return nil, errors.New(`missing field "ulpdus"`)
	}
	crc := p.CRC == nil || *p.CRC
	f := mpa.NewFramer(p.Markers, crc, p.Base)
	out := make([]fpdu, 0, len(*p.ULPDUs))
	for i, s := range *p.ULPDUs {
		name := fmt.Sprintf("ulpdus[%d]", i)
		ulpdu, err := decodeHex(name, &s)
		if err != nil {
			return nil, err
		}
		seq := f.Seq()
		wire, err := f.AppendFPDU(nil, ulpdu, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		n := len(wire) - mpa.CRCLen
		out = append(out, fpdu{
			Seq:    seq,
			Wire:   hex.EncodeToString(wire),
			CRCLen: n,
			CRC:    crc32c.Wire(wire[n:]),
		})
	}
	return struct {
		FPDUs []fpdu `json:"fpdus"`
	}{out}, nil
}

func init() {
	register("mpa_receive",
		`run an in-order MPA Receiver over a byte stream: {stream, markers?=false, crc?=true, base?=0} -> {ulpdus: [{seq, ulpdu}], mpa_error: {code, seq} or null, next}`,
		opMPAReceive)
}

// received is one ULPDU a Receiver delivered: the sequence number of its
// ULPDU_Length field and its octets.
type received struct {
	Seq   uint32 `json:"seq"`
	ULPDU string `json:"ulpdu"`
}

// rxError is the MPA error (RFC 5044 8 code) that stopped a Receiver and the
// sequence number of the offending FPDU's ULPDU_Length field.
type rxError struct {
	Code uint8  `json:"code"`
	Seq  uint32 `json:"seq"`
}

// opMPAReceive feeds the stream (the octets from base on, as TCP delivers
// them in order) to iwarp/mpa's Receiver in one piece and reports what it
// delivered, the error that stopped it if any, and the sequence number of
// the next octet it expects (next): the ULPDUs and verdicts an MPA receive
// datapath must produce for the same stream, however it is segmented.
func opMPAReceive(params []byte) (any, error) {
	var p struct {
		Stream  *string `json:"stream"`
		Markers bool    `json:"markers"`
		CRC     *bool   `json:"crc"`
		Base    uint32  `json:"base"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Stream == nil {
		return nil, errors.New(`missing field "stream"`)
	}
	stream, err := decodeHex("stream", p.Stream)
	if err != nil {
		return nil, err
	}
	r := mpa.NewReceiver(p.Markers, p.CRC == nil || *p.CRC, p.Base)
	out := []received{}
	ferr := r.Feed(stream, func(seq uint32, ulpdu []byte) error {
		out = append(out, received{Seq: seq, ULPDU: hex.EncodeToString(ulpdu)})
		return nil
	})
	var rerr *rxError
	if ferr != nil {
		var me *mpa.Error
		if !errors.As(ferr, &me) {
			return nil, ferr
		}
		rerr = &rxError{Code: uint8(me.Code), Seq: me.Seq}
	}
	return struct {
		ULPDUs []received `json:"ulpdus"`
		Error  *rxError   `json:"mpa_error"`
		Next   uint32     `json:"next"`
	}{out, rerr, r.Seq()}, nil
}

func init() {
	register("mpa_ooo",
		`what iwarp/mpa's OOOReceiver places out of order from single segments: {stream, markers?=false, crc?=true, base?=0, segments: [{seq, len, next?=base}]} -> {results: [{placed: [{seq, ulpdu}], delivered: [seq], mpa_error}]}`,
		opMPAOOO)
}

// oooSegment is one segment of the stream to try on its own: the octets
// stream[seq-base : seq-base+len], arriving at a receiver that has taken the
// stream in order up to next.
type oooSegment struct {
	Seq  *uint32 `json:"seq"`
	Len  *uint32 `json:"len"`
	Next *uint32 `json:"next"`
}

// oooResult is what the OOOReceiver did with one segment: the ULPDUs it
// placed (out of order, through markers, RFC 5044 6 cases 2 and 3), in
// the order it placed them, the FPDUs it delivered (none for a segment
// beyond next), and the error that stopped it, if any.
type oooResult struct {
	Placed    []received `json:"placed"`
	Delivered []uint32   `json:"delivered"`
	Error     *rxError   `json:"mpa_error"`
}

// oooCollector is the OOOHandler of one trial.
type oooCollector struct{ r *oooResult }

func (c oooCollector) Place(seq uint32, ulpdu []byte) error {
	c.r.Placed = append(c.r.Placed, received{Seq: seq, ULPDU: hex.EncodeToString(ulpdu)})
	return nil
}

func (c oooCollector) Deliver(seq uint32) error {
	c.r.Delivered = append(c.r.Delivered, seq)
	return nil
}

// opMPAOOO runs, for each segment, a new OOOReceiver that takes the stream
// in order up to the segment's next and then the segment alone, and reports
// what the segment made it place and deliver: the FPDUs an MPA receive
// datapath that delineates each out-of-order segment by itself (through
// its markers, FPDUs wholly inside it) must find, octet for octet.
func opMPAOOO(params []byte) (any, error) {
	var p struct {
		Stream   *string      `json:"stream"`
		Markers  bool         `json:"markers"`
		CRC      *bool        `json:"crc"`
		Base     uint32       `json:"base"`
		Segments []oooSegment `json:"segments"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	stream, err := decodeHex("stream", p.Stream)
	if err != nil {
		return nil, err
	}
	crc := p.CRC == nil || *p.CRC
	out := make([]oooResult, 0, len(p.Segments))
	for i, s := range p.Segments {
		if s.Seq == nil || s.Len == nil {
			return nil, fmt.Errorf("segments[%d]: seq and len are required", i)
		}
		off := uint64(*s.Seq - p.Base)
		if off+uint64(*s.Len) > uint64(len(stream)) {
			return nil, fmt.Errorf("segments[%d]: octets %d..%d are beyond the %d-octet stream",
				i, off, off+uint64(*s.Len), len(stream))
		}
		next := p.Base
		if s.Next != nil {
			next = *s.Next
		}
		if n := uint64(next - p.Base); n > uint64(len(stream)) {
			return nil, fmt.Errorf("segments[%d]: next is %d octets into the %d-octet stream", i, n, len(stream))
		}
		res := oooResult{Placed: []received{}, Delivered: []uint32{}}
		rx := mpa.NewOOOReceiver(p.Markers, crc, p.Base, oooCollector{&res})
		ferr := rx.Segment(p.Base, stream[:next-p.Base])
		res.Placed, res.Delivered = res.Placed[:0], res.Delivered[:0]
		if ferr == nil {
			ferr = rx.Segment(*s.Seq, stream[off:off+uint64(*s.Len)])
		}
		if ferr != nil {
			var me *mpa.Error
			if !errors.As(ferr, &me) {
				return nil, ferr
			}
			res.Error = &rxError{Code: uint8(me.Code), Seq: me.Seq}
		}
		out = append(out, res)
	}
	return struct {
		Results []oooResult `json:"results"`
	}{out}, nil
}
