package main

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regs"
)

// The model ops, for hw/rtl/rnic_cq.v, rnic_evq.v, rnic_irq.v and
// rnic_exc.v (model_seg: segments the receive side does not take go to
// the exception ring): a session
// is a driver/model device the testbench drives step by step beside the
// RTL (BAR writes: admin commands, doorbells, vector registers; completion
// and event records as the engines would hand them to the writers), then
// asks what the model wrote into host memory, what it lost and which
// interrupt messages it sent. The model's memory is its own (Alloc), at
// the device addresses model_alloc returns; the testbench uses the same
// addresses in its own host memory.

type modelSession struct {
	*model.Device
	bufs []*driver.Buffer
}

var sessions = map[int]*modelSession{}

func init() {
	register("model_open",
		`a model device: {cqs, vectors, windows} -> {session}`,
		opModelOpen)
	register("model_alloc",
		`DMA memory in a session: {session, size} -> {addr}`,
		func(params []byte) (any, error) {
			var p struct {
				Session int `json:"session"`
				Size    int `json:"size"`
			}
			d, err := session(params, &p, &p.Session)
			if err != nil {
				return nil, err
			}
			b, err := d.Alloc(p.Size)
			if err != nil {
				return nil, err
			}
			d.bufs = append(d.bufs, b)
			return struct {
				Addr uint64 `json:"addr"`
			}{b.Addr}, nil
		})
	register("model_write32",
		`a BAR write: {session, off, value} -> {}`,
		func(params []byte) (any, error) {
			var p struct {
				Session int    `json:"session"`
				Off     uint32 `json:"off"`
				Value   uint32 `json:"value"`
			}
			d, err := session(params, &p, &p.Session)
			if err != nil {
				return nil, err
			}
			return struct{}{}, d.Write32(p.Off, p.Value)
		})
	register("model_read32",
		`a BAR read: {session, off} -> {value}`,
		func(params []byte) (any, error) {
			var p struct {
				Session int    `json:"session"`
				Off     uint32 `json:"off"`
			}
			d, err := session(params, &p, &p.Session)
			if err != nil {
				return nil, err
			}
			v, err := d.Read32(p.Off)
			return struct {
				Value uint32 `json:"value"`
			}{v}, err
		})
	register("model_admin",
		`an admin command through the mailbox: {session, opcode, args: [8 words]} -> {status}`,
		opModelAdmin)
	register("model_cqe",
		`a completion record for CQ cqn: {session, cqn, cqe: 32 octets (octet 31 ignored)} -> {}`,
		func(params []byte) (any, error) {
			var p struct {
				Session int     `json:"session"`
				CQN     uint16  `json:"cqn"`
				CQE     *string `json:"cqe"`
			}
			d, err := session(params, &p, &p.Session)
			if err != nil {
				return nil, err
			}
			b, err := decodeHex("cqe", p.CQE)
			if err != nil {
				return nil, err
			}
			if len(b) != hostif.CQESize {
				return nil, fmt.Errorf("cqe: %d octets, want %d", len(b), hostif.CQESize)
			}
			b[31] = 0
			e, err := hostif.DecodeCQE(b)
			if err != nil {
				return nil, err
			}
			d.InjectCQE(p.CQN, e)
			return struct{}{}, nil
		})
	register("model_event",
		`an event record: {session, event: 16 octets (octet 15 ignored)} -> {}`,
		func(params []byte) (any, error) {
			var p struct {
				Session int     `json:"session"`
				Event   *string `json:"event"`
			}
			d, err := session(params, &p, &p.Session)
			if err != nil {
				return nil, err
			}
			b, err := decodeHex("event", p.Event)
			if err != nil {
				return nil, err
			}
			if len(b) != hostif.EventSize {
				return nil, fmt.Errorf("event: %d octets, want %d", len(b), hostif.EventSize)
			}
			b[15] = 0
			e, err := hostif.DecodeEvent(b)
			if err != nil {
				return nil, err
			}
			d.InjectEvent(e)
			return struct{}{}, nil
		})
	register("model_seg",
		`a TCP segment into the device's receive side (driver.Network SegIn): {session, qpn, seq, octets} -> {}`,
		func(params []byte) (any, error) {
			var p struct {
				Session int     `json:"session"`
				QPN     uint16  `json:"qpn"`
				Seq     uint32  `json:"seq"`
				Octets  *string `json:"octets"`
			}
			d, err := session(params, &p, &p.Session)
			if err != nil {
				return nil, err
			}
			b, err := decodeHex("octets", p.Octets)
			if err != nil {
				return nil, err
			}
			return struct{}{}, d.Network().SegIn(driver.Segment{QPN: p.QPN, Seq: p.Seq, Octets: b})
		})
	register("model_state",
		`what a session's device did: {session, addr, len} -> {mem: the octets at [addr, addr+len), lost_cqes, lost_events, messages: [per vector]}`,
		opModelState)
	register("model_close",
		`ends a session: {session} -> {}`,
		func(params []byte) (any, error) {
			var p struct {
				Session int `json:"session"`
			}
			d, err := session(params, &p, &p.Session)
			if err != nil {
				return nil, err
			}
			delete(sessions, p.Session)
			return struct{}{}, d.Close()
		})
}

// session decodes params into p and returns the device *id names.
func session(params []byte, p any, id *int) (*modelSession, error) {
	if err := decodeParams(params, p); err != nil {
		return nil, err
	}
	d, ok := sessions[*id]
	if !ok {
		return nil, fmt.Errorf("no session %d (model_open first)", *id)
	}
	return d, nil
}

func opModelOpen(params []byte) (any, error) {
	var p struct {
		CQs     uint32 `json:"cqs"`
		Vectors uint32 `json:"vectors"`
		Windows uint32 `json:"windows"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	cfg := model.DefaultConfig
	cfg.CQs, cfg.Vectors, cfg.Windows = p.CQs, p.Vectors, p.Windows
	d, err := model.New(cfg)
	if err != nil {
		return nil, err
	}
	id := len(sessions) + 1
	for sessions[id] != nil {
		id++
	}
	sessions[id] = &modelSession{Device: d}
	return struct {
		Session int `json:"session"`
	}{id}, nil
}

func opModelAdmin(params []byte) (any, error) {
	var p struct {
		Session int      `json:"session"`
		Opcode  uint8    `json:"opcode"`
		Args    []uint32 `json:"args"`
	}
	d, err := session(params, &p, &p.Session)
	if err != nil {
		return nil, err
	}
	if len(p.Args) != 8 {
		return nil, errors.New("args: want 8 words")
	}
	for i, a := range p.Args {
		if err := d.Write32(regs.AdminArg0+4*uint32(i), a); err != nil {
			return nil, err
		}
	}
	if err := d.Write32(regs.AdminCmd, uint32(p.Opcode)); err != nil {
		return nil, err
	}
	st, err := d.Read32(regs.AdminStatus)
	if err != nil {
		return nil, err
	}
	if st&regs.AdminStatusBusyMask != 0 {
		return nil, errors.New("the model's command is still busy (AdminLatency is 0 in a session)")
	}
	return struct {
		Status uint32 `json:"status"`
	}{st & regs.AdminStatusCodeMask >> regs.AdminStatusCodeShift}, nil
}

func opModelState(params []byte) (any, error) {
	var p struct {
		Session int    `json:"session"`
		Addr    uint64 `json:"addr"`
		Len     int    `json:"len"`
	}
	d, err := session(params, &p, &p.Session)
	if err != nil {
		return nil, err
	}
	var mem []byte
	for _, b := range d.bufs {
		if p.Addr >= b.Addr && p.Addr-b.Addr+uint64(p.Len) <= uint64(len(b.Mem)) {
			mem = b.Mem[p.Addr-b.Addr:][:p.Len]
		}
	}
	if mem == nil {
		return nil, fmt.Errorf("[%#x, +%d) is not inside one buffer of model_alloc", p.Addr, p.Len)
	}
	var msgs []uint64
	for v := 0; ; v++ {
		if _, err := d.Vector(v); err != nil {
			break
		}
		msgs = append(msgs, d.Messages(v))
	}
	return struct {
		Mem        string   `json:"mem"`
		LostCQEs   uint64   `json:"lost_cqes"`
		LostEvents uint64   `json:"lost_events"`
		Messages   []uint64 `json:"messages"`
	}{hex.EncodeToString(mem), d.LostCQEs(), d.LostEvents(), msgs}, nil
}
