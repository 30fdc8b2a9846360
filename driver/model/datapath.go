package model

import (
	"encoding/binary"
	"math"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// The data path. Everything here runs under the device mutex, inside the
// driver call that caused it (a doorbell, a segment in, an admin command):
// the model is a step function with no goroutine of its own in its device
// logic, so two runs given the same calls produce the same octets, the same
// memory and the same CQEs, in the same order.
//
// Protocol logic is iwarp's: iwarp/rdmap builds the messages and
// dispatches what is received (rdmap.Stream, which owns the ddp.Sink and
// the outstanding-read queue), iwarp/ddp segments and places, iwarp/mpa
// frames and receives. The model adds what the contract (docs/device.md)
// adds: the rings, the MR table in front of every address, the window
// check, completions, events and the exception ring.

// qpRun is the data path state of a QP in RTS or in error after RTS.
type qpRun struct {
	framer *mpa.Framer
	rx     *mpa.Receiver
	sink   *ddp.Sink
	stream *rdmap.Stream
	rxSeq  uint32    // next TCP sequence number expected in
	txMSN  [3]uint32 // next MSN sent on QN 0, 1, 2 (RFC 5041 4.3: 1 on a fresh stream)
	mulpdu int
	ord    int
	reads  int       // Read Requests sent and not yet answered (at most ord)
	pend   []*pendWR // fetched SQ entries not yet completed, in SQ order
	rq     []posted  // the RQ entries posted to the sink, in order
	// rxOp is the opcode of the received segment being processed: an
	// error in an untagged Send lands on the oldest receive, one in a
	// Read Response on the oldest send entry (fail).
	rxOp rdmap.Opcode
}

// posted is an RQ entry posted to the sink: its ID and the memory the
// sink will write (Free refuses to unmap it).
type posted struct {
	id   uint64
	addr uint64
	n    uint64
}

// pendWR is a fetched SQ entry waiting for its completion: completions
// leave in SQ order, so a Write after a Read completes after it.
type pendWR struct {
	cqe      hostif.CQE
	signaled bool
	done     bool
}

// streamID is the DDP stream id of a QP: its number plus one, since the
// STag table's 0 means "bound to no stream" (ddp.Region.Stream).
func streamID(qpn uint16) uint64 { return uint64(qpn) + 1 }

// startQP builds the data path of a QP that QP_RTS moves to Full
// Operation (RFC 5044 7.1.2): framer and receiver with the negotiated
// markers, CRCs and marker bases, the sink with IRD buffers for inbound
// Read Requests (RFC 5040 5.2: the IRD bounds them) and room for one
// Terminate, and the MSNs the host's software path left.
func (d *Device) startQP(qpn uint16) {
	q := &d.t.QPs[qpn]
	c := q.RTS
	r := &qpRun{
		rxSeq:  c.RxSeq,
		txMSN:  [3]uint32{ddp.FirstMSN, ddp.FirstMSN, ddp.FirstMSN},
		mulpdu: int(c.MULPDU),
		ord:    int(c.ORD),
	}
	// The framer's next octet is the QP_RTS's TX sequence number: Full
	// Operation may have started earlier than QP_RTS (the host's RTR).
	r.framer = mpa.NewFramerAt(c.Flags&hostif.RTSMarkersTx != 0, c.Flags&hostif.RTSCRCTx != 0, c.TxMarkerBase, c.TxSeq)
	r.rx = mpa.NewReceiverAt(c.Flags&hostif.RTSMarkersRx != 0, c.Flags&hostif.RTSCRCRx != 0, c.RxMarkerBase, c.RxSeq)
	r.sink = ddp.NewSink(uint32(q.PD), streamID(qpn), d.stags, rdmap.NumQueues)
	r.sink.StartMSN(rdmap.QNSend, c.RxMSNSend)
	r.sink.StartMSN(rdmap.QNReadRequest, c.RxMSNReadRq)
	r.stream = rdmap.NewStream(r.sink, d.stags, uint32(q.PD), streamID(qpn))
	for i := 0; i < int(c.IRD); i++ {
		r.sink.Post(rdmap.QNReadRequest, make([]byte, rdmap.ReadRequestLen), 0)
	}
	r.sink.Post(rdmap.QNTerminate, make([]byte, rdmap.MaxTerminateLen), 0)
	d.run[qpn] = r
	d.runRQ(qpn)
	d.runSQ(qpn)
}

// mrCheck translates n octets at TO to of the STag stag for a QP of PD pd
// needing the access bits need (docs/device.md, "Send queue entry": valid,
// key, PD, access, bounds) and returns the device address of the first.
func (d *Device) mrCheck(stag uint32, pd uint16, to, n uint64, need uint8) (uint64, bool) {
	idx := stag >> 8
	if idx >= uint32(len(d.t.MRs)) {
		return 0, false
	}
	m := &d.t.MRs[idx]
	if !m.Valid || m.Key != uint8(stag) || m.PD != pd || m.Access&need != need {
		return 0, false
	}
	if to < m.BaseTO || to > math.MaxUint64-n || to+n > m.BaseTO+m.Length {
		return 0, false
	}
	return m.Addr + (to - m.BaseTO), true
}

// refused reports a DMA access the window check (or the absence of
// memory, the IOMMU's refusal) stopped: event DMA_REFUSED (docs/device.md,
// "DMA").
func (d *Device) refused(what uint8, index uint16, addr uint64, n int) {
	d.writeEvent(hostif.Event{Type: hostif.EventDMARefused, Detail: what, Index: index, Value: uint32(n),
		Address: addr & (1<<56 - 1)})
}

// emit queues one segment for the network seam.
func (d *Device) emit(qpn uint16, seq uint32, octets []byte) {
	d.net.push(qpn, seq, octets)
}

// send segments m by the QP's MULPDU (RFC 5041 5.2) and frames each DDP
// segment as one FPDU (RFC 5044 4), each handed out as one segment with
// the TCP sequence number of its first octet: every segment starts with
// an FPDU (FPDU Alignment, RFC 5044 appendix A).
func (d *Device) send(qpn uint16, m *rdmap.Message) error {
	r := d.run[qpn]
	segs, err := m.Segments(r.mulpdu)
	if err != nil {
		return err
	}
	var hdr [ddp.UntaggedHeaderLen]byte
	for {
		h, p, ok := segs.Next()
		if !ok {
			return nil
		}
		seq := r.framer.Seq()
		out, err := r.framer.AppendFPDU(nil, h.Append(hdr[:0]), p)
		if err != nil {
			return err
		}
		d.emit(qpn, seq, out)
		d.cnt.add(regs.CountersTxFPDUs, 1)
		d.cnt.add(regs.CountersTxOctets, uint64(len(out)))
	}
}

// --- CQs ---

// complete writes a CQE into CQ cqn (docs/device.md, "Completion queue
// entry"): octets 0..30 and the phase octet in one write, never past the
// driver's consumer index. A full CQ raises CQ_OVERRUN and moves the QPs
// that complete into it to the error state; its later entries are lost
// (counted). An armed CQ raises its vector at the entry (solicited-only:
// at a Send with Solicited Event or an error).
func (d *Device) complete(cqn uint16, e hostif.CQE) {
	c := &d.t.CQs[cqn]
	if !c.Valid {
		return
	}
	if c.Overrun {
		d.lostCQEs++
		return
	}
	if uint32(c.PI-c.CI) >= 1<<c.Log2 {
		c.Overrun = true
		d.lostCQEs++
		d.writeEvent(hostif.Event{Type: hostif.EventCQOverrun, Index: cqn})
		for i := range d.t.QPs {
			q := &d.t.QPs[i]
			if (q.State == QPRTS || q.State == QPCreated) && (q.SendCQ == cqn || q.RecvCQ == cqn) {
				d.fail(uint16(i), fault{local: true})
			}
		}
		return
	}
	e.Phase = hostif.Phase(c.PI, c.Log2)
	var b [hostif.CQESize]byte
	if err := e.Encode(b[:]); err != nil {
		panic("model: a CQE the model built does not encode: " + err.Error())
	}
	addr := c.Ring + uint64(c.PI&(1<<c.Log2-1))*hostif.CQESize
	if !d.dmaWrite(addr, b[:]) {
		d.lostCQEs++
		d.refused(hostif.DMAForCQE, cqn, addr, hostif.CQESize)
		return
	}
	c.PI++
	if c.Arm && (!c.ArmSolic || e.Solicited || e.Status != hostif.StatusSuccess) {
		c.Arm, c.ArmSolic = false, false
		d.raise(c.Vector)
	}
}

// retire completes the SQ entries at the head of the pending list that are
// done, in SQ order: unsignalled successes leave no CQE.
func (d *Device) retire(qpn uint16) {
	r := d.run[qpn]
	q := &d.t.QPs[qpn]
	for len(r.pend) > 0 && r.pend[0].done {
		p := r.pend[0]
		r.pend = r.pend[1:]
		if p.signaled || p.cqe.Status != hostif.StatusSuccess {
			d.complete(q.SendCQ, p.cqe)
		}
	}
}

// --- the SQ engine ---

// runSQ fetches and executes the QP's SQ entries from its consumer index
// to the producer index the driver rang. In RTS it stops at a Read beyond
// the ORD (RFC 5040 5.2: no more Read Requests outstanding than the ORD)
// or a fenced entry behind an unanswered Read, and resumes when a Read
// Response completes. In the error state every entry completes FLUSHED.
func (d *Device) runSQ(qpn uint16) {
	q := &d.t.QPs[qpn]
	r := d.run[qpn]
	for q.SQCI != q.SQPI {
		if q.State != QPRTS && q.State != QPError || r == nil {
			return
		}
		addr := q.SQRing + uint64(q.SQCI&(1<<q.SQLog2-1))*hostif.SQESize
		raw, ok := d.dmaRead(addr, hostif.SQESize)
		if !ok {
			d.refused(hostif.DMAForSQWQE, qpn, addr, hostif.SQESize)
			d.fail(qpn, fault{local: true})
			return
		}
		if q.State == QPError {
			q.SQCI++
			d.complete(q.SendCQ, hostif.CQE{ID: binary.LittleEndian.Uint64(raw[8:]), QPN: qpn, Op: rawOp(raw[0]),
				Status: hostif.StatusFlushed})
			continue
		}
		e, err := hostif.DecodeSQE(raw)
		if err == nil && e.Op == hostif.OpRead {
			if r.ord == 0 {
				// The connection negotiated no outbound Reads
				// (RFC 6581 3, ORD 0): the entry cannot run.
				err = errNoORD
			} else if r.reads >= r.ord {
				return // resumes at the next Read Response
			}
		}
		if err == nil && e.Fence && r.reads > 0 {
			return // the fence: every Read before it completes first
		}
		q.SQCI++
		if err != nil {
			d.sqFault(qpn, rawOp(raw[0]), binary.LittleEndian.Uint64(raw[8:]), hostif.StatusBadWQE)
			return
		}
		if !d.execSQE(qpn, &e) {
			return
		}
	}
}

// rawOp is the CQE opcode of an SQ entry's octet 0: the opcode when it is
// one, else 0 (a CQE has no value for an unknown opcode).
func rawOp(b byte) hostif.Opcode {
	if hostif.Opcode(b).InSQ() {
		return hostif.Opcode(b)
	}
	return hostif.OpWrite
}

type errString string

func (e errString) Error() string { return string(e) }

const errNoORD = errString("model: an RDMA Read on a connection with ORD 0")

// sqFault completes an SQ entry that failed its own checks with st and
// moves the QP to the error state: nothing of it is sent (docs/device.md,
// "Send queue entry").
func (d *Device) sqFault(qpn uint16, op hostif.Opcode, id uint64, st hostif.Status) {
	r := d.run[qpn]
	r.pend = append(r.pend, &pendWR{cqe: hostif.CQE{ID: id, QPN: qpn, Op: op, Status: st}, done: true})
	d.fail(qpn, fault{local: true})
}

// execSQE runs one fetched SQ entry; false if the QP left RTS.
func (d *Device) execSQE(qpn uint16, e *hostif.SQE) bool {
	q := &d.t.QPs[qpn]
	r := d.run[qpn]
	n := uint64(e.Length)
	if e.Op == hostif.OpRead {
		// The Read's sink is the local buffer, written by the Read
		// Response: local write. Its placement also needs remote write
		// (RFC 5040 5.2, the Read Response is a tagged message), which
		// the stream checks when it arrives.
		if n > 0 {
			if _, ok := d.mrCheck(e.LKey, q.PD, e.LocalTO, n, hostif.AccessLocalWrite); !ok {
				d.sqFault(qpn, e.Op, e.ID, hostif.StatusLocalAccess)
				return false
			}
		}
		p := &pendWR{cqe: hostif.CQE{ID: e.ID, QPN: qpn, Op: e.Op}, signaled: e.Signaled}
		r.pend = append(r.pend, p)
		rr := rdmap.ReadRequest{SinkSTag: e.LKey, SinkTO: e.LocalTO, Size: e.Length, SourceSTag: e.RKey, SourceTO: e.RemoteTO}
		// Recorded before the request can reach the peer, in sending
		// order (RFC 5040 5.2.1).
		r.stream.ExpectRead(&rdmap.OutstandingRead{SinkSTag: rr.SinkSTag, SinkTO: rr.SinkTO, Len: n, Ref: p})
		r.reads++
		m := rdmap.NewReadRequest(r.txMSN[rdmap.QNReadRequest], rr)
		r.txMSN[rdmap.QNReadRequest]++
		if err := d.send(qpn, &m); err != nil {
			d.fail(qpn, fault{local: true})
			return false
		}
		return true
	}
	var payload []byte
	if n > 0 {
		addr, ok := d.mrCheck(e.LKey, q.PD, e.LocalTO, n, hostif.AccessLocalRead)
		if !ok {
			d.sqFault(qpn, e.Op, e.ID, hostif.StatusLocalAccess)
			return false
		}
		if payload, ok = d.dmaRead(addr, int(n)); !ok {
			d.refused(hostif.DMAForPayload, qpn, addr, int(n))
			d.sqFault(qpn, e.Op, e.ID, hostif.StatusLocalAccess)
			return false
		}
	}
	var m rdmap.Message
	msn := func() uint32 { v := r.txMSN[rdmap.QNSend]; r.txMSN[rdmap.QNSend]++; return v }
	switch e.Op {
	case hostif.OpWrite:
		if e.InvalidateSTag != 0 {
			d.sqFault(qpn, e.Op, e.ID, hostif.StatusBadWQE)
			return false
		}
		m = rdmap.NewWrite(e.RKey, e.RemoteTO, payload)
	case hostif.OpSend, hostif.OpSendSE:
		if e.InvalidateSTag != 0 {
			// RsvdULP[8:39] is reserved for the Sends without
			// Invalidate (RFC 5040 4.1): a driver bug.
			d.sqFault(qpn, e.Op, e.ID, hostif.StatusBadWQE)
			return false
		}
		if e.Op == hostif.OpSend {
			m = rdmap.NewSend(msn(), payload)
		} else {
			m = rdmap.NewSendSE(msn(), payload)
		}
	case hostif.OpSendInv:
		m = rdmap.NewSendInvalidate(msn(), e.InvalidateSTag, payload)
	case hostif.OpSendSEInv:
		m = rdmap.NewSendSEInvalidate(msn(), e.InvalidateSTag, payload)
	}
	if err := d.send(qpn, &m); err != nil {
		// Only a MULPDU too small for a header gets here.
		d.sqFault(qpn, e.Op, e.ID, hostif.StatusBadWQE)
		return false
	}
	// A Write or Send is complete once it is on the wire (RFC 5040 5.1).
	r.pend = append(r.pend, &pendWR{cqe: hostif.CQE{ID: e.ID, QPN: qpn, Op: e.Op, Length: e.Length},
		signaled: e.Signaled, done: true})
	d.retire(qpn)
	return true
}

// --- the RQ engine ---

// runRQ fetches the QP's RQ entries, checks each buffer in the MR table
// (valid, key, PD, local write, bounds) and posts it to the sink's queue 0
// (docs/device.md, "Receive queue entry"). One that fails completes with
// LOCAL_ACCESS and is not posted; a malformed one with BAD_WQE. In the
// error state every entry completes FLUSHED.
func (d *Device) runRQ(qpn uint16) {
	q := &d.t.QPs[qpn]
	r := d.run[qpn]
	for q.RQCI != q.RQPI {
		if q.State != QPRTS && q.State != QPError || r == nil {
			return
		}
		addr := q.RQRing + uint64(q.RQCI&(1<<q.RQLog2-1))*hostif.RQESize
		raw, ok := d.dmaRead(addr, hostif.RQESize)
		if !ok {
			d.refused(hostif.DMAForRQWQE, qpn, addr, hostif.RQESize)
			d.fail(qpn, fault{local: true})
			return
		}
		q.RQCI++
		id := binary.LittleEndian.Uint64(raw)
		if q.State == QPError {
			d.complete(q.RecvCQ, hostif.CQE{ID: id, QPN: qpn, Op: hostif.OpRecv, Status: hostif.StatusFlushed})
			continue
		}
		e, err := hostif.DecodeRQE(raw)
		if err != nil {
			d.complete(q.RecvCQ, hostif.CQE{ID: id, QPN: qpn, Op: hostif.OpRecv, Status: hostif.StatusBadWQE})
			continue
		}
		var buf []byte
		var a uint64
		if e.Length > 0 {
			var ok bool
			a, ok = d.mrCheck(e.LKey, q.PD, e.LocalTO, uint64(e.Length), hostif.AccessLocalWrite)
			if ok {
				buf, ok = d.hostMem(a, int(e.Length)) // the placement's memory, window-checked now
				if !ok {
					d.refused(hostif.DMAForPlacement, qpn, a, int(e.Length))
				}
			}
			if !ok {
				d.complete(q.RecvCQ, hostif.CQE{ID: e.ID, QPN: qpn, Op: hostif.OpRecv, Status: hostif.StatusLocalAccess})
				continue
			}
		}
		r.sink.Post(rdmap.QNSend, buf, e.ID)
		r.rq = append(r.rq, posted{id: e.ID, addr: a, n: uint64(e.Length)})
		if d.rqPostsOn {
			d.rqPosts = append(d.rqPosts, RQPost{QPN: qpn, ID: e.ID, Addr: a, Len: e.Length})
		}
	}
}

// --- errors ---

// fault is why a QP leaves RTS.
type fault struct {
	local  bool             // the device's own (a WQE, a DMA refusal, a full CQ): Terminate Local Catastrophic
	err    *rdmap.Error     // an error in the peer's stream: the Terminate sent
	remote *rdmap.Terminate // the peer's Terminate
	conn   bool             // MPA found the stream broken (CRC, framing): status CONN
}

// fail moves a QP to the error state (RFC 5040 5.3: the stream ends):
// it sends a Terminate for a local error, raises QP_ERROR (or
// TERMINATE_RECEIVED) with the Terminate's layer, etype and code, and
// completes everything outstanding. The work request the error concerns
// completes with the error's status (docs/device.md, "Completion queue
// entry"): the oldest receive for an untagged Send segment, the oldest
// send entry for a Read Response or the peer's Terminate; every other
// outstanding one completes FLUSHED, as does every entry fetched later.
func (d *Device) fail(qpn uint16, f fault) {
	q := &d.t.QPs[qpn]
	if q.State != QPRTS {
		if q.State == QPCreated {
			q.State = QPError
		}
		return
	}
	q.State = QPError
	r := d.run[qpn]
	var term rdmap.Terminate
	st := hostif.StatusFlushed
	target := 0 // 1: the oldest send entry, 2: the oldest receive
	switch {
	case f.remote != nil:
		d.cnt.add(regs.CountersRxTerminates, 1)
		term, st, target = *f.remote, hostif.StatusRemote, 1
		if !hasUndone(r.pend) {
			target = 2
		}
	case f.err != nil:
		term, st = f.err.Terminate(), hostif.StatusProtocol
		if f.conn {
			st = hostif.StatusConn
		} else {
			d.countRxError(term.Layer, term.EType)
		}
		switch {
		case r.rxOp == rdmap.OpReadResponse:
			target = 1
		case r.rxOp == rdmap.OpSend || r.rxOp == rdmap.OpSendSE || r.rxOp == rdmap.OpSendInvalidate ||
			r.rxOp == rdmap.OpSendSEInvalidate:
			target = 2
		}
	default:
		// RFC 5040 7: Local Catastrophic Error, layer RDMAP, etype 0,
		// code 0; the peer learns the stream ended.
		term = rdmap.Terminate{Layer: rdmap.LayerRDMAP, EType: rdmap.ETypeLocalCatastrophic, Code: rdmap.CodeLocalCatastrophic}
	}
	if f.remote == nil {
		m, err := rdmap.NewTerminate(r.txMSN[rdmap.QNTerminate], &term)
		if err == nil {
			r.txMSN[rdmap.QNTerminate]++
			if d.send(qpn, &m) == nil {
				d.cnt.add(regs.CountersTxTerminates, 1)
			}
		}
	}
	le := uint8(term.Layer)<<4 | term.EType&0xf
	ev := hostif.EventQPError
	if f.remote != nil {
		ev = hostif.EventTerminateReceived
	}
	d.writeEvent(hostif.Event{Type: ev, Detail: le, Index: qpn, Value: uint32(term.Code)})
	withTerm := func(c *hostif.CQE, s hostif.Status) {
		c.Status = s
		if s.CarriesTerminate() {
			c.TermLayerEType, c.TermCode = le, term.Code
		}
	}
	r.sink.Fail(&term) // the sink places nothing more
	r.stream.TakeReads()
	r.reads = 0
	first := true
	for _, p := range r.pend {
		if p.done {
			continue
		}
		p.done = true
		if first && target == 1 {
			withTerm(&p.cqe, st)
		} else {
			p.cqe.Status = hostif.StatusFlushed
		}
		first = false
	}
	d.retire(qpn)
	for i, p := range r.rq {
		c := hostif.CQE{ID: p.id, QPN: qpn, Op: hostif.OpRecv}
		if i == 0 && target == 2 {
			withTerm(&c, st)
		} else {
			c.Status = hostif.StatusFlushed
		}
		d.complete(q.RecvCQ, c)
	}
	r.rq = nil
	d.runRQ(qpn)
	d.runSQ(qpn)
}

func hasUndone(p []*pendWR) bool {
	for _, x := range p {
		if !x.done {
			return true
		}
	}
	return false
}

// drainQP is QP_DRAIN's work on a QP with a data path: every SQ entry
// fetched and not completed completes FLUSHED, every receive posted too,
// and the receive side takes nothing more (docs/device.md, Fences).
func (d *Device) drainQP(qpn uint16) {
	r := d.run[qpn]
	if r == nil {
		return
	}
	q := &d.t.QPs[qpn]
	for _, p := range r.pend {
		if !p.done {
			p.done, p.cqe.Status = true, hostif.StatusFlushed
		}
	}
	d.retire(qpn)
	for _, p := range r.rq {
		d.complete(q.RecvCQ, hostif.CQE{ID: p.id, QPN: qpn, Op: hostif.OpRecv, Status: hostif.StatusFlushed})
	}
	delete(d.run, qpn)
}

// syncRegions mirrors the MR table into the STag table iwarp/ddp places
// through: every valid entry whose memory lies in a DMA window and is
// mapped becomes a ddp.Region over that memory, with the entry's remote
// rights (MR_WRITE access bits 2 and 3), PD and bound QP (its stream). It
// runs after every change to the MR table, the windows or the memory
// (MR_WRITE, MR_INVALIDATE, a Send with Invalidate, DMA_WINDOW, Free), so
// the stream never writes where the device may not. A valid entry left
// out (its memory outside every window) is what placementMapped and
// unmappedSource report as DMA_REFUSED.
func (d *Device) syncRegions() {
	for i, ok := range d.registered {
		if ok {
			if err := d.stags.Deregister(d.regSTag[i]); err != nil {
				panic("model: the STag table lost an entry the model registered: " + err.Error())
			}
			d.registered[i] = false
		}
	}
	for i, m := range d.t.MRs {
		if !m.Valid {
			continue
		}
		var buf []byte
		if m.Length > 0 {
			if m.Length > math.MaxInt32 || !d.t.inWindow(m.Addr, m.Length) {
				continue
			}
			var ok bool
			if buf, ok = d.mem.find(m.Addr, int(m.Length)); !ok {
				continue
			}
		}
		var acc ddp.Access
		if m.Access&hostif.AccessRemoteRead != 0 {
			acc |= ddp.RemoteRead
		}
		if m.Access&hostif.AccessRemoteWrite != 0 {
			acc |= ddp.RemoteWrite
		}
		var stream uint64
		if m.Bound != hostif.NotBound {
			stream = streamID(m.Bound)
		}
		stag := uint32(i)<<8 | uint32(m.Key)
		if err := d.stags.Register(ddp.Region{STag: stag, PD: uint32(m.PD), Stream: stream, Access: acc, Base: m.BaseTO, Buf: buf}); err != nil {
			panic("model: the STag table refused an MR entry: " + err.Error())
		}
		d.registered[i], d.regSTag[i] = true, stag
	}
}

// unmapped reports whether stag names a valid MR entry, with its key, that
// syncRegions left out of the STag table (its memory is outside every
// window), and the device address of TO to in it.
func (d *Device) unmapped(stag uint32, to uint64) (uint64, bool) {
	idx := stag >> 8
	if idx >= uint32(len(d.t.MRs)) {
		return 0, false
	}
	m := &d.t.MRs[idx]
	if !m.Valid || m.Key != uint8(stag) || d.registered[idx] || m.Length == 0 {
		return 0, false
	}
	addr := m.Addr
	if to >= m.BaseTO {
		addr += to - m.BaseTO
	}
	return addr, true
}
