package model_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// host is one model device with the driver's side of one QP: its rings in
// the rig's buffer, a data area registered as MRs, and the indices the
// driver keeps.
type host struct {
	*rig
	qpn              uint16
	sq, rq, cqRing   uint64
	sqPI, rqPI, cqCI uint16
	data             []byte // the data area: buf.Mem[dataOff:]
	dataAddr         uint64
}

const (
	dataOff  = 2 << 20
	dataLen  = 1 << 20
	dataTO   = 0x7f00_0000_0000 // TO of the data area's first octet in MR 1
	hostPD   = 3
	fullKey  = 0x11
	cqLog2   = 6
	sqLog2   = 4
	rqLog2   = 4
	allRight = hostif.AccessLocalRead | hostif.AccessLocalWrite | hostif.AccessRemoteRead | hostif.AccessRemoteWrite
)

// newHost builds a device with CQ 1 (send and receive), QP qpn of PD 3 and
// MR index 1 (key 0x11, every right) over the data area at TO dataTO.
func newHost(t testing.TB, qpn uint16) *host {
	r := newRig(t, model.DefaultConfig)
	h := &host{rig: r, qpn: qpn, data: r.buf.Mem[dataOff : dataOff+dataLen], dataAddr: r.buf.Addr + dataOff}
	h.cqRing, h.sq, h.rq = r.ring(), r.ring(), r.ring()
	r.ok(hostif.CreateCQ{CQN: 1, Ring: h.cqRing, Log2: cqLog2})
	r.ok(hostif.CreateQP{QPN: uint32(qpn), PD: hostPD, SQRing: h.sq, SQLog2: sqLog2, RQRing: h.rq, RQLog2: rqLog2, SendCQ: 1, RecvCQ: 1})
	h.mr(1, fullKey, allRight, 0, dataLen)
	return h
}

// mr registers [off, off+n) of the data area as MR index idx, at TO
// dataTO+off.
func (h *host) mr(idx uint16, key uint8, access uint8, off, n uint64) uint32 {
	h.ok(hostif.MRWrite{Index: idx, Key: key, Access: access, PD: hostPD, BoundQPN: hostif.NotBound,
		BaseTO: dataTO + off, Length: n, Addr: h.dataAddr + off})
	return uint32(idx)<<8 | uint32(key)
}

func stag(idx uint16, key uint8) uint32 { return uint32(idx)<<8 | uint32(key) }

func (h *host) rts(c hostif.QPRTS) {
	c.QPN = h.qpn
	h.ok(c)
}

// rawSQE writes 64 raw octets in the next SQ slot and rings SQ_PI.
func (h *host) rawSQE(b []byte) {
	slot := h.sq - h.buf.Addr + uint64(h.sqPI&(1<<sqLog2-1))*hostif.SQESize
	copy(h.buf.Mem[slot:slot+hostif.SQESize], b)
	h.sqPI++
	if err := h.d.RingSQ(h.qpn, h.sqPI); err != nil {
		h.t.Fatal(err)
	}
}

func (h *host) post(e hostif.SQE) {
	h.t.Helper()
	var b [hostif.SQESize]byte
	if err := e.Encode(b[:]); err != nil {
		h.t.Fatal(err)
	}
	h.rawSQE(b[:])
}

func (h *host) recv(e hostif.RQE) {
	h.t.Helper()
	slot := h.rq - h.buf.Addr + uint64(h.rqPI&(1<<rqLog2-1))*hostif.RQESize
	if err := e.Encode(h.buf.Mem[slot:]); err != nil {
		h.t.Fatal(err)
	}
	h.rqPI++
	if err := h.d.RingRQ(h.qpn, h.rqPI); err != nil {
		h.t.Fatal(err)
	}
}

// poll takes every CQE of the current pass and gives the consumer index
// back.
func (h *host) poll() []hostif.CQE { return h.pollArm(0) }

// pollArm is poll, with the arm bits of the CQ_CI write.
func (h *host) pollArm(arm uint32) []hostif.CQE {
	h.t.Helper()
	var out []hostif.CQE
	for {
		off := h.cqRing - h.buf.Addr + uint64(h.cqCI&(1<<cqLog2-1))*hostif.CQESize
		b := h.buf.Mem[off : off+hostif.CQESize]
		if b[31]&1 == 1 != hostif.Phase(h.cqCI, cqLog2) {
			break
		}
		c, err := hostif.DecodeCQE(b)
		if err != nil {
			h.t.Fatalf("CQE %d: %v", h.cqCI, err)
		}
		out = append(out, c)
		h.cqCI++
	}
	if err := h.d.RingCQ(1, h.cqCI, arm); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// link connects two devices back to back and records what each sent.
type link struct {
	a, b       *host
	aOut, bOut []driver.Segment
}

// run moves segments both ways until neither device has more to send.
func (l *link) run() {
	l.a.t.Helper()
	for {
		sa, sb := l.a.m.TakeSegments(), l.b.m.TakeSegments()
		if len(sa)+len(sb) == 0 {
			return
		}
		l.aOut, l.bOut = append(l.aOut, sa...), append(l.bOut, sb...)
		for _, s := range sa {
			if err := l.b.m.Network().SegIn(s); err != nil {
				l.a.t.Fatal(err)
			}
		}
		for _, s := range sb {
			if err := l.a.m.Network().SegIn(s); err != nil {
				l.a.t.Fatal(err)
			}
		}
	}
}

// pair builds two hosts, QP 5 on each, connected with markers and CRCs
// on, MULPDU 1000, the sequence spaces starting at different numbers (and
// one near the wrap) so that marker placement and wrap are exercised.
func pair(t testing.TB, ird, ord uint8) *link {
	a, b := newHost(t, 5), newHost(t, 5)
	const aSeq, bSeq = 0xffff_f000, 1000
	flags := hostif.RTSMarkersTx | hostif.RTSMarkersRx | hostif.RTSCRCTx | hostif.RTSCRCRx
	a.rts(hostif.QPRTS{IRD: ird, ORD: ord, MULPDU: 1000, Flags: flags, TxMarkerBase: aSeq, RxMarkerBase: bSeq,
		TxSeq: aSeq, RxSeq: bSeq, RxMSNSend: 1, RxMSNReadRq: 1})
	b.rts(hostif.QPRTS{IRD: ird, ORD: ord, MULPDU: 1000, Flags: flags, TxMarkerBase: bSeq, RxMarkerBase: aSeq,
		TxSeq: bSeq, RxSeq: aSeq, RxMSNSend: 1, RxMSNReadRq: 1})
	return &link{a: a, b: b}
}

func fill(p []byte, seed byte) {
	for i := range p {
		p[i] = seed + byte(i*7)
	}
}

// checkStream checks that segments are contiguous from seq and that the
// whole stream parses as FPDUs (markers and CRC checked) into ULPDUs.
func checkStream(t *testing.T, segs []driver.Segment, base uint32) [][]byte {
	t.Helper()
	rx := mpa.NewReceiver(true, true, base)
	seq := base
	var ulpdus [][]byte
	for _, s := range segs {
		if s.Seq != seq {
			t.Fatalf("segment at seq %#x, the stream is at %#x", s.Seq, seq)
		}
		seq += uint32(len(s.Octets))
		if err := rx.Feed(s.Octets, func(_ uint32, u []byte) error {
			ulpdus = append(ulpdus, append([]byte(nil), u...))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if rx.Buffered() != 0 {
		t.Fatal("the stream ends inside an FPDU")
	}
	return ulpdus
}

func TestBackToBackWrite(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	fill(a.data[:3000], 1)
	b.mr(2, 0x22, hostif.AccessRemoteWrite, 4096, 8192)
	a.post(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 3000, ID: 0xabc, LKey: stag(1, fullKey), LocalTO: dataTO,
		RKey: stag(2, 0x22), RemoteTO: dataTO + 4096 + 100})
	// Unsignalled: no CQE.
	a.post(hostif.SQE{Op: hostif.OpWrite, Length: 10, ID: 0xabd, LKey: stag(1, fullKey), LocalTO: dataTO,
		RKey: stag(2, 0x22), RemoteTO: dataTO + 4096 + 5000})
	l.run()
	if !bytes.Equal(b.data[4096+100:4096+3100], a.data[:3000]) || !bytes.Equal(b.data[4096+5000:4096+5010], a.data[:10]) {
		t.Fatal("the Write's octets are not where they belong")
	}
	// Nothing else written: the octets before and after are untouched.
	if b.data[4096+99] != 0 || b.data[4096+3100] != 0 || b.data[4096+5010] != 0 {
		t.Fatal("placement wrote outside the Write")
	}
	want := []hostif.CQE{{ID: 0xabc, Length: 3000, QPN: 5, Op: hostif.OpWrite, Phase: true}}
	if got := a.poll(); !reflect.DeepEqual(got, want) {
		t.Fatalf("A's CQEs\n got %v\nwant %v", got, want)
	}
	if got := b.poll(); len(got) != 0 {
		t.Fatalf("B completed %v for a Write (RFC 5040 5.1: nothing at the Data Sink)", got)
	}
	// MULPDU 1000: 3000 octets in ceil(3000/986) = 4 FPDUs, then 1.
	u := checkStream(t, l.aOut, 0xffff_f000)
	if len(u) != 5 || len(l.aOut) != 5 {
		t.Fatalf("%d ULPDUs in %d segments, want 5", len(u), len(l.aOut))
	}
	h, _, _ := ddp.ParseHeader(u[1])
	if !h.Tagged || h.Last || h.STag != stag(2, 0x22) || h.TO != dataTO+4096+100+986 {
		t.Fatalf("second segment %v", h)
	}
	if len(l.bOut) != 0 {
		t.Fatalf("B sent %d segments for a Write", len(l.bOut))
	}
	if ev := b.events(); len(ev) != 0 {
		t.Fatalf("B's events: %v", ev)
	}
	var wire uint64
	for _, s := range l.aOut {
		wire += uint64(len(s.Octets))
	}
	if c := a.counters(); c["tx_fpdus"] != 5 || c["tx_octets"] != wire || c["rx_fpdus"] != 0 {
		t.Errorf("A's counters %v", c)
	}
	if c := b.counters(); c["rx_fpdus"] != 5 || c["rx_octets"] != wire || c["tx_fpdus"] != 0 {
		t.Errorf("B's counters %v", c)
	}
}

// counters reads the counters block through the driver's register map.
func (h *host) counters() map[string]uint64 {
	h.t.Helper()
	cs, err := h.d.Map.Counters(h.m)
	if err != nil {
		h.t.Fatal(err)
	}
	m := map[string]uint64{}
	for _, c := range cs {
		m[c.Name] = c.Value
	}
	return m
}

func TestBackToBackSends(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	fill(a.data[:2500], 3)
	inv := b.mr(3, 0x33, hostif.AccessRemoteWrite, 100<<10, 4096)
	for i := range 4 {
		b.recv(hostif.RQE{ID: uint64(0x100 + i), LKey: stag(1, fullKey), Length: 3000, LocalTO: dataTO + uint64(i)*4096})
	}
	a.post(hostif.SQE{Op: hostif.OpSend, Signaled: true, Length: 2500, ID: 1, LKey: stag(1, fullKey), LocalTO: dataTO})
	a.post(hostif.SQE{Op: hostif.OpSendSE, Signaled: true, Length: 7, ID: 2, LKey: stag(1, fullKey), LocalTO: dataTO + 1})
	a.post(hostif.SQE{Op: hostif.OpSendInv, Signaled: true, Length: 0, ID: 3, InvalidateSTag: inv})
	a.post(hostif.SQE{Op: hostif.OpSendSEInv, Signaled: true, Length: 1, ID: 4, LKey: stag(1, fullKey), LocalTO: dataTO + 2,
		InvalidateSTag: stag(1, fullKey)})
	l.run()
	wantA := []hostif.CQE{
		{ID: 1, Length: 2500, QPN: 5, Op: hostif.OpSend, Phase: true},
		{ID: 2, Length: 7, QPN: 5, Op: hostif.OpSendSE, Phase: true},
		{ID: 3, Length: 0, QPN: 5, Op: hostif.OpSendInv, Phase: true},
		{ID: 4, Length: 1, QPN: 5, Op: hostif.OpSendSEInv, Phase: true},
	}
	if got := a.poll(); !reflect.DeepEqual(got, wantA) {
		t.Fatalf("A's CQEs\n got %v\nwant %v", got, wantA)
	}
	wantB := []hostif.CQE{
		{ID: 0x100, Length: 2500, QPN: 5, Op: hostif.OpRecv, Phase: true},
		{ID: 0x101, Length: 7, QPN: 5, Op: hostif.OpRecv, Solicited: true, Phase: true},
		{ID: 0x102, Length: 0, QPN: 5, Op: hostif.OpRecv, InvalidatedSTag: inv, Invalidated: true, Phase: true},
		{ID: 0x103, Length: 1, QPN: 5, Op: hostif.OpRecv, Solicited: true, InvalidatedSTag: stag(1, fullKey), Invalidated: true, Phase: true},
	}
	if got := b.poll(); !reflect.DeepEqual(got, wantB) {
		t.Fatalf("B's CQEs\n got %v\nwant %v", got, wantB)
	}
	if !bytes.Equal(b.data[:2500], a.data[:2500]) || !bytes.Equal(b.data[4096:4096+7], a.data[1:8]) ||
		b.data[3*4096] != a.data[2] || b.data[2500] != 0 || b.data[4096+7] != 0 {
		t.Fatal("the Sends' octets are not where they belong")
	}
	tb := b.m.Tables()
	if tb.MRs[3].Valid || tb.MRs[1].Valid {
		t.Fatalf("MRs 3 and 1 after Send with Invalidate: %+v, %+v", tb.MRs[3], tb.MRs[1])
	}
	// The invalidated STag places nothing more: a Write to it ends B's
	// stream with a Terminate (DDP tagged buffer error, Invalid STag).
	a.post(hostif.SQE{Op: hostif.OpWrite, Length: 4, ID: 9, LKey: stag(1, fullKey), LocalTO: dataTO, RKey: inv, RemoteTO: dataTO + 100<<10})
	l.run()
	ev := b.events()
	if len(ev) != 1 || ev[0].Type != hostif.EventQPError || ev[0].Detail != 0x11 || ev[0].Value != uint32(ddp.CodeInvalidSTag) {
		t.Fatalf("B's events after a Write to an invalidated STag: %v", ev)
	}
	if bytes.Count(b.data[100<<10:100<<10+4096], []byte{0}) != 4096 {
		t.Fatal("written through an invalidated STag")
	}
}

func TestBackToBackRead(t *testing.T) {
	l := pair(t, 4, 1) // ORD 1: the second Read waits for the first
	a, b := l.a, l.b
	fill(b.data[8192:8192+5000], 9)
	src := b.mr(2, 0x44, hostif.AccessRemoteRead, 8192, 5000)
	sink := a.mr(2, 0x55, hostif.AccessLocalWrite|hostif.AccessRemoteWrite, 64<<10, 16<<10)
	a.post(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 5000, ID: 0x51, LKey: sink, LocalTO: dataTO + 64<<10,
		RKey: src, RemoteTO: dataTO + 8192})
	a.post(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 100, ID: 0x52, LKey: sink, LocalTO: dataTO + 72<<10,
		RKey: src, RemoteTO: dataTO + 8192 + 4900})
	// A Write after the Reads, signalled: completes after them (SQ order).
	a.post(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 0, ID: 0x53, RKey: 1})
	if segs := a.m.TakeSegments(); len(segs) != 1 {
		t.Fatalf("with ORD 1, %d segments before the first Read Response; want the first Read Request alone", len(segs))
	} else {
		l.aOut = append(l.aOut, segs...)
		if err := b.m.Network().SegIn(segs[0]); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.poll(); len(got) != 0 {
		t.Fatalf("completions before any Read Response: %v", got)
	}
	l.run()
	want := []hostif.CQE{
		{ID: 0x51, Length: 5000, QPN: 5, Op: hostif.OpRead, Phase: true},
		{ID: 0x52, Length: 100, QPN: 5, Op: hostif.OpRead, Phase: true},
		{ID: 0x53, QPN: 5, Op: hostif.OpWrite, Phase: true},
	}
	if got := a.poll(); !reflect.DeepEqual(got, want) {
		t.Fatalf("A's CQEs\n got %v\nwant %v", got, want)
	}
	if !bytes.Equal(a.data[64<<10:64<<10+5000], b.data[8192:8192+5000]) ||
		!bytes.Equal(a.data[72<<10:72<<10+100], b.data[8192+4900:8192+5000]) || a.data[64<<10+5000] != 0 {
		t.Fatal("the Reads' octets are not where they belong")
	}
	if got := b.poll(); len(got) != 0 {
		t.Fatalf("B completed %v for Read Requests", got)
	}
	// B's stream: Read Responses only, 5000 octets in ceil(5000/986) = 6.
	u := checkStream(t, l.bOut, 1000)
	if len(u) != 7 {
		t.Fatalf("B sent %d ULPDUs, want 6 + 1 Read Response segments", len(u))
	}
	for _, x := range u {
		if _, op := rdmap.ParseControl(x[1]); op != rdmap.OpReadResponse {
			t.Fatalf("B sent %v", op)
		}
	}
}

// TestBackToBackFence: a fenced entry waits for every Read before it,
// even with ORD room left.
func TestBackToBackFence(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	src := b.mr(2, 0x44, hostif.AccessRemoteRead, 0, 4096)
	fill(b.data[:8], 0x60)
	a.post(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 8, ID: 1, LKey: stag(1, fullKey), LocalTO: dataTO, RKey: src, RemoteTO: dataTO})
	a.post(hostif.SQE{Op: hostif.OpWrite, Fence: true, Signaled: true, Length: 8, ID: 2, LKey: stag(1, fullKey), LocalTO: dataTO,
		RKey: stag(1, fullKey), RemoteTO: dataTO + 100})
	if segs := a.m.TakeSegments(); len(segs) != 1 {
		t.Fatalf("%d segments before the Read completed; the fenced Write must wait", len(segs))
	} else if err := b.m.Network().SegIn(segs[0]); err != nil {
		t.Fatal(err)
	}
	l.run()
	if !bytes.Equal(b.data[100:108], b.data[:8]) || !bytes.Equal(a.data[:8], b.data[:8]) || a.data[0] != 0x60 {
		t.Fatal("the fenced Write did not carry what the Read brought")
	}
	if got := a.poll(); len(got) != 2 || got[0].ID != 1 || got[1].ID != 2 || got[1].Status != hostif.StatusSuccess {
		t.Fatalf("A's CQEs %v", got)
	}
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// QP_RTS after the host's software path carried the first FPDUs (RFC
// 6581's RTR): the device frames from QP_RTS's TX sequence number with
// markers where the marker base puts them, receives from its RX sequence
// number, and expects the Send MSN QP_RTS gives.
func TestRTSHandover(t *testing.T) {
	const base = 0x1000_0100
	h := newHost(t, 5)
	// The peer's stream: a Send with MSN 1 (its RTR, which the host took)
	// then a Send with MSN 2 for the device.
	peer := mpa.NewFramer(true, true, base)
	frame := func(f *mpa.Framer, m rdmap.Message) []byte {
		segs, err := m.Segments(1000)
		if err != nil {
			t.Fatal(err)
		}
		hd, p, _ := segs.Next()
		out, err := f.AppendFPDU(nil, hd.Append(nil), p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	rtr := frame(peer, rdmap.NewSend(1, nil))
	payload := bytes.Repeat([]byte{0xab}, 700) // crosses a marker
	second := frame(peer, rdmap.NewSend(2, payload))
	// Our own RTR went out by the host too: a zero-length Write.
	own := mpa.NewFramer(true, true, base+0x10)
	ownRTR := frame(own, rdmap.NewWrite(1, 0, nil))
	h.rts(hostif.QPRTS{IRD: 1, ORD: 1, MULPDU: 1000,
		Flags:        hostif.RTSMarkersTx | hostif.RTSMarkersRx | hostif.RTSCRCTx | hostif.RTSCRCRx,
		TxMarkerBase: base + 0x10, TxSeq: base + 0x10 + uint32(len(ownRTR)),
		RxMarkerBase: base, RxSeq: base + uint32(len(rtr)), RxMSNSend: 2, RxMSNReadRq: 1})
	h.recv(hostif.RQE{ID: 0x55, LKey: stag(1, fullKey), Length: 1000, LocalTO: dataTO})
	if err := h.m.Network().SegIn(driver.Segment{QPN: 5, Seq: base + uint32(len(rtr)), Octets: second}); err != nil {
		t.Fatal(err)
	}
	if got := h.poll(); len(got) != 1 || got[0].ID != 0x55 || got[0].Length != 700 || got[0].Status != hostif.StatusSuccess ||
		!bytes.Equal(h.data[:700], payload) {
		t.Fatalf("CQEs %v, events %v", got, h.events())
	}
	fill(h.data[:1500], 4)
	h.post(hostif.SQE{Op: hostif.OpSend, Length: 1500, ID: 1, LKey: stag(1, fullKey), LocalTO: dataTO})
	segs := h.m.TakeSegments()
	if len(segs) != 2 || segs[0].Seq != own.Seq() {
		t.Fatalf("%d segments, the first at %#x; want 2 from %#x", len(segs), segs[0].Seq, own.Seq())
	}
	// The peer's receiver, which took our RTR, takes what the device sent:
	// markers where the base puts them, CRCs good, MSN 1 (RFC 5041 4.3).
	rx := mpa.NewReceiver(true, true, base+0x10)
	var got []byte
	for _, p := range [][]byte{ownRTR, segs[0].Octets, segs[1].Octets} {
		if err := rx.Feed(p, func(_ uint32, u []byte) error {
			hd, pl, _ := ddp.ParseHeader(u)
			if !hd.Tagged && hd.MSN != 1 {
				t.Errorf("the device's Send has MSN %d", hd.MSN)
			}
			if !hd.Tagged {
				got = append(got, pl...)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, h.data[:1500]) {
		t.Fatal("the peer took other octets")
	}
}

// PlaceEarly (the mirror's early placement): the FPDU inside an
// out-of-order segment is placed from it, nothing else is, no counter
// moves, and a segment in order is not searched; the in-order pass then
// places and completes as usual.
func TestPlaceEarly(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	fill(a.data[:3000], 1)
	b.mr(2, 0x22, hostif.AccessRemoteWrite, 4096, 8192)
	a.post(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 3000, ID: 0xabc, LKey: stag(1, fullKey), LocalTO: dataTO,
		RKey: stag(2, 0x22), RemoteTO: dataTO + 4096 + 100})
	segs := a.m.TakeSegments()
	if len(segs) != 4 {
		t.Fatalf("%d segments for a 3000-octet Write at MULPDU 1000, want 4", len(segs))
	}
	if n := b.m.PlaceEarly(b.qpn, segs[0].Seq, segs[0].Octets); n != 0 {
		t.Fatalf("PlaceEarly placed %d ULPDUs of a segment in order, want 0 (segIn places it)", n)
	}
	s := segs[2]
	if err := b.m.Network().SegIn(s); err != nil {
		t.Fatal(err)
	}
	if n := b.m.PlaceEarly(b.qpn, s.Seq, s.Octets); n != 1 {
		t.Fatalf("PlaceEarly placed %d ULPDUs of the out-of-order third segment, want 1", n)
	}
	sink := b.data[4096+100 : 4096+3100]
	for i := range sink {
		if early := i >= 2*986 && i < 3*986; early != (sink[i] == a.data[i]) && a.data[i] != 0 {
			t.Fatalf("sink octet %d: %#02x (placed early: %v)", i, sink[i], early)
		}
	}
	if c := b.counters(); c["rx_fpdus"] != 0 || c["rx_octets"] != 0 {
		t.Fatalf("counters after an early placement: %v", c)
	}
	for _, s := range segs {
		if err := b.m.Network().SegIn(s); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(sink, a.data[:3000]) {
		t.Fatal("the Write's octets are not where they belong")
	}
}
