package model_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// terminates parses a stream of segments and returns the Terminates in it,
// and whether anything else was sent.
func terminates(t *testing.T, segs []driver.Segment, base uint32) ([]rdmap.Terminate, bool) {
	t.Helper()
	var out []rdmap.Terminate
	other := false
	for _, u := range checkStream(t, segs, base) {
		h, p, err := ddp.ParseHeader(u)
		if err != nil {
			t.Fatal(err)
		}
		if _, op := rdmap.ParseControl(h.ULPCtrl); op != rdmap.OpTerminate {
			other = true
			continue
		}
		term, err := rdmap.ParseTerminate(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, term)
	}
	return out, other
}

// A WQE that fails its own checks completes with its status, nothing of
// it is sent, the QP goes to error (a Terminate tells the peer, RFC 5040
// 7 Local Catastrophic) and every later entry completes FLUSHED.
func TestBadWQEs(t *testing.T) {
	lk := stag(1, fullKey)
	for _, c := range []struct {
		name string
		prep func(a *host) // registrations before the post
		sqe  hostif.SQE
		raw  func(b []byte) // edits the encoded entry
		ord  uint8
		want hostif.Status
	}{
		{name: "reserved octet 20", sqe: hostif.SQE{Op: hostif.OpSend, Length: 4, LKey: lk, LocalTO: dataTO},
			raw: func(b []byte) { b[20] = 1 }, want: hostif.StatusBadWQE},
		{name: "flags bit 2", sqe: hostif.SQE{Op: hostif.OpSend, Length: 4, LKey: lk, LocalTO: dataTO},
			raw: func(b []byte) { b[1] |= 4 }, want: hostif.StatusBadWQE},
		{name: "unknown opcode", sqe: hostif.SQE{Op: hostif.OpSend, Length: 4, LKey: lk, LocalTO: dataTO},
			raw: func(b []byte) { b[0] = 9 }, want: hostif.StatusBadWQE},
		{name: "Send carrying an STag to invalidate", sqe: hostif.SQE{Op: hostif.OpSend, InvalidateSTag: 0x100},
			want: hostif.StatusBadWQE},
		{name: "Read on ORD 0", ord: 0, sqe: hostif.SQE{Op: hostif.OpRead, Length: 4, LKey: lk, LocalTO: dataTO, RKey: lk},
			want: hostif.StatusBadWQE},
		{name: "wrong key", sqe: hostif.SQE{Op: hostif.OpWrite, Length: 4, LKey: stag(1, fullKey+1), LocalTO: dataTO},
			want: hostif.StatusLocalAccess},
		{name: "STag index beyond the table", sqe: hostif.SQE{Op: hostif.OpWrite, Length: 4, LKey: stag(0xffff, 1), LocalTO: dataTO},
			want: hostif.StatusLocalAccess},
		{name: "other PD", prep: func(a *host) {
			a.ok(hostif.MRWrite{Index: 2, Key: 1, Access: allRight, PD: hostPD + 1, BoundQPN: hostif.NotBound,
				BaseTO: 0, Length: 4096, Addr: a.dataAddr})
		}, sqe: hostif.SQE{Op: hostif.OpWrite, Length: 4, LKey: stag(2, 1), LocalTO: 0}, want: hostif.StatusLocalAccess},
		{name: "source without local read", prep: func(a *host) { a.mr(2, 1, hostif.AccessLocalWrite, 0, 4096) },
			sqe: hostif.SQE{Op: hostif.OpSend, Length: 4, LKey: stag(2, 1), LocalTO: dataTO}, want: hostif.StatusLocalAccess},
		{name: "Read sink without local write", ord: 1, prep: func(a *host) { a.mr(2, 1, hostif.AccessLocalRead|hostif.AccessRemoteWrite, 0, 4096) },
			sqe: hostif.SQE{Op: hostif.OpRead, Length: 4, LKey: stag(2, 1), LocalTO: dataTO, RKey: lk}, want: hostif.StatusLocalAccess},
		{name: "past the region's end", prep: func(a *host) { a.mr(2, 1, allRight, 0, 4096) },
			sqe: hostif.SQE{Op: hostif.OpWrite, Length: 8, LKey: stag(2, 1), LocalTO: dataTO + 4092}, want: hostif.StatusLocalAccess},
		{name: "before the region's start", prep: func(a *host) { a.mr(2, 1, allRight, 4096, 4096) },
			sqe: hostif.SQE{Op: hostif.OpWrite, Length: 8, LKey: stag(2, 1), LocalTO: dataTO + 4095}, want: hostif.StatusLocalAccess},
		{name: "TO wrap", sqe: hostif.SQE{Op: hostif.OpWrite, Length: 8, LKey: lk, LocalTO: 1<<64 - 4}, want: hostif.StatusLocalAccess},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := pair(t, 4, c.ord)
			a, b := l.a, l.b
			if c.prep != nil {
				c.prep(a)
			}
			c.sqe.ID, c.sqe.Signaled = 0x77, false // errors complete signalled or not
			var raw [hostif.SQESize]byte
			if err := c.sqe.Encode(raw[:]); err != nil {
				t.Fatal(err)
			}
			if c.raw != nil {
				c.raw(raw[:])
			}
			a.rawSQE(raw[:])
			a.post(hostif.SQE{Op: hostif.OpSend, Signaled: true, ID: 0x78})
			l.run()
			op := c.sqe.Op
			if raw[0] > 5 {
				op = hostif.OpWrite // a CQE has no value for an unknown opcode
			}
			want := []hostif.CQE{
				{ID: 0x77, QPN: 5, Op: op, Status: c.want, Phase: true},
				{ID: 0x78, QPN: 5, Op: hostif.OpSend, Status: hostif.StatusFlushed, Phase: true},
			}
			if got := a.poll(); !reflect.DeepEqual(got, want) {
				t.Fatalf("CQEs\n got %v\nwant %v", got, want)
			}
			if q := a.m.Tables().QPs[5]; q.State != model.QPError || q.SQCI != 2 {
				t.Fatalf("QP after a bad WQE: %v, SQ CI %d", q.State, q.SQCI)
			}
			ev := a.events()
			if len(ev) != 1 || ev[0] != (hostif.Event{Type: hostif.EventQPError, Index: 5, Phase: true}) {
				t.Fatalf("events %v, want QP_ERROR (RDMAP Local Catastrophic)", ev)
			}
			terms, other := terminates(t, l.aOut, 0xffff_f000)
			if other || len(terms) != 1 || terms[0].Layer != rdmap.LayerRDMAP || terms[0].EType != rdmap.ETypeLocalCatastrophic {
				t.Fatalf("A sent %v (and other messages: %v); want one Terminate, nothing of the entry", terms, other)
			}
			if bev := b.events(); len(bev) != 1 || bev[0].Type != hostif.EventTerminateReceived {
				t.Fatalf("B's events %v", bev)
			}
			// Entries posted after the error complete FLUSHED too.
			a.post(hostif.SQE{Op: hostif.OpWrite, ID: 0x79})
			if got := a.poll(); len(got) != 1 || got[0].ID != 0x79 || got[0].Status != hostif.StatusFlushed {
				t.Fatalf("after the error: %v", got)
			}
		})
	}
}

// Remote errors: the Data Sink or Data Source refuses, writes nothing,
// answers with a Terminate naming the error (RFC 5040 4.8, 7), and the
// requester's work request completes REMOTE with the Terminate's layer,
// etype and code.
func TestRemoteErrors(t *testing.T) {
	lk := stag(1, fullKey)
	for _, c := range []struct {
		name       string
		prep       func(a, b *host)
		sqe        hostif.SQE
		layer      rdmap.Layer
		etype      uint8
		code       uint8
		wantStatus hostif.Status // the requester's CQE
		placed     bool          // the payload lands before the error is found
	}{
		{name: "Write past the sink region", prep: func(a, b *host) { b.mr(2, 0x22, hostif.AccessRemoteWrite, 0, 4096) },
			sqe:   hostif.SQE{Op: hostif.OpWrite, Length: 100, LKey: lk, LocalTO: dataTO, RKey: stag(2, 0x22), RemoteTO: dataTO + 4050},
			layer: rdmap.LayerDDP, etype: rdmap.ETypeTaggedBuffer, code: ddp.CodeBaseBounds, wantStatus: hostif.StatusSuccess},
		{name: "Write to an STag never written", sqe: hostif.SQE{Op: hostif.OpWrite, Length: 1, LKey: lk, LocalTO: dataTO, RKey: stag(9, 1), RemoteTO: 0},
			layer: rdmap.LayerDDP, etype: rdmap.ETypeTaggedBuffer, code: ddp.CodeInvalidSTag, wantStatus: hostif.StatusSuccess},
		{name: "Write to a region without remote write", prep: func(a, b *host) { b.mr(2, 0x22, hostif.AccessRemoteRead|hostif.AccessLocalWrite, 0, 4096) },
			sqe:   hostif.SQE{Op: hostif.OpWrite, Length: 10, LKey: lk, LocalTO: dataTO, RKey: stag(2, 0x22), RemoteTO: dataTO},
			layer: rdmap.LayerRDMAP, etype: rdmap.ETypeRemoteProtection, code: rdmap.CodeAccessRights, wantStatus: hostif.StatusSuccess},
		{name: "Read without remote read", prep: func(a, b *host) { b.mr(2, 0x22, hostif.AccessRemoteWrite, 0, 4096) },
			sqe:   hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 10, LKey: lk, LocalTO: dataTO, RKey: stag(2, 0x22), RemoteTO: dataTO},
			layer: rdmap.LayerRDMAP, etype: rdmap.ETypeRemoteProtection, code: rdmap.CodeAccessRights, wantStatus: hostif.StatusRemote},
		{name: "Read past the source region", prep: func(a, b *host) { b.mr(2, 0x22, hostif.AccessRemoteRead, 0, 4096) },
			sqe:   hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 10, LKey: lk, LocalTO: dataTO, RKey: stag(2, 0x22), RemoteTO: dataTO + 4090},
			layer: rdmap.LayerRDMAP, etype: rdmap.ETypeRemoteProtection, code: rdmap.CodeBaseBounds, wantStatus: hostif.StatusRemote},
		{name: "Send with no receive posted", sqe: hostif.SQE{Op: hostif.OpSend, Signaled: true, Length: 1, LKey: lk, LocalTO: dataTO},
			layer: rdmap.LayerDDP, etype: rdmap.ETypeUntaggedBuffer, code: ddp.CodeNoBuffer, wantStatus: hostif.StatusSuccess},
		{name: "Send too long for the receive", prep: func(a, b *host) {
			b.recv(hostif.RQE{ID: 0x200, LKey: lk, Length: 10, LocalTO: dataTO})
		}, sqe: hostif.SQE{Op: hostif.OpSend, Signaled: true, Length: 11, LKey: lk, LocalTO: dataTO},
			layer: rdmap.LayerDDP, etype: rdmap.ETypeUntaggedBuffer, code: ddp.CodeTooLong, wantStatus: hostif.StatusSuccess},
		{name: "Send invalidating an STag of another PD", prep: func(a, b *host) {
			b.recv(hostif.RQE{ID: 0x200, LKey: lk, Length: 10, LocalTO: dataTO})
			b.ok(hostif.MRWrite{Index: 2, Key: 2, Access: allRight, PD: hostPD + 1, BoundQPN: hostif.NotBound, Length: 4096, Addr: b.dataAddr})
		}, sqe: hostif.SQE{Op: hostif.OpSendInv, Signaled: true, Length: 1, LKey: lk, LocalTO: dataTO, InvalidateSTag: stag(2, 2)},
			layer: rdmap.LayerRDMAP, etype: rdmap.ETypeRemoteProtection, code: rdmap.CodeCannotInvalidate, wantStatus: hostif.StatusSuccess,
			placed: true}, // RFC 5040 5.4: the invalidation follows the Send's placement
	} {
		t.Run(c.name, func(t *testing.T) {
			l := pair(t, 4, 4)
			a, b := l.a, l.b
			if c.prep != nil {
				c.prep(a, b)
			}
			fill(a.data[:200], 0x5a)
			before := append([]byte(nil), b.data[:8192]...)
			c.sqe.ID = 0x99
			a.post(c.sqe)
			l.run()
			le := uint8(c.layer)<<4 | c.etype
			if ev := b.events(); len(ev) != 1 || ev[0] != (hostif.Event{Type: hostif.EventQPError, Detail: le, Index: 5, Value: uint32(c.code), Phase: true}) {
				t.Fatalf("B's events %v; want QP_ERROR %s", ev, rdmap.ErrorName(c.layer, c.etype, c.code))
			}
			terms, _ := terminates(t, l.bOut, 1000)
			if len(terms) != 1 || terms[0].Layer != c.layer || terms[0].EType != c.etype || terms[0].Code != c.code {
				t.Fatalf("B's Terminates %v", terms)
			}
			if cnt := b.counters(); cnt["tx_terminates"] != 1 || a.counters()["rx_terminates"] != 1 {
				t.Errorf("counters: B sent %d Terminates, A received %d", cnt["tx_terminates"], a.counters()["rx_terminates"])
			}
			if !c.placed && !bytes.Equal(b.data[:8192], before) {
				t.Fatal("B's memory changed")
			}
			if ev := a.events(); len(ev) != 1 || ev[0] != (hostif.Event{Type: hostif.EventTerminateReceived, Detail: le, Index: 5, Value: uint32(c.code), Phase: true}) {
				t.Fatalf("A's events %v", ev)
			}
			got := a.poll()
			if c.wantStatus == hostif.StatusSuccess {
				// The request was on the wire before the peer
				// refused it: it completed (signalled or not).
				if len(got) > 1 || len(got) == 1 && got[0].Status != hostif.StatusSuccess {
					t.Fatalf("A's CQEs %v", got)
				}
			} else if len(got) != 1 || got[0].Status != c.wantStatus || got[0].TermLayerEType != le || got[0].TermCode != c.code {
				t.Fatalf("A's CQEs %v; want %v with the Terminate", got, c.wantStatus)
			}
			for _, h := range []*host{a, b} {
				if q := h.m.Tables().QPs[5]; q.State != model.QPError {
					t.Fatalf("QP state %v", q.State)
				}
			}
			// B's receives posted before the error complete: the one
			// the error concerns with it, the rest FLUSHED.
			for _, x := range b.poll() {
				if x.Status != hostif.StatusProtocol && x.Status != hostif.StatusFlushed {
					t.Fatalf("B's CQE %v", x)
				}
			}
		})
	}
}

// Memory outside every DMA window is never touched: a Write whose source
// lost its window completes LOCAL_ACCESS with DMA_REFUSED; a Write into a
// region that lost its window is refused by the sink with DMA_REFUSED and
// a Terminate; nothing is written.
func TestUnmappedMemory(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	addOut := func(h *host) (*driver.Buffer, uint32) {
		buf, err := h.m.Alloc(8192)
		if err != nil {
			t.Fatal(err)
		}
		h.ok(hostif.DMAWindow{Slot: 1, Addr: buf.Addr, Length: 8192})
		h.ok(hostif.MRWrite{Index: 7, Key: 7, Access: allRight, PD: hostPD, BoundQPN: hostif.NotBound, BaseTO: 0x1000, Length: 8192, Addr: buf.Addr})
		h.ok(hostif.DMAWindow{Slot: 1}) // the window goes, the MR entry stays
		return buf, stag(7, 7)
	}
	abuf, asrc := addOut(a)
	fill(abuf.Mem[:100], 1)
	a.post(hostif.SQE{Op: hostif.OpWrite, Length: 100, ID: 1, LKey: asrc, LocalTO: 0x1000, RKey: stag(1, fullKey), RemoteTO: dataTO})
	l.run()
	if got := a.poll(); len(got) != 1 || got[0].Status != hostif.StatusLocalAccess {
		t.Fatalf("A's CQEs %v", got)
	}
	ev := a.events()
	if len(ev) != 2 || ev[0] != (hostif.Event{Type: hostif.EventDMARefused, Detail: hostif.DMAForPayload, Index: 5, Value: 100,
		Address: abuf.Addr, Phase: true}) || ev[1].Type != hostif.EventQPError {
		t.Fatalf("A's events %v", ev)
	}
	if b.data[0] != 0 {
		t.Fatal("the Write reached B")
	}

	l = pair(t, 4, 4)
	a, b = l.a, l.b
	bbuf, bsink := addOut(b)
	fill(a.data[:100], 1)
	a.post(hostif.SQE{Op: hostif.OpWrite, Length: 100, ID: 1, LKey: stag(1, fullKey), LocalTO: dataTO, RKey: bsink, RemoteTO: 0x1010})
	l.run()
	ev = b.events()
	if len(ev) != 2 || ev[0] != (hostif.Event{Type: hostif.EventDMARefused, Detail: hostif.DMAForPlacement, Index: 5, Value: 100,
		Address: bbuf.Addr + 0x10, Phase: true}) || ev[1].Type != hostif.EventQPError {
		t.Fatalf("B's events %v", ev)
	}
	if bytes.Count(bbuf.Mem, []byte{0}) != len(bbuf.Mem) {
		t.Fatal("B wrote into memory outside every window")
	}
	if terms, _ := terminates(t, l.bOut, 1000); len(terms) != 1 || terms[0].EType != rdmap.ETypeLocalCatastrophic {
		t.Fatalf("B's Terminates %v", terms)
	}
}

// Segments the data path does not take go to the exception ring, whole,
// with their reason; an out-of-order segment given back in order is
// taken.
func TestExceptionRing(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	fill(a.data[:3000], 2)
	a.post(hostif.SQE{Op: hostif.OpWrite, Length: 3000, ID: 1, LKey: stag(1, fullKey), LocalTO: dataTO, RKey: stag(1, fullKey), RemoteTO: dataTO})
	segs := a.m.TakeSegments()
	if len(segs) != 4 {
		t.Fatalf("%d segments", len(segs))
	}
	n := b.m.Network()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(n.SegIn(segs[1]))                                                          // out of order
	must(n.SegIn(segs[0]))                                                          // in order
	must(n.SegIn(driver.Segment{QPN: 5, Seq: segs[0].Seq, Octets: segs[0].Octets})) // duplicate
	must(n.SegIn(driver.Segment{QPN: 5, Seq: segs[1].Seq}))                         // empty
	must(n.SegIn(driver.Segment{QPN: 6, Seq: 0, Octets: []byte{1, 2, 3}}))          // QP 6: not enabled
	// A segment that overlaps what was taken: only its new part is.
	s12 := append(append([]byte(nil), segs[1].Octets...), segs[2].Octets...)
	must(n.SegIn(driver.Segment{QPN: 5, Seq: segs[1].Seq - 10, Octets: append(append([]byte(nil), segs[0].Octets[len(segs[0].Octets)-10:]...), s12...)}))
	must(n.SegIn(segs[3]))
	if !bytes.Equal(b.data[:3000], a.data[:3000]) {
		t.Fatal("the Write was not placed whole")
	}
	type exc struct {
		h hostif.ExcHeader
		p []byte
	}
	var got []exc
	ring := b.buf.Mem[32<<10:]
	for i := range 4 {
		h, err := hostif.DecodeExcHeader(ring[i<<11:], 1<<11)
		if err != nil || !h.Phase {
			break
		}
		got = append(got, exc{h, append([]byte(nil), ring[i<<11+16:i<<11+16+int(h.Length)]...)})
	}
	want := []exc{
		{hostif.ExcHeader{QPN: 5, Length: uint16(len(segs[1].Octets)), Seq: segs[1].Seq, Reason: hostif.ExcOutOfOrder, Phase: true}, segs[1].Octets},
		{hostif.ExcHeader{QPN: 5, Length: uint16(len(segs[0].Octets)), Seq: segs[0].Seq, Reason: hostif.ExcDuplicate, Phase: true}, segs[0].Octets},
		{hostif.ExcHeader{QPN: 5, Seq: segs[1].Seq, Reason: hostif.ExcEmpty, Phase: true}, nil},
		{hostif.ExcHeader{QPN: 6, Length: 3, Seq: 0, Reason: hostif.ExcNotEnabled, Phase: true}, []byte{1, 2, 3}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d exception entries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].h != want[i].h || !bytes.Equal(got[i].p, want[i].p) {
			t.Fatalf("exception entry %d: %v (%d octets), want %v", i, got[i].h, len(got[i].p), want[i].h)
		}
	}
	ev := b.events()
	if len(ev) != 4 || ev[0] != (hostif.Event{Type: hostif.EventException, Detail: uint8(hostif.ExcOutOfOrder), Index: 5, Value: 1, Phase: true}) ||
		ev[3] != (hostif.Event{Type: hostif.EventException, Detail: uint8(hostif.ExcNotEnabled), Index: 6, Value: 4, Phase: true}) {
		t.Fatalf("events %v", ev)
	}
}

// A CRC error ends the stream: CONN on the receive in progress, a
// Terminate naming the LLP error (RFC 5044 8, code 2), QP_ERROR.
func TestCRCError(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	b.recv(hostif.RQE{ID: 0x300, LKey: stag(1, fullKey), Length: 100, LocalTO: dataTO})
	a.post(hostif.SQE{Op: hostif.OpSend, Length: 8, ID: 1, LKey: stag(1, fullKey), LocalTO: dataTO})
	segs := a.m.TakeSegments()
	segs[0].Octets[len(segs[0].Octets)-1] ^= 1
	if err := b.m.Network().SegIn(segs[0]); err != nil {
		t.Fatal(err)
	}
	le := uint8(rdmap.LayerLLP)<<4 | rdmap.ETypeMPA
	if ev := b.events(); len(ev) != 1 || ev[0] != (hostif.Event{Type: hostif.EventQPError, Detail: le, Index: 5, Value: uint32(mpa.ErrCRC), Phase: true}) {
		t.Fatalf("events %v", ev)
	}
	if got := b.poll(); len(got) != 1 || got[0].Status != hostif.StatusFlushed {
		// The Send's segment never passed MPA: no receive is "in
		// progress" for DDP, so the posted one is flushed.
		t.Fatalf("B's CQEs %v", got)
	}
	terms, _ := terminates(t, b.m.TakeSegments(), 1000)
	if len(terms) != 1 || terms[0].Layer != rdmap.LayerLLP || terms[0].Code != uint8(mpa.ErrCRC) {
		t.Fatalf("Terminates %v", terms)
	}
}

// A CQ that would overflow takes no more entries: CQ_OVERRUN, and the QPs
// completing into it go to the error state (docs/device.md, "Completion
// queue entry").
func TestCQOverrun(t *testing.T) {
	l := pair(t, 4, 4)
	a := l.a
	for i := range 1<<cqLog2 + 1 {
		a.post(hostif.SQE{Op: hostif.OpWrite, Signaled: true, ID: uint64(i), RKey: 1})
	}
	ev := a.events()
	if len(ev) != 2 || ev[0] != (hostif.Event{Type: hostif.EventCQOverrun, Index: 1, Phase: true}) || ev[1].Type != hostif.EventQPError {
		t.Fatalf("events %v", ev)
	}
	if q := a.m.Tables().QPs[5]; q.State != model.QPError {
		t.Fatalf("QP %v", q.State)
	}
	got := a.poll()
	if len(got) != 1<<cqLog2 || got[len(got)-1].ID != 1<<cqLog2-1 {
		t.Fatalf("%d CQEs, the last %v", len(got), got[len(got)-1])
	}
	// The device wrote nothing past the consumer index: the second
	// pass's first slot still holds the first pass's entry.
	if c := a.m.Tables().CQs[1]; !c.Overrun || c.PI != 1<<cqLog2 {
		t.Fatalf("CQ %+v", c)
	}
}

// Arming: CQ_CI's arm bit raises the CQ's vector at the next entry, the
// solicited-only arm at a Send with Solicited Event or an error only.
func TestCQArm(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	irq, _ := b.m.Vector(0)
	vec := b.d.Map.VectorsBase() + regs.VectorsVec - regs.VectorsBase
	b.m.Write32(vec+regs.VectorsVecCtrl, regs.VectorsVecCtrlEnableMask)
	for i := range 3 {
		b.recv(hostif.RQE{ID: uint64(i), LKey: stag(1, fullKey), Length: 10, LocalTO: dataTO})
	}
	fired := func() bool {
		select {
		case <-irq:
			return true
		default:
			return false
		}
	}
	b.pollArm(driver.CQArm | driver.CQArmSolicited)
	a.post(hostif.SQE{Op: hostif.OpSend, ID: 1})
	l.run()
	if fired() {
		t.Fatal("a Send without SE raised a solicited-only arm")
	}
	a.post(hostif.SQE{Op: hostif.OpSendSE, ID: 2})
	l.run()
	if !fired() {
		t.Fatal("a Send with SE did not raise the solicited-only arm")
	}
	a.post(hostif.SQE{Op: hostif.OpSendSE, ID: 3})
	l.run()
	if fired() {
		t.Fatal("the arm fired twice (it is one-shot)")
	}
	if got := b.pollArm(driver.CQArm); len(got) != 3 || !got[1].Solicited || got[0].Solicited {
		t.Fatalf("CQEs %v", got)
	}
}

// QP_DRAIN completes what was fetched: an outstanding Read and the posted
// receives complete FLUSHED; the outputs say how far the rings went.
func TestDrainFlushes(t *testing.T) {
	l := pair(t, 4, 4)
	a := l.a
	a.recv(hostif.RQE{ID: 0x40, LKey: stag(1, fullKey), Length: 10, LocalTO: dataTO})
	a.post(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 8, ID: 0x41, LKey: stag(1, fullKey), LocalTO: dataTO, RKey: stag(1, fullKey), RemoteTO: dataTO})
	a.post(hostif.SQE{Op: hostif.OpWrite, Signaled: true, ID: 0x42, RKey: 1})
	if got := a.poll(); len(got) != 0 {
		t.Fatalf("completions before the Read's response: %v", got)
	}
	out := a.ok(hostif.QPDrain{QPN: 5})
	if res, _ := hostif.DecodeDrainResult(out); res != (hostif.DrainResult{SQIndex: 2, RQIndex: 1}) {
		t.Fatalf("drain %v", res)
	}
	want := []hostif.CQE{
		{ID: 0x41, QPN: 5, Op: hostif.OpRead, Status: hostif.StatusFlushed, Phase: true},
		{ID: 0x42, QPN: 5, Op: hostif.OpWrite, Phase: true},
		{ID: 0x40, QPN: 5, Op: hostif.OpRecv, Status: hostif.StatusFlushed, Phase: true},
	}
	if got := a.poll(); !reflect.DeepEqual(got, want) {
		t.Fatalf("CQEs\n got %v\nwant %v", got, want)
	}
	// The Read Response that comes after the drain is not taken.
	l.run()
	if got := a.poll(); len(got) != 0 || a.data[0] != 0 {
		t.Fatalf("after the drain: %v", got)
	}
	a.ok(hostif.DestroyQP{QPN: 5})
}

// A receive whose buffer fails its MR check completes LOCAL_ACCESS and is
// not posted; the QP stays in RTS and the next receive takes the Send.
func TestBadReceive(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	b.recv(hostif.RQE{ID: 1, LKey: stag(1, fullKey+1), Length: 10, LocalTO: dataTO})
	b.recv(hostif.RQE{ID: 2, LKey: stag(1, fullKey), Length: 10, LocalTO: dataTO})
	a.post(hostif.SQE{Op: hostif.OpSend, ID: 9})
	l.run()
	want := []hostif.CQE{
		{ID: 1, QPN: 5, Op: hostif.OpRecv, Status: hostif.StatusLocalAccess, Phase: true},
		{ID: 2, QPN: 5, Op: hostif.OpRecv, Phase: true},
	}
	if got := b.poll(); !reflect.DeepEqual(got, want) {
		t.Fatalf("CQEs\n got %v\nwant %v", got, want)
	}
	if q := b.m.Tables().QPs[5]; q.State != model.QPRTS {
		t.Fatalf("QP %v", q.State)
	}
}

// The model is an oracle: the same calls give the same octets on the
// wire, the same memory and the same CQEs.
func TestDeterministic(t *testing.T) {
	run := func() ([]driver.Segment, []driver.Segment, []byte, []byte) {
		l := pair(t, 4, 2)
		a, b := l.a, l.b
		fill(a.data[:20000], 5)
		fill(b.data[20000:40000], 6)
		for i := range 3 {
			b.recv(hostif.RQE{ID: uint64(i), LKey: stag(1, fullKey), Length: 5000, LocalTO: dataTO + 100000 + uint64(i)*5000})
		}
		for i := range 3 {
			a.post(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 3000, ID: uint64(10 + i), LKey: stag(1, fullKey),
				LocalTO: dataTO + 50000 + uint64(i)*3000, RKey: stag(1, fullKey), RemoteTO: dataTO + 20000 + uint64(i)*3000})
			a.post(hostif.SQE{Op: hostif.OpWrite, Length: 7000, ID: uint64(20 + i), LKey: stag(1, fullKey), LocalTO: dataTO,
				RKey: stag(1, fullKey), RemoteTO: dataTO + 200000 + uint64(i)*7000})
			a.post(hostif.SQE{Op: hostif.OpSendSE, Signaled: true, Length: 4999, ID: uint64(30 + i), LKey: stag(1, fullKey), LocalTO: dataTO + 1})
		}
		l.run()
		return l.aOut, l.bOut, append([]byte(nil), a.buf.Mem...), append([]byte(nil), b.buf.Mem...)
	}
	a1, b1, am1, bm1 := run()
	a2, b2, am2, bm2 := run()
	if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(b1, b2) {
		t.Fatal("two identical runs sent different segments")
	}
	// Every octet of host memory: rings, CQEs, events, data.
	if !bytes.Equal(am1, am2) || !bytes.Equal(bm1, bm2) {
		t.Fatal("two identical runs left different memory")
	}
	if len(a1) < 20 {
		t.Fatalf("only %d segments: the scenario is too small to mean anything", len(a1))
	}
}

// Memory a posted receive names cannot be freed under the sink: Free
// refuses until QP_DRAIN has completed the receive (docs/device.md,
// Fences), and the receive still takes its Send.
func TestFreeUnderPostedReceive(t *testing.T) {
	l := pair(t, 4, 4)
	a, b := l.a, l.b
	buf, err := b.m.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	b.ok(hostif.DMAWindow{Slot: 1, Addr: buf.Addr, Length: 4096})
	b.ok(hostif.MRWrite{Index: 7, Key: 7, Access: allRight, PD: hostPD, BoundQPN: hostif.NotBound, Length: 4096, Addr: buf.Addr})
	b.recv(hostif.RQE{ID: 1, LKey: stag(7, 7), Length: 100, LocalTO: 0})
	if err := b.m.Free(buf); err == nil || !strings.Contains(err.Error(), "QP_DRAIN") {
		t.Fatalf("Free under a posted receive: %v", err)
	}
	fill(a.data[:100], 3)
	a.post(hostif.SQE{Op: hostif.OpSend, Length: 100, ID: 2, LKey: stag(1, fullKey), LocalTO: dataTO})
	l.run()
	if got := b.poll(); len(got) != 1 || got[0].Length != 100 || !bytes.Equal(buf.Mem[:100], a.data[:100]) {
		t.Fatalf("CQEs %v", got)
	}
	b.recv(hostif.RQE{ID: 3, LKey: stag(7, 7), Length: 100, LocalTO: 0})
	b.ok(hostif.QPDrain{QPN: 5})
	if err := b.m.Free(buf); err != nil {
		t.Fatalf("Free after QP_DRAIN: %v", err)
	}
}
