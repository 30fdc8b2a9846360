package main

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regs"
)

// progDev is the model device an engine's oracle (sq_run, rr_run, rq_run)
// drives as the driver would: admin commands through the mailbox, host
// memory written directly, and after each step the CQEs and events the
// model wrote since the last look.
type progDev struct {
	d      *model.Device
	base   uint64 // the device address of mem[0]
	mem    []byte
	cqSeen []uint16 // CQEs read so far, per CQ
	evSeen uint16   // events read so far
}

// newProgDev builds the model with one interrupt vector and memSize octets
// of host memory; the caller closes d.
func newProgDev(c sqConfig, memSize int) (*progDev, error) {
	if memSize <= 0 {
		return nil, errors.New("mem_size must be positive")
	}
	d, err := model.New(model.Config{QPs: c.QPs, CQs: c.CQs, STags: c.STags, Vectors: 1, Windows: c.Windows,
		SQLog2: c.SQLog2, RQLog2: c.RQLog2, CQLog2: c.CQLog2, DataWidth: 64})
	if err != nil {
		return nil, err
	}
	buf, err := d.Alloc(memSize)
	if err != nil {
		d.Close()
		return nil, err
	}
	return &progDev{d: d, base: buf.Addr, mem: buf.Mem[:memSize], cqSeen: make([]uint16, c.CQs)}, nil
}

// admin runs one command ([opcode, ARG0..ARG7]) and returns STATUS.CODE.
func (p *progDev) admin(step int, words []uint32) (uint32, error) {
	if len(words) != 9 {
		return 0, fmt.Errorf("step %d: admin is [opcode, ARG0..ARG7]", step)
	}
	for k := 0; k < 8; k++ {
		if err := p.d.Write32(regs.AdminArg0+4*uint32(k), words[1+k]); err != nil {
			return 0, err
		}
	}
	if err := p.d.Write32(regs.AdminCmd, words[0]); err != nil {
		return 0, err
	}
	for {
		st, err := p.d.Read32(regs.AdminStatus)
		if err != nil {
			return 0, err
		}
		if st&regs.AdminStatusBusyMask == 0 {
			return st >> 8 & 0xff, nil
		}
	}
}

// memWrite writes hex-encoded octets into host memory at device address
// addr.
func (p *progDev) memWrite(step int, addr uint64, data string) error {
	b, err := hex.DecodeString(data)
	if err != nil {
		return fmt.Errorf("step %d: mem data: %v", step, err)
	}
	if addr < p.base || addr-p.base+uint64(len(b)) > uint64(len(p.mem)) {
		return fmt.Errorf("step %d: mem write outside [%#x, +%#x)", step, p.base, len(p.mem))
	}
	copy(p.mem[addr-p.base:], b)
	return nil
}

// collect returns the CQEs (octets 0..30) and events (octets 0..14) the
// model wrote since the last call, and consumes the CQEs (CQ_CI) so that
// no CQ overruns; a destroyed CQ starts again at 0.
func (p *progDev) collect() ([]sqCQE, []string, error) {
	var cqes []sqCQE
	var events []string
	t := p.d.Tables()
	for cqn := range t.CQs {
		cq := t.CQs[cqn]
		if !cq.Valid {
			p.cqSeen[cqn] = 0
			continue
		}
		for ; p.cqSeen[cqn] != cq.PI; p.cqSeen[cqn]++ {
			a := cq.Ring + uint64(p.cqSeen[cqn]&(1<<cq.Log2-1))*hostif.CQESize - p.base
			cqes = append(cqes, sqCQE{CQN: uint16(cqn), Entry: hex.EncodeToString(p.mem[a : a+hostif.CQESize-1])})
		}
		if cq.CI != cq.PI {
			if err := p.d.Write32(regs.DoorbellsCQDB+4*uint32(cqn), uint32(cq.PI)); err != nil {
				return nil, nil, err
			}
		}
	}
	if ev := t.Events; ev.Valid {
		for ; p.evSeen != ev.PI; p.evSeen++ {
			a := ev.Ring + uint64(p.evSeen&(1<<ev.Log2-1))*hostif.EventSize - p.base
			events = append(events, hex.EncodeToString(p.mem[a:a+hostif.EventSize-1]))
		}
	}
	return cqes, events, nil
}
