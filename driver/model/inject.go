package model

import "github.com/openrnic/rnic/driver/hostif"

// The completion and event writers' rules without a data path: the oracle
// (cmd/rnic-oracle's model_* ops) drives the CQ writer and the event writer
// of the hardware (hw/rtl/rnic_cq.v, rnic_evq.v) with records no SQ or RQ
// engine made, and the model must answer them as its own engines' records.

// InjectCQE completes e into CQ cqn as the engines' completions do
// (complete: the overrun rule, the phase, the arm). The phase bit of e is
// ignored (the writer sets it). A cqn the build does not have is ignored.
func (d *Device) InjectCQE(cqn uint16, e hostif.CQE) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.settle()
	if int(cqn) >= len(d.t.CQs) {
		return
	}
	d.complete(cqn, e)
}

// InjectEvent puts e on the event ring as the device's own events go
// (writeEvent: lost before EVENT_RING or when refused, vector 0 raised).
func (d *Device) InjectEvent(e hostif.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.settle()
	d.writeEvent(e)
}

// LostCQEs is how many completions the CQs did not take: an overrun CQ's
// (the entry that found it full and every later one) and the entries whose
// write the window check refused.
func (d *Device) LostCQEs() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lostCQEs
}

// Messages is how many interrupt messages vector v has sent (each one a
// send on its Vector channel, which coalesces those not yet taken).
func (d *Device) Messages(v int) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if v < 0 || v >= len(d.vec) {
		return 0
	}
	return d.vec[v].messages
}

// InjectLocalFault fails QP qpn as a local fault of one of the device's
// engines does (fail with a local fault: QP_ERROR, a Terminate of RDMAP
// Local Catastrophic, everything outstanding flushed): the oracle stands
// it for another engine's fault when it checks one engine alone
// (hw/rtl/rnic_sq.v's xfail input: rnic_rq's or rnic_rresp's refused
// read). A QP not in RTS, or one the build does not have, is left alone.
func (d *Device) InjectLocalFault(qpn uint16) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.settle()
	if int(qpn) >= len(d.t.QPs) || d.t.QPs[qpn].State != QPRTS || d.run[qpn] == nil {
		return
	}
	d.fail(qpn, fault{local: true})
}

// RQPost is one RQ entry the RQ engine posted to a QP's sink (queue 0):
// the WR ID, the device address of its buffer (0 for length 0) and the
// length, as the hardware's RQ engine hands ddp_rx the buffer (post_*).
type RQPost struct {
	QPN  uint16
	ID   uint64
	Addr uint64
	Len  uint32
}

// RecordRQPosts makes the model record every RQ post from now on, for
// TakeRQPosts (cmd/rnic-oracle's rq_run compares them with hw/rtl/rnic_rq.v's).
func (d *Device) RecordRQPosts() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rqPostsOn = true
}

// TakeRQPosts returns the RQ posts recorded since the last call, in order.
func (d *Device) TakeRQPosts() []RQPost {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.rqPosts
	d.rqPosts = nil
	return p
}

// TxFraming is QP qpn's transmit framing as its last QP_RTS set it:
// markers and CRC on or off, the marker base and the sequence number of the
// first octet the device sends; ok is false for a QP that has had no QP_RTS.
// The mirror (driver/mirror) decodes both devices' transmit streams with it.
func (d *Device) TxFraming(qpn uint16) (markers, crc bool, base, seq uint32, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if int(qpn) >= len(d.t.QPs) {
		return false, false, 0, 0, false
	}
	switch q := &d.t.QPs[qpn]; q.State {
	case QPRTS, QPError, QPDrained:
		c := q.RTS
		return c.Flags&hostif.RTSMarkersTx != 0, c.Flags&hostif.RTSCRCTx != 0, c.TxMarkerBase, c.TxSeq, true
	}
	return false, false, 0, 0, false
}
