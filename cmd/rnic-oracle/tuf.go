package main

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/tuf"
)

// TUF ops (iwarp/tuf): the sender's segments for a list of ULPDUs, and what
// the receive datapath's TUF block must do with a sequence of segments
// (tuf.Seam, one per connection).

func init() {
	register("tuf_frames",
		`frame ULPDUs as a TUF sender and cut the TCP segments: {key, emss, ulpdus, pack?=false, oversized?=false} -> {segments: [hex]}`,
		opTUFFrames)
	register("tuf_seam",
		`the TUF receive block's model: {conns: [{conn, key, next, enabled?=true, failed?=false}], segments: [{conn, seq, octets}]} -> {outcomes: [{reason, ulpdus, crc_good, early}]}`,
		opTUFSeam)
	register("tuf_receive",
		`delineate a TUF stream in order as the host does (tuf.Receiver): {key, stream} -> {fpdus: [{off, len, ulpdus}], stream_error: {code, off, detail} | null}`,
		opTUFReceive)
}

// checkKey refuses a key wider than 48 bits: a testbench bug, not a key.
func checkKey(k uint64) (tuf.Key, error) {
	if k > tuf.KeyMask {
		return 0, fmt.Errorf("key %#x is wider than 48 bits", k)
	}
	return tuf.Key(k), nil
}

func opTUFFrames(params []byte) (any, error) {
	var p struct {
		Key       *uint64   `json:"key"`
		EMSS      int       `json:"emss"`
		ULPDUs    *[]string `json:"ulpdus"`
		Pack      bool      `json:"pack"`
		Oversized bool      `json:"oversized"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Key == nil || p.ULPDUs == nil {
		return nil, errors.New(`needs "key" and "ulpdus"`)
	}
	key, err := checkKey(*p.Key)
	if err != nil {
		return nil, err
	}
	us := make([][]byte, len(*p.ULPDUs))
	for i := range us {
		if us[i], err = decodeHex(fmt.Sprintf("ulpdus[%d]", i), &(*p.ULPDUs)[i]); err != nil {
			return nil, err
		}
	}
	s, err := tuf.NewSender(tuf.Config{Key: key, EMSS: p.EMSS, Pack: p.Pack, Oversized: p.Oversized})
	if err != nil {
		return nil, err
	}
	segs, err := s.Segments(nil, us)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(segs))
	for i, seg := range segs {
		out[i] = hex.EncodeToString(seg)
	}
	return struct {
		Segments []string `json:"segments"`
	}{out}, nil
}

// seamOutcome is tuf.Outcome on the wire: the reason (0 taken, else the
// exception reason), for a taken segment its ULPDUs and the trailer's
// verdict, for an early one (reason 3) its ULPDUs.
type seamOutcome struct {
	Reason  uint8  `json:"reason"`
	ULPDUs  string `json:"ulpdus"`
	CRCGood bool   `json:"crc_good"`
	Early   bool   `json:"early"`
}

func opTUFSeam(params []byte) (any, error) {
	var p struct {
		Conns *[]struct {
			Conn    *uint32 `json:"conn"`
			Key     *uint64 `json:"key"`
			Next    uint32  `json:"next"`
			Enabled *bool   `json:"enabled"`
			Failed  bool    `json:"failed"`
		} `json:"conns"`
		Segments *[]struct {
			Conn   *uint32 `json:"conn"`
			Seq    uint32  `json:"seq"`
			Octets *string `json:"octets"`
		} `json:"segments"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Conns == nil || p.Segments == nil {
		return nil, errors.New(`needs "conns" and "segments"`)
	}
	seams := map[uint32]*tuf.Seam{}
	for i, c := range *p.Conns {
		if c.Conn == nil || c.Key == nil {
			return nil, fmt.Errorf(`conns[%d]: needs "conn" and "key"`, i)
		}
		key, err := checkKey(*c.Key)
		if err != nil {
			return nil, fmt.Errorf("conns[%d]: %w", i, err)
		}
		seams[*c.Conn] = &tuf.Seam{Enabled: c.Enabled == nil || *c.Enabled, Key: key, Next: c.Next, Failed: c.Failed}
	}
	out := make([]seamOutcome, len(*p.Segments))
	for i, s := range *p.Segments {
		if s.Conn == nil {
			return nil, fmt.Errorf(`segments[%d]: missing field "conn"`, i)
		}
		octets, err := decodeHex(fmt.Sprintf("segments[%d].octets", i), s.Octets)
		if err != nil {
			return nil, err
		}
		seam := seams[*s.Conn]
		if seam == nil {
			seam = &tuf.Seam{} // a connection never configured: not enabled
			seams[*s.Conn] = seam
		}
		o := seam.Take(s.Seq, octets)
		out[i] = seamOutcome{Reason: uint8(o.Reason), ULPDUs: hex.EncodeToString(o.ULPDUs), CRCGood: o.CRCGood, Early: o.Early}
	}
	return struct {
		Outcomes []seamOutcome `json:"outcomes"`
	}{out}, nil
}

// receivedFPDU is one FPDU tuf.Receiver delivered: its stream offset and
// length (header and trailer included) and its ULPDUs.
type receivedFPDU struct {
	Off    uint64 `json:"off"`
	Len    int    `json:"len"`
	ULPDUs string `json:"ulpdus"`
}

// receiveError is the error that stopped the Receiver: tuf.ErrorCode and
// the stream offset of the FPDU's header.
type receiveError struct {
	Code   uint8  `json:"code"`
	Off    uint64 `json:"off"`
	Detail string `json:"detail"`
}

// opTUFReceive is the host's in-stream delineation of a connection's
// stream (what it does with the segments the receive block passes to the
// exception path: docs/tuf.md), the whole stream at once, in order.
func opTUFReceive(params []byte) (any, error) {
	var p struct {
		Key    *uint64 `json:"key"`
		Stream *string `json:"stream"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Key == nil || p.Stream == nil {
		return nil, errors.New(`needs "key" and "stream"`)
	}
	key, err := checkKey(*p.Key)
	if err != nil {
		return nil, err
	}
	stream, err := decodeHex("stream", p.Stream)
	if err != nil {
		return nil, err
	}
	fpdus := []receivedFPDU{}
	rx := tuf.NewReceiver(key)
	err = rx.Feed(stream, func(off uint64, ulpdus []byte) error {
		fpdus = append(fpdus, receivedFPDU{Off: off, Len: tuf.HeaderLen + len(ulpdus) + tuf.CRCLen,
			ULPDUs: hex.EncodeToString(ulpdus)})
		return nil
	})
	if err == nil {
		err = rx.Close()
	}
	var rerr *receiveError
	if err != nil {
		var te *tuf.Error
		if !errors.As(err, &te) {
			return nil, err
		}
		rerr = &receiveError{Code: uint8(te.Code), Off: te.Offset, Detail: te.Detail}
	}
	return struct {
		FPDUs []receivedFPDU `json:"fpdus"`
		Error *receiveError  `json:"stream_error"`
	}{fpdus, rerr}, nil
}
