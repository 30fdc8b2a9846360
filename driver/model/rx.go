package model

import (
	"errors"
	"fmt"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// segIn takes one segment of a connection's TCP stream (docs/device.md,
// "Shape": rnic_rx's s_axis). A segment the data path does not take goes
// to the exception ring: a QP not in RTS (not enabled), a QP in error, a
// segment that starts past the next expected octet (out of order: the
// host gives it back when the hole closes), one wholly before it
// (duplicate), an empty one; the first reason that applies in the order
// not enabled, in error, empty, out of order, duplicate (mpa_rx_align's).
// A segment that starts before the next expected octet and runs past it
// has its new part taken (TCP retransmission with more data).
func (d *Device) segIn(qpn uint16, seq uint32, p []byte) error {
	if uint32(qpn) >= uint32(len(d.t.QPs)) {
		return fmt.Errorf("model: segment for QP %d; the device has QPs 0..%d (ID cap_conns): the relay's QP table is wrong",
			qpn, len(d.t.QPs)-1)
	}
	q := &d.t.QPs[qpn]
	r := d.run[qpn]
	// The reasons in mpa_rx_align's order (docs/device.md, "Event ring and
	// exception ring"): the QP's state first, then an empty segment.
	switch {
	case q.State != QPRTS && q.State != QPError || r == nil:
		d.exception(qpn, seq, p, hostif.ExcNotEnabled)
		return nil
	case q.State == QPError:
		d.exception(qpn, seq, p, hostif.ExcInError)
		return nil
	case len(p) == 0:
		d.exception(qpn, seq, p, hostif.ExcEmpty)
		return nil
	}
	if ahead := int32(seq - r.rxSeq); ahead > 0 {
		d.exception(qpn, seq, p, hostif.ExcOutOfOrder)
		return nil
	} else if ahead < 0 {
		old := uint32(-ahead)
		if old >= uint32(len(p)) {
			d.exception(qpn, seq, p, hostif.ExcDuplicate)
			return nil
		}
		p, seq = p[old:], r.rxSeq
	}
	d.cnt.add(regs.CountersRxOctets, uint64(len(p)))
	r.rxSeq += uint32(len(p))
	err := r.rx.Feed(p, func(_ uint32, ulpdu []byte) error { return d.ulpdu(qpn, ulpdu) })
	if err == nil || d.t.QPs[qpn].State != QPRTS {
		return nil
	}
	var me *mpa.Error
	if errors.As(err, &me) {
		// RFC 5044 8: the stream is broken (CRC, marker); the
		// Terminate names the LLP error (RFC 5040 4.8, layer 2).
		re := rdmap.MPAError(uint8(me.Code), nil, 0)
		switch me.Code {
		case mpa.ErrCRC:
			d.cnt.add(regs.CountersRxCRCErrors, 1)
		case mpa.ErrMarker:
			d.cnt.add(regs.CountersRxMarkerErrors, 1)
		}
		d.fail(qpn, fault{err: re, conn: true})
	}
	return nil
}

// ulpdu handles one ULPDU MPA delivered in order: rdmap.Stream classifies,
// checks and places it (tagged through the STag table the MR table
// mirrors, untagged into the posted RQ buffers), and the model acts on
// what it completes. An error ends the stream with a Terminate.
func (d *Device) ulpdu(qpn uint16, u []byte) error {
	r := d.run[qpn]
	d.cnt.add(regs.CountersRxFPDUs, 1)
	r.rxOp = 0xff
	if h, pl, err := ddp.ParseHeader(u); err == nil {
		_, r.rxOp = rdmap.ParseControl(h.ULPCtrl)
		if h.Tagged && len(pl) > 0 && !d.placementMapped(qpn, &h, len(pl)) {
			e := &rdmap.Error{Layer: rdmap.LayerRDMAP, Type: rdmap.ETypeLocalCatastrophic, Code: rdmap.CodeLocalCatastrophic,
				DDPHeader: h.Append(nil), SegmentLen: len(u), Detail: "the placement's memory is outside every DMA window"}
			r.sink.Fail(e)
			d.fail(qpn, fault{err: e})
			return e
		}
	}
	ev, err := r.stream.Receive(u)
	if err != nil {
		d.fail(qpn, fault{err: rdmap.ErrorFrom(err)})
		return err
	}
	if ev.Placed && ev.Len > 0 {
		d.cnt.add(regs.CountersDMAWrites, 1) // the segment's placement
	}
	q := &d.t.QPs[qpn]
	switch ev.Kind {
	case rdmap.EventReadResponse:
		p := ev.Read.Ref.(*pendWR)
		p.done, p.cqe.Length = true, uint32(ev.Read.Got)
		r.reads--
		d.retire(qpn)
		d.runSQ(qpn) // a Read beyond the ORD, or a fence, may go now
	case rdmap.EventReadRequest:
		return d.readResponse(qpn, &ev)
	case rdmap.EventSend:
		c := hostif.CQE{ID: ev.Delivery.ID, Length: ev.Delivery.MsgLen, QPN: qpn, Op: hostif.OpRecv,
			Solicited: ev.Opcode.SolicitedEvent()}
		if ev.Invalidated != 0 {
			// RFC 5040 5.4 (Send with Invalidate): the STag is
			// invalid from now on, in the MR table as in the stream's.
			c.InvalidatedSTag, c.Invalidated = ev.Invalidated, true
			d.t.MRs[ev.Invalidated>>8].Valid = false
			d.syncRegions()
		}
		r.rq = r.rq[1:]
		d.complete(q.RecvCQ, c)
	case rdmap.EventTerminate:
		d.fail(qpn, fault{remote: ev.Terminate})
		return ev.Terminate
	}
	return nil
}

// placementMapped reports whether a tagged segment places into memory the
// device may write. A segment whose STag names a valid MR entry whose
// region lost its window after MR_WRITE raises DMA_REFUSED and fails the
// QP (docs/device.md, "DMA"); segments whose STag fails its own checks go
// on to the stream, which reports them as RFC 5041 7.2 says.
func (d *Device) placementMapped(qpn uint16, h *ddp.Header, n int) bool {
	addr, gone := d.unmapped(h.STag, h.TO)
	if gone {
		d.refused(hostif.DMAForPlacement, qpn, addr, n)
	}
	return !gone
}

// readResponse answers a delivered Read Request (RFC 5040 4.4, 5.2): the
// source is checked in the STag table (valid, PD, stream, remote read,
// bounds: rdmap.ReadSource) and by the window check, then sent back as a
// Read Response to the sink STag and TO the request named. The QN 1
// buffer, one IRD credit, is posted again at once: the model answers each
// request before it takes the next segment.
func (d *Device) readResponse(qpn uint16, ev *rdmap.Event) error {
	r := d.run[qpn]
	q := &d.t.QPs[qpn]
	rr := &ev.ReadRequest
	if addr, gone := d.unmapped(rr.SourceSTag, rr.SourceTO); gone && rr.Size > 0 {
		d.refused(hostif.DMAForPayload, qpn, addr, int(rr.Size))
		re := &rdmap.Error{Layer: rdmap.LayerRDMAP, Type: rdmap.ETypeLocalCatastrophic, Code: rdmap.CodeLocalCatastrophic,
			DDPHeader: ev.Header.Append(nil), RDMAHeader: rr.Append(nil),
			Detail: "the Read's source memory is outside every DMA window"}
		r.sink.Fail(re)
		d.fail(qpn, fault{err: re})
		return re
	}
	data, err := rdmap.ReadSource(d.stags, uint32(q.PD), streamID(qpn), &ev.Header, rr)
	if err != nil {
		re := rdmap.ErrorFrom(err)
		r.sink.Fail(re)
		d.fail(qpn, fault{err: re})
		return err
	}
	if len(data) > 0 {
		d.cnt.add(regs.CountersDMAReads, 1) // the source, framed below
	}
	m := rdmap.NewReadResponse(rr.SinkSTag, rr.SinkTO, data)
	if err := d.send(qpn, &m); err != nil {
		d.fail(qpn, fault{local: true})
		return err
	}
	r.sink.Post(rdmap.QNReadRequest, ev.Delivery.Buf, 0)
	return nil
}

// exception writes a segment the data path does not take to the
// exception ring, cut into buffers of the ring's buffer size (a 16-octet
// header, then the octets), and raises EXCEPTION for each (docs/device.md,
// "Event ring and exception ring"). The contract has no consumer index
// for the exception ring yet: the model overwrites the oldest buffer when
// it wraps, as it does the event ring (open point).
func (d *Device) exception(qpn uint16, seq uint32, p []byte, why hostif.ExcReason) {
	ev := &d.t.Events
	if !ev.Valid {
		d.lostEvents++
		return
	}
	room := 1<<ev.ExcBufLog2 - hostif.ExcHeaderLen
	for first := true; first || len(p) > 0; first = false {
		n := min(len(p), room)
		h := hostif.ExcHeader{QPN: qpn, Length: uint16(n), Seq: seq, Reason: why, Phase: hostif.Phase(ev.ExcPI, ev.ExcLog2)}
		b := make([]byte, hostif.ExcHeaderLen+n)
		if err := h.Encode(b); err != nil {
			panic("model: an exception header the model built does not encode: " + err.Error())
		}
		copy(b[hostif.ExcHeaderLen:], p[:n])
		addr := ev.ExcRing + uint64(ev.ExcPI&(1<<ev.ExcLog2-1))<<ev.ExcBufLog2
		if !d.dmaWrite(addr, b) {
			d.refused(hostif.DMAForException, qpn, addr, len(b))
			return
		}
		ev.ExcPI++
		d.cnt.add(excCounter[why], 1)
		d.writeEvent(hostif.Event{Type: hostif.EventException, Detail: uint8(why), Index: qpn, Value: uint32(ev.ExcPI)})
		p, seq = p[n:], seq+uint32(n)
	}
}

var excCounter = map[hostif.ExcReason]uint32{
	hostif.ExcNotEnabled: regs.CountersRxExcNotEnabled,
	hostif.ExcInError:    regs.CountersRxExcInError,
	hostif.ExcOutOfOrder: regs.CountersRxExcOutOfOrder,
	hostif.ExcDuplicate:  regs.CountersRxExcDuplicate,
	hostif.ExcEmpty:      regs.CountersRxExcEmpty,
}

// countRxError counts an error found in the peer's stream by its
// Terminate's layer and type (RFC 5040 4.8; the counters block).
func (d *Device) countRxError(l rdmap.Layer, etype uint8) {
	switch {
	case l == rdmap.LayerRDMAP && etype == rdmap.ETypeLocalCatastrophic:
		d.cnt.add(regs.CountersRxRDMAPCatastrophic, 1)
	case l == rdmap.LayerRDMAP && etype == rdmap.ETypeRemoteProtection:
		d.cnt.add(regs.CountersRxRDMAPProtection, 1)
	case l == rdmap.LayerRDMAP && etype == rdmap.ETypeRemoteOperation:
		d.cnt.add(regs.CountersRxRDMAPOperation, 1)
	case l == rdmap.LayerDDP && etype == rdmap.ETypeTaggedBuffer:
		d.cnt.add(regs.CountersRxDDPTagged, 1)
	case l == rdmap.LayerDDP && etype == rdmap.ETypeUntaggedBuffer:
		d.cnt.add(regs.CountersRxDDPUntagged, 1)
	}
}

// PlaceEarly places what the device may place early from an out-of-order
// segment of QP qpn, as if its receive path had searched it (rnic_rx.v:
// mpa_rx_ooo finds the FPDUs wholly inside a reason-3 segment through its
// markers, RFC 5044 6 cases 2 and 3, and ddp_rx places their ULPDUs early,
// RFC 5041 5.3: placement may come before delivery). The model does not
// do it on its own (segIn hands the segment to the exception ring and
// places nothing until the host gives it back in order); the mirror
// (driver/mirror) calls it after segIn so that the shadow's memory holds
// what the device may write before that (docs/device.md, "Sim versus model
// at run time"). Whether the device searches a segment depends on its
// timing (mpa_rx_ooo skips one that comes while it searches another), so
// the model places every FPDU it could: the octets are the ones the
// in-order pass places later, so a device that did not place them early
// writes the same octets then.
//
// Only a QP in RTS with markers on its receive side and a non-empty
// segment past the next expected octet is searched; a ULPDU is placed
// when ddp.Sink.Place's checks pass against the stream's state now (the
// device checks against its state when the ULPDU comes; both are before
// the in-order pass) and, tagged, its STag's memory is mapped. Only Writes,
// Read Responses and Sends are placed: host memory is what is compared. No
// counter moves (rnic_rx counts in-order placements only). It returns the
// ULPDUs placed.
func (d *Device) PlaceEarly(qpn uint16, seq uint32, p []byte) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || int(qpn) >= len(d.t.QPs) || len(p) == 0 {
		return 0
	}
	q := &d.t.QPs[qpn]
	r := d.run[qpn]
	if q.State != QPRTS || r == nil || q.RTS.Flags&hostif.RTSMarkersRx == 0 || int32(seq-r.rxSeq) <= 0 {
		return 0
	}
	e := &earlyPlacer{d: d, r: r}
	o := mpa.NewOOOReceiverAt(true, q.RTS.Flags&hostif.RTSCRCRx != 0, q.RTS.RxMarkerBase, r.rxSeq, e)
	o.SetWindow(int(seq-r.rxSeq) + len(p))
	o.Segment(seq, p) // an error only stops the search: the in-order pass reports it
	return e.n
}

// earlyPlacer is PlaceEarly's mpa.OOOHandler.
type earlyPlacer struct {
	d *Device
	r *qpRun
	n int
}

func (e *earlyPlacer) Place(_ uint32, u []byte) error {
	seg, err := rdmap.Classify(u)
	if err != nil {
		return nil
	}
	var need ddp.Access
	switch op := seg.Opcode; op {
	case rdmap.OpWrite, rdmap.OpReadResponse:
		if _, gone := e.d.unmapped(seg.Header.STag, seg.Header.TO); gone && len(seg.Payload) > 0 {
			return nil
		}
		need = op.PlacementAccess()
	case rdmap.OpSend, rdmap.OpSendInvalidate, rdmap.OpSendSE, rdmap.OpSendSEInvalidate:
	default:
		return nil
	}
	if e.r.sink.Place(&seg.Header, seg.Payload, need) == nil {
		e.n++
	}
	return nil
}

// Deliver implements mpa.OOOHandler: nothing is delivered early.
func (e *earlyPlacer) Deliver(uint32) error { return nil }
