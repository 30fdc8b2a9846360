package hostif

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/quick"
)

// entry builds a golden entry octet by octet: each piece is placed at the
// offset docs/device.md's table gives its field, little-endian written out
// by hand. Nothing here calls an encoder.
func entry(size int, pieces ...any) []byte {
	b := make([]byte, size)
	for i := 0; i < len(pieces); i += 2 {
		copy(b[pieces[i].(int):], pieces[i+1].([]byte))
	}
	return b
}

func o(v ...byte) []byte { return v }

// Send with Invalidate, signalled and fenced (docs/device.md "Send queue
// entry").
var goldenSQE = entry(SQESize,
	0, o(0x03), // opcode 3: Send with Invalidate
	1, o(0x03), // flags: signalled, fence
	4, o(0x34, 0x12, 0x00, 0x00), // length 0x1234
	8, o(0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08), // WR ID 0x0807060504030201
	16, o(0xdd, 0xcc, 0xbb, 0xaa), // local STag 0xaabbccdd
	24, o(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11), // local TO
	32, o(0x04, 0x03, 0x02, 0x01), // remote STag 0x01020304
	36, o(0x0d, 0x0c, 0x0b, 0x0a), // STag to invalidate 0x0a0b0c0d
	40, o(0xef, 0xbe, 0xad, 0xde, 0x00, 0x7f, 0x00, 0x00), // remote TO 0x7f00deadbeef
)

var wantSQE = SQE{Op: OpSendInv, Signaled: true, Fence: true, Length: 0x1234, ID: 0x0807060504030201,
	LKey: 0xaabbccdd, LocalTO: 0x1122334455667788, RKey: 0x01020304, InvalidateSTag: 0x0a0b0c0d,
	RemoteTO: 0x7f00deadbeef}

var goldenRQE = entry(RQESize,
	0, o(0xf0, 0xde, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12), // WR ID
	8, o(0x07, 0x01, 0x00, 0x00), // local STag 0x107
	12, o(0x00, 0x10, 0x00, 0x00), // length 4096
	16, o(0x00, 0x20, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00), // local TO 0x100002000
)

var wantRQE = RQE{ID: 0x123456789abcdef0, LKey: 0x107, Length: 4096, LocalTO: 0x100002000}

// A receive that failed because the peer sent a Terminate (status REMOTE
// carries its layer/etype and code), second pass of the ring (phase 0).
var goldenCQERemote = entry(CQESize,
	0, o(0x2a, 0, 0, 0, 0, 0, 0, 0), // WR ID 42
	8, o(0x00, 0x01, 0x00, 0x00), // length 256
	12, o(0x05, 0x02), // qpn 0x205
	14, o(0x06), // opcode 6: Receive
	15, o(0x04), // status 4: REMOTE
	21, o(0x12), // layer 1 (DDP) / etype 2
	22, o(0x07), // code 7
)

var wantCQERemote = CQE{ID: 42, Length: 256, QPN: 0x205, Op: OpRecv, Status: StatusRemote,
	TermLayerEType: 0x12, TermCode: 7}

// A Send with SE and Invalidate received: solicited, invalidated, phase 1.
var goldenCQERecv = entry(CQESize,
	0, o(1, 0, 0, 0, 0, 0, 0, 0x80), // WR ID 0x8000000000000001
	8, o(0x10, 0, 0, 0), // length 16
	12, o(0x03, 0x00), // qpn 3
	14, o(0x06), // Receive
	15, o(0x00), // SUCCESS
	16, o(0x44, 0x33, 0x22, 0x11), // STag invalidated 0x11223344
	20, o(0x03), // flags: solicited, invalidated
	31, o(0x01), // phase 1
)

var wantCQERecv = CQE{ID: 0x8000000000000001, Length: 16, QPN: 3, Op: OpRecv, Status: StatusSuccess,
	InvalidatedSTag: 0x11223344, Solicited: true, Invalidated: true, Phase: true}

var goldenEventDMA = entry(EventSize,
	0, o(0x07), // DMA_REFUSED
	1, o(0x04), // what for: placement write
	2, o(0x09, 0x00), // qpn 9
	4, o(0x00, 0x02, 0x00, 0x00), // length 512
	8, o(0x00, 0xf0, 0xff, 0xff, 0xff, 0xff, 0xab), // address 0xabfffffffff000 (56 bits)
	15, o(0x01), // phase 1
)

var wantEventDMA = Event{Type: EventDMARefused, Detail: DMAForPlacement, Index: 9, Value: 512,
	Address: 0xabfffffffff000, Phase: true}

var goldenEventDoorbell = entry(EventSize,
	0, o(0x04), // DOORBELL_BAD
	1, o(0x02), // CQ_CI
	2, o(0x00, 0x10), // cqn 4096 (beyond the CQs)
	4, o(0x05, 0x00, 0x00, 0x80), // the value written: arm, index 5
)

var wantEventDoorbell = Event{Type: EventDoorbellBad, Detail: DoorbellCQ, Index: 0x1000, Value: 0x80000005}

var goldenExc = entry(ExcHeaderLen,
	0, o(0x11, 0x00), // qpn 17
	2, o(0xdc, 0x05), // length 1500
	4, o(0x78, 0x56, 0x34, 0x12), // seq 0x12345678
	8, o(0x03), // out of order
	15, o(0x01), // phase 1
)

var wantExc = ExcHeader{QPN: 17, Length: 1500, Seq: 0x12345678, Reason: ExcOutOfOrder, Phase: true}

func TestGoldenSQE(t *testing.T) {
	got, err := DecodeSQE(goldenSQE)
	if err != nil || got != wantSQE {
		t.Fatalf("decode: %v, %v; want %v", got, err, wantSQE)
	}
	b := make([]byte, SQESize)
	for i := range b {
		b[i] = 0xee // Encode must write the reserved octets, not leave them
	}
	if err := wantSQE.Encode(b); err != nil || !bytes.Equal(b, goldenSQE) {
		t.Fatalf("encode: %v\n got % x\nwant % x", err, b, goldenSQE)
	}
}

func TestGoldenRQE(t *testing.T) {
	got, err := DecodeRQE(goldenRQE)
	if err != nil || got != wantRQE {
		t.Fatalf("decode: %v, %v; want %v", got, err, wantRQE)
	}
	b := bytes.Repeat([]byte{0xee}, RQESize)
	if err := wantRQE.Encode(b); err != nil || !bytes.Equal(b, goldenRQE) {
		t.Fatalf("encode: %v\n got % x\nwant % x", err, b, goldenRQE)
	}
}

func TestGoldenCQE(t *testing.T) {
	for _, g := range []struct {
		b    []byte
		want CQE
	}{{goldenCQERemote, wantCQERemote}, {goldenCQERecv, wantCQERecv}} {
		got, err := DecodeCQE(g.b)
		if err != nil || got != g.want {
			t.Fatalf("decode: %v, %v; want %v", got, err, g.want)
		}
		b := bytes.Repeat([]byte{0xee}, CQESize)
		if err := g.want.Encode(b); err != nil || !bytes.Equal(b, g.b) {
			t.Fatalf("encode: %v\n got % x\nwant % x", err, b, g.b)
		}
	}
}

func TestGoldenEvent(t *testing.T) {
	for _, g := range []struct {
		b    []byte
		want Event
	}{{goldenEventDMA, wantEventDMA}, {goldenEventDoorbell, wantEventDoorbell}} {
		got, err := DecodeEvent(g.b)
		if err != nil || got != g.want {
			t.Fatalf("decode: %v, %v; want %v", got, err, g.want)
		}
		b := bytes.Repeat([]byte{0xee}, EventSize)
		if err := g.want.Encode(b); err != nil || !bytes.Equal(b, g.b) {
			t.Fatalf("encode: %v\n got % x\nwant % x", err, b, g.b)
		}
	}
}

func TestGoldenExcHeader(t *testing.T) {
	got, err := DecodeExcHeader(goldenExc, 2048)
	if err != nil || got != wantExc {
		t.Fatalf("decode: %v, %v; want %v", got, err, wantExc)
	}
	b := bytes.Repeat([]byte{0xee}, ExcHeaderLen)
	if err := wantExc.Encode(b); err != nil || !bytes.Equal(b, goldenExc) {
		t.Fatalf("encode: %v\n got % x\nwant % x", err, b, goldenExc)
	}
}

func TestPhase(t *testing.T) {
	// A ring of 4 entries: indices 0..3 are the first pass (phase 1), 4..7
	// the second (0), 8 the third (1); the 16-bit index wraps on a pass
	// boundary since the size divides 2^16.
	for _, c := range []struct {
		idx  uint16
		want bool
	}{{0, true}, {3, true}, {4, false}, {7, false}, {8, true}, {0xfffc, false}, {0xffff, false}} {
		if got := Phase(c.idx, 2); got != c.want {
			t.Errorf("Phase(%d, 2) = %v, want %v", c.idx, got, c.want)
		}
	}
}

// refusal checks that err is a *FieldError about the field at off.
func refusal(t *testing.T, err error, field string, off int) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FieldError about %s at %d", err, field, off)
	}
	if fe.Offset != off || !strings.Contains(fe.Field, field) {
		t.Fatalf("refused %q at %d, want %q at %d (%v)", fe.Field, fe.Offset, field, off, err)
	}
	if msg := err.Error(); !strings.Contains(msg, fe.Layout) || !strings.Contains(msg, "docs/device.md") {
		t.Fatalf("message %q names neither the layout nor where it is defined", msg)
	}
}

func edit(g []byte, off int, v byte) []byte {
	b := bytes.Clone(g)
	b[off] = v
	return b
}

func TestDecodeSQERefuses(t *testing.T) {
	for _, c := range []struct {
		off   int
		v     byte
		field string
	}{
		{0, 6, "opcode"}, {0, 0xff, "opcode"}, {1, 0x07, "flags bits 7:2"}, {1, 0x80, "flags bits 7:2"},
		{2, 1, "reserved"}, {3, 0x80, "reserved"}, {20, 1, "reserved"}, {23, 1, "reserved"},
		{48, 1, "reserved"}, {63, 1, "reserved"},
	} {
		_, err := DecodeSQE(edit(goldenSQE, c.off, c.v))
		refusal(t, err, c.field, c.off)
	}
	if _, err := DecodeSQE(goldenSQE[:63]); err == nil || !strings.Contains(err.Error(), "63 octets") {
		t.Errorf("short entry: %v", err)
	}
	e := wantSQE
	e.Op = OpRecv
	refusal(t, e.Encode(make([]byte, SQESize)), "opcode", 0)
}

func TestDecodeRQERefuses(t *testing.T) {
	for _, off := range []int{24, 27, 31} {
		_, err := DecodeRQE(edit(goldenRQE, off, 0x40))
		refusal(t, err, "reserved", off)
	}
	if _, err := DecodeRQE(goldenRQE[:31]); err == nil {
		t.Error("a short RQ entry decoded")
	}
}

func TestDecodeCQERefuses(t *testing.T) {
	for _, c := range []struct {
		g     []byte
		off   int
		v     byte
		field string
	}{
		{goldenCQERecv, 14, 7, "opcode"}, {goldenCQERecv, 15, 7, "status"},
		{goldenCQERecv, 20, 0x04, "flags bits 7:2"},
		{goldenCQERecv, 21, 0x12, "Terminate"}, {goldenCQERecv, 22, 1, "Terminate"}, // SUCCESS has none
		{goldenCQERemote, 23, 1, "reserved"}, {goldenCQERemote, 30, 1, "reserved"},
		{goldenCQERemote, 31, 0x02, "octet 31 bits 7:1"},
	} {
		_, err := DecodeCQE(edit(c.g, c.off, c.v))
		refusal(t, err, c.field, c.off)
	}
	e := wantCQERecv
	e.TermCode = 1
	refusal(t, e.Encode(make([]byte, CQESize)), "Terminate", 21)
	e = wantCQERecv
	e.Op = 7
	refusal(t, e.Encode(make([]byte, CQESize)), "opcode", 14)
	e = wantCQERecv
	e.Status = 7
	refusal(t, e.Encode(make([]byte, CQESize)), "status", 15)
}

func TestDecodeEventRefuses(t *testing.T) {
	for _, c := range []struct {
		g     []byte
		off   int
		v     byte
		field string
	}{
		{goldenEventDoorbell, 0, 0, "type"}, {goldenEventDoorbell, 0, 8, "type"},
		{goldenEventDoorbell, 1, 3, "detail of DOORBELL_BAD"},
		{goldenEventDoorbell, 8, 1, "address"}, {goldenEventDoorbell, 14, 1, "address"},
		{goldenEventDoorbell, 15, 0x80, "octet 15 bits 7:1"},
		{goldenEventDMA, 1, 0, "detail of DMA_REFUSED"}, {goldenEventDMA, 1, 8, "detail of DMA_REFUSED"},
	} {
		_, err := DecodeEvent(edit(c.g, c.off, c.v))
		refusal(t, err, c.field, c.off)
	}
	// Per type: a value or detail above what the type defines.
	for _, c := range []struct {
		e     Event
		field string
		off   int
	}{
		{Event{Type: EventCQOverrun, Index: 1, Value: 1}, "value of CQ_OVERRUN", 4},
		{Event{Type: EventCQOverrun, Index: 1, Detail: 1}, "detail of CQ_OVERRUN", 1},
		{Event{Type: EventQPError, Value: 0x100}, "value of QP_ERROR", 4},
		{Event{Type: EventException, Detail: 6}, "detail of EXCEPTION", 1},
		{Event{Type: EventException, Detail: 0}, "detail of EXCEPTION", 1},
		{Event{Type: EventException, Detail: 3, Value: 0x10000}, "value of EXCEPTION", 4},
		{Event{Type: EventRingOverrun, Detail: 2}, "detail of RING_OVERRUN", 1},
		{Event{Type: EventDMARefused, Detail: 1, Address: 1 << 56}, "address", 8},
	} {
		refusal(t, c.e.Encode(make([]byte, EventSize)), c.field, c.off)
		// The same entry written by hand (not through Encode) is refused by
		// the decoder.
		b := make([]byte, EventSize)
		b[0], b[1] = byte(c.e.Type), c.e.Detail
		b[2], b[3] = byte(c.e.Index), byte(c.e.Index>>8)
		b[4], b[5], b[6], b[7] = byte(c.e.Value), byte(c.e.Value>>8), byte(c.e.Value>>16), byte(c.e.Value>>24)
		if c.field == "address" {
			continue // a 57-bit address does not fit the 7 octets
		}
		_, err := DecodeEvent(b)
		refusal(t, err, c.field, c.off)
	}
}

func TestDecodeExcHeaderRefuses(t *testing.T) {
	for _, c := range []struct {
		off   int
		v     byte
		field string
	}{{8, 0, "reason"}, {8, 6, "reason"}, {9, 1, "reserved"}, {14, 1, "reserved"}, {15, 2, "octet 15 bits 7:1"}} {
		_, err := DecodeExcHeader(edit(goldenExc, c.off, c.v), 2048)
		refusal(t, err, c.field, c.off)
	}
	// 1500 octets do not fit a 1024-octet buffer after the 16-octet header;
	// 1516 is the smallest buffer that holds them.
	_, err := DecodeExcHeader(goldenExc, 1024)
	refusal(t, err, "length", 2)
	if _, err := DecodeExcHeader(goldenExc, 1516); err != nil {
		t.Errorf("1500 octets in a 1516-octet buffer: %v", err)
	}
	_, err = DecodeExcHeader(edit(goldenExc, 2, 0xdd), 1516)
	refusal(t, err, "length", 2)
	h := wantExc
	h.Reason = 0
	refusal(t, h.Encode(make([]byte, ExcHeaderLen)), "reason", 8)
}

// Round trips: any value a field can hold survives encode then decode.
func TestRoundTrips(t *testing.T) {
	cfg := &quick.Config{MaxCount: 2000}
	sqe := func(e SQE) bool {
		e.Op %= OpRecv
		b := make([]byte, SQESize)
		if e.Encode(b) != nil {
			return false
		}
		got, err := DecodeSQE(b)
		return err == nil && got == e
	}
	rqe := func(e RQE) bool {
		b := make([]byte, RQESize)
		if e.Encode(b) != nil {
			return false
		}
		got, err := DecodeRQE(b)
		return err == nil && got == e
	}
	cqe := func(e CQE) bool {
		e.Op %= OpRecv + 1
		e.Status %= StatusConn + 1
		if !e.Status.CarriesTerminate() {
			e.TermLayerEType, e.TermCode = 0, 0
		}
		b := make([]byte, CQESize)
		if e.Encode(b) != nil {
			return false
		}
		got, err := DecodeCQE(b)
		return err == nil && got == e
	}
	ev := func(e Event) bool {
		e.Type = EventQPError + e.Type%EventDMARefused
		r := eventRules[e.Type]
		e.Detail = uint8(int(e.Detail) % (int(r.maxDetail) + 1))
		if e.Type == EventException || e.Type == EventDMARefused {
			e.Detail |= 1
		}
		e.Value = uint32(uint64(e.Value) % (uint64(r.maxValue) + 1))
		e.Address &= maxAddress56
		if !r.address {
			e.Address = 0
		}
		b := make([]byte, EventSize)
		if err := e.Encode(b); err != nil {
			t.Log(err)
			return false
		}
		got, err := DecodeEvent(b)
		return err == nil && got == e
	}
	exc := func(h ExcHeader) bool {
		h.Reason = ExcNotEnabled + h.Reason%ExcEmpty
		b := make([]byte, ExcHeaderLen)
		if h.Encode(b) != nil {
			return false
		}
		got, err := DecodeExcHeader(b, 1<<17)
		return err == nil && got == h
	}
	for name, f := range map[string]any{"SQE": sqe, "RQE": rqe, "CQE": cqe, "event": ev, "exception": exc} {
		if err := quick.Check(f, cfg); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzEntries: whatever octets an entry holds, a decoder either refuses
// them or returns a value whose encoding is exactly those octets (no field
// is dropped, none is read twice, nothing reserved is let through).
func FuzzEntries(f *testing.F) {
	for _, g := range [][]byte{goldenSQE, goldenRQE, goldenCQERemote, goldenCQERecv, goldenEventDMA,
		goldenEventDoorbell, goldenExc} {
		f.Add(g)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(name string, size int, enc func([]byte) error) {
			out := make([]byte, size)
			if err := enc(out); err != nil {
				t.Fatalf("%s: decoded % x, then refused to encode it: %v", name, b[:size], err)
			}
			if !bytes.Equal(out, b[:size]) {
				t.Fatalf("%s: % x decoded and encoded as % x", name, b[:size], out)
			}
		}
		if e, err := DecodeSQE(b); err == nil {
			check("SQE", SQESize, e.Encode)
		}
		if e, err := DecodeRQE(b); err == nil {
			check("RQE", RQESize, e.Encode)
		}
		if e, err := DecodeCQE(b); err == nil {
			check("CQE", CQESize, e.Encode)
		}
		if e, err := DecodeEvent(b); err == nil {
			check("event", EventSize, e.Encode)
		}
		if e, err := DecodeExcHeader(b, 1<<17); err == nil {
			check("exception", ExcHeaderLen, e.Encode)
		}
	})
}

func TestStrings(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{OpSendSEInv.String(), "Send with SE and Invalidate"}, {Opcode(9).String(), "opcode 9 (unknown)"},
		{StatusLocalAccess.String(), "LOCAL_ACCESS"}, {Status(8).String(), "status 8 (unknown)"},
		{EventDMARefused.String(), "DMA_REFUSED"}, {EventType(0).String(), "event type 0 (unknown)"},
		{ExcDuplicate.String(), "duplicate"}, {ExcReason(0).String(), "exception reason 0 (unknown)"},
		{wantSQE.String(), "SQE{Send with Invalidate id=0x807060504030201 len=4660 lkey=0xaabbccdd " +
			"lto=0x1122334455667788 rkey=0x1020304 rto=0x7f00deadbeef inv=0xa0b0c0d signaled=true fence=true}"},
		{wantCQERemote.String(), "CQE{qp 517 Receive REMOTE id=0x2a len=256 terminate layer/etype=0x12 code=0x07 phase=0}"},
		{wantEventDMA.String(), "Event{DMA_REFUSED index 9 detail=4 value=0x200 address=0xabfffffffff000 phase=1}"},
		{wantExc.String(), "Exception{qp 17 seq 305419896 len 1500 out of order phase=1}"},
		{wantRQE.String(), "RQE{id=0x123456789abcdef0 lkey=0x107 len=4096 lto=0x100002000}"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
