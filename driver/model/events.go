package model

import (
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regs"
)

// vector is one interrupt vector's registers (docs/device.md, RNIV) and its
// channel. MOD_COUNT and MOD_TIME are stored and read back but not yet
// applied: the model raises the vector at every event, whatever they say
// (moderation comes with the completion engine, a later session).
type vector struct {
	enable, mask bool
	modCount     uint32
	modTime      uint32
	pending      bool
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

// raise records an interrupt on vector v (PENDING) and delivers it if the
// vector is enabled and not masked; deliveries not yet taken coalesce.
func (d *Device) raise(v uint32) {
	x := &d.vec[v]
	x.pending = true
	if x.enable && !x.mask {
		x.messages++
		select {
		case x.ch <- struct{}{}:
		default:
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
