package model

import "github.com/openrnic/rnic/driver/hostif"

// qpDoorbell is a write to SQ_PI or RQ_PI (offset r in the QP doorbell
// region: 8 qpn, + 4 for the RQ). A QP that does not exist, or a value with
// bits above the 16-bit index, raises DOORBELL_BAD; a producer index more than the ring's size ahead of the
// consumer raises RING_OVERRUN and moves the QP to the error state
// (docs/device.md, RNDB). Otherwise the index is recorded and, on a QP in
// RTS or in error, the SQ or RQ engine runs to it.
func (d *Device) qpDoorbell(r, v uint32) {
	qpn, rq := r/8, r%8 == 4
	kind := hostif.DoorbellSQ
	if rq {
		kind = hostif.DoorbellRQ
	}
	if qpn >= uint32(len(d.t.QPs)) || d.t.QPs[qpn].State == QPFree || v>>16 != 0 {
		d.writeEvent(hostif.Event{Type: hostif.EventDoorbellBad, Detail: kind, Index: uint16(qpn), Value: v})
		return
	}
	q := &d.t.QPs[qpn]
	pi := uint16(v)
	ci, log2, dst := q.SQCI, q.SQLog2, &q.SQPI
	if rq {
		ci, log2, dst = q.RQCI, q.RQLog2, &q.RQPI
	}
	if uint32(pi-ci) > 1<<log2 {
		// More entries posted than the ring holds: the ring's contents
		// can no longer be trusted.
		d.writeEvent(hostif.Event{Type: hostif.EventRingOverrun, Detail: kind, Index: uint16(qpn), Value: uint32(pi)})
		d.fail(uint16(qpn), fault{local: true})
		return
	}
	*dst = pi
	// The engines run at once, inside this write: the model's time
	// passes in the driver's calls.
	if rq {
		d.runRQ(uint16(qpn))
	} else {
		d.runSQ(uint16(qpn))
	}
}

// cqDoorbell is a write to CQ_CI (offset r: 4 cqn). A CQ that does not
// exist, or a value with bits 29:16 set, raises DOORBELL_BAD.
func (d *Device) cqDoorbell(r, v uint32) {
	cqn := r / 4
	const known = 0xffff | 1<<30 | 1<<31
	if cqn >= uint32(len(d.t.CQs)) || !d.t.CQs[cqn].Valid || v&^known != 0 {
		d.writeEvent(hostif.Event{Type: hostif.EventDoorbellBad, Detail: hostif.DoorbellCQ, Index: uint16(cqn), Value: v})
		return
	}
	c := &d.t.CQs[cqn]
	c.CI = uint16(v)
	c.Arm = v&(1<<31) != 0
	c.ArmSolic = v&(1<<30) != 0
}
