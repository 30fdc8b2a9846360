package main

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// The CRC ops, for hw/rtl/crc32c.v.
//
// The hardware's resumable state is the running CRC itself: the CRC32c of
// the octets seen so far, conditioning included, exactly what
// crc32c.Update returns. A segment that starts with init begins from the
// empty message (CRC 0); one without init continues from the state it is
// given, so the state saved at the end of one segment is both the CRC of
// everything so far and what the next segment resumes from. The responses
// carry it as "state" and, for the finished CRC, as "crc" (the same number)
// and "wire" (its four octets in MPA wire order, RFC 5044 4.4: least
// significant octet first).

func init() {
	register("crc32c",
		`CRC32c of data: {data, init?=true, state?} -> {crc, state, wire}`,
		opCRC32c)
	register("crc32c_segments",
		`running CRC32c after each of several segments: {segments, init?=true, state?} -> {states, crc, wire}`,
		opCRC32cSegments)
}

// crcStart holds the fields that say where a CRC starts.
type crcStart struct {
	Init  *bool   `json:"init"`
	State *uint32 `json:"state"`
}

// start returns the state to continue from: 0 (the CRC of no octets) with
// init, which is the default, or the given state without it.
func (s crcStart) start() (uint32, error) {
	init := s.Init == nil || *s.Init
	switch {
	case init && s.State != nil:
		return 0, errors.New(`"state" given with init (set "init": false to resume)`)
	case !init && s.State == nil:
		return 0, errors.New(`"init": false needs "state"`)
	case init:
		return 0, nil
	default:
		return *s.State, nil
	}
}

type crcResult struct {
	CRC   uint32 `json:"crc"`
	State uint32 `json:"state"`
	Wire  string `json:"wire"`
}

func newCRCResult(crc uint32) crcResult {
	return crcResult{CRC: crc, State: crc, Wire: hex.EncodeToString(crc32c.AppendWire(nil, crc))}
}

func opCRC32c(params []byte) (any, error) {
	var p struct {
		crcStart
		Data *string `json:"data"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	state, err := p.start()
	if err != nil {
		return nil, err
	}
	data, err := decodeHex("data", p.Data)
	if err != nil {
		return nil, err
	}
	return newCRCResult(crc32c.Update(state, data)), nil
}

func opCRC32cSegments(params []byte) (any, error) {
	var p struct {
		crcStart
		Segments *[]string `json:"segments"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	state, err := p.start()
	if err != nil {
		return nil, err
	}
	if p.Segments == nil {
		return nil, errors.New(`missing field "segments"`)
	}
	states := make([]uint32, 0, len(*p.Segments))
	for i, s := range *p.Segments {
		seg, err := decodeHex(fmt.Sprintf("segments[%d]", i), &s)
		if err != nil {
			return nil, err
		}
		state = crc32c.Update(state, seg)
		states = append(states, state)
	}
	res := newCRCResult(state)
	return struct {
		States []uint32 `json:"states"`
		crcResult
	}{states, res}, nil
}
