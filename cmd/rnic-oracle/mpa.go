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
