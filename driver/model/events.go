package model

import (
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regs"
)

// vector is one interrupt vector's registers (docs/device.md, RNIV), its
// moderation state and its channel. The rule is rnic_irq.v's: every entry
// counts; the interrupt is due at the MOD_COUNT-th unsignalled entry (every
// entry for 0 and 1) or MOD_TIME after the first, whichever comes first;
// due sets PENDING and, on an enabled vector, owes a message; mask holds
// the owed message until unmask; enable 0 drops it. The model has no
// clock: entries a MOD_TIME holds back are due at the end of the driver
// call that made them (settle), a call being longer than any moderation
// time.
type vector struct {
	enable, mask bool
	modCount     uint32
	modTime      uint32
	pending      bool
	unsignalled  uint32 // entries since the last due interrupt
	owed         bool   // a due interrupt's message not yet sent
	messages     uint64 // messages sent (Messages)
	ch           chan struct{}
}

func (d *Device) readVector(r uint32) uint32 {
	fn, v := r/0x40, int(r%0x40/4)
	if v >= len(d.vec) {
		return 0 // registers of vectors this build does not have
	}
	x := &d.vec[v]
	switch fn {
	case 0:
		var c uint32
		if x.enable {
			c |= regs.VectorsVecCtrlEnableMask
		}
		if x.mask {
			c |= regs.VectorsVecCtrlMaskMask
		}
		return c
	case 1:
		return x.modCount
	case 2:
		return x.modTime
	default:
		if x.pending {
			return regs.VectorsVecPendingPendingMask
		}
		return 0
	}
}

func (d *Device) writeVector(r uint32, val uint32) {
	fn, v := r/0x40, int(r%0x40/4)
	if v >= len(d.vec) {
		return
	}
	x := &d.vec[v]
	switch fn {
	case 0:
		x.enable = val&regs.VectorsVecCtrlEnableMask != 0
		x.mask = val&regs.VectorsVecCtrlMaskMask != 0
		if !x.enable {
			x.owed = false
		}
		x.send() // unmasked: the held message leaves
	case 1:
		x.modCount = val & regs.VectorsVecModCountEntriesMask
	case 2:
		x.modTime = val
	default:
		if val&regs.VectorsVecPendingPendingMask != 0 {
			x.pending = false // write 1 to clear
		}
	}
}

// raise is one entry for vector v: an event (vector 0) or a CQE of an
// armed CQ.
func (d *Device) raise(v uint32) {
	x := &d.vec[v]
	x.unsignalled++
	if x.unsignalled >= max(x.modCount, 1) {
		x.due()
	} else if x.modTime != 0 {
		d.timed = true
	}
}

// due: the interrupt is due (PENDING; a message owed if enabled).
func (x *vector) due() {
	x.unsignalled = 0
	x.pending = true
	if x.enable {
		x.owed = true
	}
	x.send()
}

// send delivers an owed message of an enabled, unmasked vector; messages
// not yet taken from the channel coalesce.
func (x *vector) send() {
	if !x.owed || !x.enable || x.mask {
		return
	}
	x.owed = false
	x.messages++
	select {
	case x.ch <- struct{}{}:
	default:
	}
}

// settle ends a driver call: the entries a MOD_TIME held back are due.
func (d *Device) settle() {
	if !d.timed {
		return
	}
	d.timed = false
	for i := range d.vec {
		if x := &d.vec[i]; x.unsignalled > 0 && x.modTime != 0 {
			x.due()
		}
	}
}

// writeEvent puts an event on vector 0's event ring and raises vector 0.
// An event before EVENT_RING, or whose write the window check refuses, is
// lost and counted (LostEvents): it cannot be reported on the ring it
// failed to reach. The contract has no event-ring consumer index yet, so
// the model, as the device, overwrites the oldest entry when the ring
// wraps (docs/device.md, open point).
func (d *Device) writeEvent(e hostif.Event) {
	r := &d.t.Events
	if !r.Valid {
		d.lostEvents++
		return
	}
	e.Phase = hostif.Phase(r.PI, r.Log2)
	var b [hostif.EventSize]byte
	if err := e.Encode(b[:]); err != nil {
		panic("model: an event the model built does not encode: " + err.Error())
	}
	slot := uint64(r.PI) & (1<<r.Log2 - 1)
	if !d.dmaWrite(r.Ring+slot*hostif.EventSize, b[:]) {
		d.lostEvents++
		return
	}
	r.PI++
	d.raise(0)
}

// LostEvents is how many events found no event ring to go to.
func (d *Device) LostEvents() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lostEvents
}
