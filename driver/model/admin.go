package model

import (
	"errors"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regs"
)

// QPState is a QP's state as the admin commands move it.
type QPState uint8

const (
	QPFree    QPState = iota // no QP (after reset or DESTROY_QP)
	QPCreated                // CREATE_QP: rings known, not yet in Full Operation
	QPRTS                    // QP_RTS: the device frames, checks and places its traffic
	QPError                  // a ring overran (or, later, a protocol error): every entry completes FLUSHED
	QPDrained                // QP_DRAIN answered: the device no longer touches the QP's memory
)

var qpStateNames = [...]string{"free", "created", "RTS", "error", "drained"}

func (s QPState) String() string { return qpStateNames[s] }

// CQ is a completion queue's context.
type CQ struct {
	Valid    bool
	PI       uint16 // the next entry the device writes
	Overrun  bool   // CQ_OVERRUN raised: the device writes no more entries
	Ring     uint64
	Log2     uint8
	Vector   uint32
	CI       uint16 // the driver's consumer index (CQ_CI)
	Arm      bool
	ArmSolic bool
}

// QP is a queue pair's context.
type QP struct {
	State          QPState
	PD             uint16
	SQRing, RQRing uint64
	SQLog2, RQLog2 uint8
	SendCQ, RecvCQ uint16
	SQPI, RQPI     uint16 // producer indices (doorbells)
	SQCI, RQCI     uint16 // how far the device consumed the rings: 0 until the SQ and RQ engines exist
	RTS            hostif.QPRTS
}

// MR is an MR table entry.
type MR struct {
	Valid  bool
	Key    uint8
	Access uint8
	PD     uint16
	Bound  uint16 // hostif.NotBound for none
	BaseTO uint64
	Length uint64
	Addr   uint64
}

// EventRings is EVENT_RING's configuration and the event ring's producer.
type EventRings struct {
	Valid      bool
	Ring       uint64
	Log2       uint8
	ExcRing    uint64
	ExcLog2    uint8
	ExcBufLog2 uint8
	PI         uint16 // next event's index
	ExcPI      uint16 // next exception buffer's index
}

// tables is every piece of state the admin commands keep.
type tables struct {
	CQs     []CQ
	QPs     []QP
	MRs     []MR
	Windows []window
	Events  EventRings
}

func newTables(c Config) tables {
	return tables{CQs: make([]CQ, c.CQs), QPs: make([]QP, c.QPs), MRs: make([]MR, c.STags),
		Windows: make([]window, c.Windows)}
}

func (t tables) clone() tables {
	t.CQs = append([]CQ(nil), t.CQs...)
	t.QPs = append([]QP(nil), t.QPs...)
	t.MRs = append([]MR(nil), t.MRs...)
	t.Windows = append([]window(nil), t.Windows...)
	return t
}

// Tables is a copy of the model's admin state, for tests and debugging.
type Tables struct {
	CQs     []CQ
	QPs     []QP
	MRs     []MR
	Windows [][2]uint64 // address, length; length 0 is an empty slot
	Events  EventRings
}

// Tables returns a copy of every table.
func (d *Device) Tables() Tables {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.t.clone()
	w := make([][2]uint64, len(c.Windows))
	for i, x := range c.Windows {
		w[i] = [2]uint64{x.Addr, x.Len}
	}
	return Tables{CQs: c.CQs, QPs: c.QPs, MRs: c.MRs, Windows: w, Events: c.Events}
}

// adminUnit is the mailbox: the argument words, the command in flight and
// the last result.
type adminUnit struct {
	args    hostif.Args
	lastOp  uint8
	busy    bool
	pending int // STATUS reads left before the command in flight runs
	code    hostif.AdminStatus
	inArgs  hostif.Args // the arguments as CMD was written
}

func argIndex(off uint32) (int, bool) {
	if off >= regs.AdminArg0 && off <= regs.AdminArg7 && (off-regs.AdminArg0)%4 == 0 {
		return int((off - regs.AdminArg0) / 4), true
	}
	return 0, false
}

func (d *Device) readAdmin(off uint32) uint32 {
	a := &d.admin
	switch off {
	case regs.AdminCmd:
		return uint32(a.lastOp)
	case regs.AdminStatus:
		if a.busy {
			// The model's time passes as the driver polls.
			a.pending--
			if a.pending <= 0 {
				d.runAdmin()
			}
		}
		v := uint32(a.code) << regs.AdminStatusCodeShift
		if a.busy {
			v |= regs.AdminStatusBusyMask
		}
		return v
	}
	if i, ok := argIndex(off); ok {
		return a.args[i]
	}
	return 0
}

func (d *Device) writeAdmin(off uint32, v uint32) {
	a := &d.admin
	if off == regs.AdminCmd {
		if a.busy {
			// Ignored and counted (docs/device.md, RNAD).
			d.cnt.add(regs.CountersAdminOverrun, 1)
			return
		}
		a.lastOp = uint8(v & regs.AdminCmdOpcodeMask)
		a.inArgs = a.args
		a.busy = true
		a.pending = d.cfg.AdminLatency
		if a.pending <= 0 {
			d.runAdmin()
		}
		return
	}
	if i, ok := argIndex(off); ok {
		a.args[i] = v
	}
	// STATUS is read-only.
}

// runAdmin runs the command in flight and clears BUSY.
func (d *Device) runAdmin() {
	a := &d.admin
	op := hostif.AdminOpcode(a.lastOp)
	cmd, err := hostif.DecodeCommand(op, a.inArgs)
	var out *hostif.Args
	switch {
	case err != nil:
		var u *hostif.UnknownOpcodeError
		if errors.As(err, &u) {
			a.code = hostif.AdminBadOpcode
		} else {
			a.code = hostif.AdminBadArg
		}
	default:
		a.code, out = d.exec(cmd)
	}
	if out != nil {
		a.args = *out
	}
	a.busy = false
}

// exec checks a command in full, then applies it. Every check comes before
// the first change: a refusal leaves every table as it was (docs/device.md,
// "Admin commands"). The order of the checks: index, state, argument,
// window.
func (d *Device) exec(c hostif.Command) (hostif.AdminStatus, *hostif.Args) {
	t := &d.t
	nQP, nCQ := uint32(len(t.QPs)), uint32(len(t.CQs))
	switch c := c.(type) {
	case hostif.CreateCQ:
		switch {
		case c.CQN >= nCQ || c.Vector >= uint32(len(d.vec)):
			return hostif.AdminBadIndex, nil
		case t.CQs[c.CQN].Valid:
			return hostif.AdminBadState, nil
		case !d.ringOK(c.Ring, c.Log2, hostif.CQESize, d.cfg.CQLog2):
			return hostif.AdminBadArg, nil
		case !t.inWindow(c.Ring, hostif.CQESize<<c.Log2):
			return hostif.AdminOutOfWindow, nil
		}
		t.CQs[c.CQN] = CQ{Valid: true, Ring: c.Ring, Log2: uint8(c.Log2), Vector: c.Vector}
	case hostif.DestroyCQ:
		switch {
		case c.CQN >= nCQ:
			return hostif.AdminBadIndex, nil
		case !t.CQs[c.CQN].Valid || d.cqInUse(uint16(c.CQN)):
			return hostif.AdminBadState, nil
		}
		t.CQs[c.CQN] = CQ{}
	case hostif.CreateQP:
		switch {
		case c.QPN >= nQP || uint32(c.SendCQ) >= nCQ || uint32(c.RecvCQ) >= nCQ:
			return hostif.AdminBadIndex, nil
		case t.QPs[c.QPN].State != QPFree || !t.CQs[c.SendCQ].Valid || !t.CQs[c.RecvCQ].Valid:
			return hostif.AdminBadState, nil
		case c.PD > 0xffff ||
			!d.ringOK(c.SQRing, uint32(c.SQLog2), hostif.SQESize, d.cfg.SQLog2) ||
			!d.ringOK(c.RQRing, uint32(c.RQLog2), hostif.RQESize, d.cfg.RQLog2):
			return hostif.AdminBadArg, nil
		case !t.inWindow(c.SQRing, hostif.SQESize<<c.SQLog2) || !t.inWindow(c.RQRing, hostif.RQESize<<c.RQLog2):
			return hostif.AdminOutOfWindow, nil
		}
		t.QPs[c.QPN] = QP{State: QPCreated, PD: uint16(c.PD), SQRing: c.SQRing, RQRing: c.RQRing,
			SQLog2: c.SQLog2, RQLog2: c.RQLog2, SendCQ: c.SendCQ, RecvCQ: c.RecvCQ}
	case hostif.QPRTS:
		switch {
		case uint32(c.QPN) >= nQP:
			return hostif.AdminBadIndex, nil
		case t.QPs[c.QPN].State != QPCreated:
			return hostif.AdminBadState, nil
		case c.MULPDU == 0:
			// An MULPDU of 0 leaves no room for a ULPDU (RFC 5044 7.1.2).
			return hostif.AdminBadArg, nil
		}
		t.QPs[c.QPN].State = QPRTS
		t.QPs[c.QPN].RTS = c
		d.startQP(c.QPN)
	case hostif.QPDrain:
		switch {
		case c.QPN >= nQP:
			return hostif.AdminBadIndex, nil
		case t.QPs[c.QPN].State == QPFree:
			return hostif.AdminBadState, nil
		}
		// The model's engines run inside the driver's calls: nothing is
		// in flight between them, so the drain completes what was
		// fetched and answers at once.
		d.drainQP(uint16(c.QPN))
		q := &t.QPs[c.QPN]
		q.State = QPDrained
		out := hostif.DrainResult{SQIndex: q.SQCI, RQIndex: q.RQCI}.Args()
		return hostif.AdminOK, &out
	case hostif.DestroyQP:
		switch {
		case c.QPN >= nQP:
			return hostif.AdminBadIndex, nil
		case t.QPs[c.QPN].State != QPDrained:
			return hostif.AdminBadState, nil
		}
		t.QPs[c.QPN] = QP{}
	case hostif.MRWrite:
		switch {
		case uint32(c.Index) >= uint32(len(t.MRs)) || c.BoundQPN != hostif.NotBound && uint32(c.BoundQPN) >= nQP:
			return hostif.AdminBadIndex, nil
		case c.BaseTO+c.Length < c.BaseTO || c.Addr+c.Length < c.Addr:
			return hostif.AdminBadArg, nil
		case c.Length != 0 && !t.inWindow(c.Addr, c.Length):
			return hostif.AdminOutOfWindow, nil
		}
		t.MRs[c.Index] = MR{Valid: true, Key: c.Key, Access: c.Access, PD: c.PD, Bound: c.BoundQPN,
			BaseTO: c.BaseTO, Length: c.Length, Addr: c.Addr}
		d.syncRegions()
	case hostif.MRInvalidate:
		switch {
		case c.Index >= uint32(len(t.MRs)):
			return hostif.AdminBadIndex, nil
		case !t.MRs[c.Index].Valid:
			return hostif.AdminBadState, nil
		}
		t.MRs[c.Index] = MR{}
		d.syncRegions()
	case hostif.EventRing:
		switch {
		case c.Log2 == 0 || c.Log2 > 16 || c.ExcLog2 == 0 || c.ExcLog2 > 16 ||
			c.ExcBufLog2 < 6 || c.ExcBufLog2 > 16 ||
			!aligned(c.Ring, hostif.EventSize<<c.Log2) || !aligned(c.ExcRing, 1<<(c.ExcLog2+c.ExcBufLog2)):
			return hostif.AdminBadArg, nil
		case !t.inWindow(c.Ring, hostif.EventSize<<c.Log2) || !t.inWindow(c.ExcRing, 1<<(c.ExcLog2+c.ExcBufLog2)):
			return hostif.AdminOutOfWindow, nil
		}
		t.Events = EventRings{Valid: true, Ring: c.Ring, Log2: c.Log2, ExcRing: c.ExcRing, ExcLog2: c.ExcLog2,
			ExcBufLog2: c.ExcBufLog2}
	case hostif.DMAWindow:
		switch {
		case c.Slot >= uint32(len(t.Windows)):
			return hostif.AdminBadIndex, nil
		case c.Addr+c.Length < c.Addr || c.Addr%page != 0 || c.Length%page != 0:
			return hostif.AdminBadArg, nil
		}
		t.Windows[c.Slot] = window{Addr: c.Addr, Len: c.Length}
		d.syncRegions()
	default:
		return hostif.AdminBadOpcode, nil
	}
	return hostif.AdminOK, nil
}

func aligned(addr, size uint64) bool {
	a := max(size, page)
	return addr%a == 0
}

// ringOK checks a ring's size (log2 1..max) and alignment (to its size and
// to 4 KiB, docs/device.md "Rings").
func (d *Device) ringOK(addr uint64, log2 uint32, entry, max uint8) bool {
	return log2 >= 1 && log2 <= uint32(max) && aligned(addr, uint64(entry)<<log2)
}

func (d *Device) cqInUse(cqn uint16) bool {
	for _, q := range d.t.QPs {
		if q.State != QPFree && (q.SendCQ == cqn || q.RecvCQ == cqn) {
			return true
		}
	}
	return false
}
