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
