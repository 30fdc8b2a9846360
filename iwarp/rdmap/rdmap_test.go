package rdmap

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/openrnic/rnic/iwarp/ddp"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpcodes(t *testing.T) {
	for _, tt := range []struct {
		op      Opcode
		name    string
		tagged  bool
		qn      uint32
		inv, se bool
	}{
		{OpWrite, "RDMA Write", true, 0, false, false},
		{OpReadRequest, "RDMA Read Request", false, 1, false, false},
		{OpReadResponse, "RDMA Read Response", true, 0, false, false},
		{OpSend, "Send", false, 0, false, false},
		{OpSendInvalidate, "Send with Invalidate", false, 0, true, false},
		{OpSendSE, "Send with Solicited Event", false, 0, false, true},
		{OpSendSEInvalidate, "Send with Solicited Event and Invalidate", false, 0, true, true},
		{OpTerminate, "Terminate", false, 2, false, false},
	} {
		if tt.op.String() != tt.name || tt.op.Tagged() != tt.tagged || !tt.op.Valid() ||
			tt.op.Invalidates() != tt.inv || tt.op.SolicitedEvent() != tt.se || (!tt.tagged && tt.op.QN() != tt.qn) {
			t.Errorf("opcode %d: %q tagged %v QN %d", tt.op, tt.op, tt.op.Tagged(), tt.op.QN())
		}
		if c := Control(tt.op); c != 0x40|uint8(tt.op) {
			t.Errorf("Control(%v) = %#x", tt.op, c)
		}
		if rv, op := ParseControl(Control(tt.op)); rv != 1 || op != tt.op {
			t.Errorf("ParseControl(Control(%v)) = %d, %v", tt.op, rv, op)
		}
	}
	if Opcode(8).Valid() || Opcode(15).String() != "RDMAP opcode 0xf" {
		t.Error("opcode 8 or 15")
	}
	// Reserved bits of the control octet are ignored on receive.
	if rv, op := ParseControl(0x70 | 3); rv != 1 || op != OpSend {
		t.Errorf("ParseControl(0x73) = %d, %v", rv, op)
	}
	if rv, _ := ParseControl(0x83); rv != 2 {
		t.Errorf("RV of 0x83 = %d", rv)
	}
}

func TestReadRequest(t *testing.T) {
	rr := ReadRequest{SinkSTag: 0x01020304, SinkTO: 0x05060708090a0b0c, Size: 0x0d0e0f10, SourceSTag: 0x11121314, SourceTO: 0x15161718191a1b1c}
	// Written by hand from the field list: Sink STag, Sink TO, Size,
	// Source STag, Source TO, big-endian.
	want := unhex(t, "01020304 05060708090a0b0c 0d0e0f10 11121314 15161718191a1b1c")
	if got := rr.Append(nil); !bytes.Equal(got, want) {
		t.Fatalf("Append = % x", got)
	}
	got, err := ParseReadRequest(want)
	if err != nil || got != rr {
		t.Fatalf("ParseReadRequest = %+v, %v", got, err)
	}
	for _, n := range []int{0, 27, 29} {
		var fe *FormatError
		if _, err := ParseReadRequest(make([]byte, n)); !errors.As(err, &fe) {
			t.Errorf("%d octets: %v", n, err)
		}
	}
}

func TestTerminateRoundTrip(t *testing.T) {
	offT := unhex(t, "c1 40 0000ab01 0000000000000010")
	offU := unhex(t, "41 43 00000000 00000000 00000009 00000000")
	offRR := unhex(t, "41 41 00000000 00000001 00000003 00000000")
	rr := make([]byte, 28)
	for _, tt := range []struct {
		name string
		term Terminate
		wire string
	}{
		{"none", Terminate{Layer: LayerRDMAP, EType: 0, Code: 0}, "00000000"},
		{"code ff", Terminate{Layer: LayerRDMAP, EType: 2, Code: 0xff}, "02ff0000"},
		{"M", Terminate{Layer: LayerLLP, EType: 0, Code: 2, M: true, SegmentLen: 0x1234}, "20028000 1234"},
		{"D tagged", Terminate{Layer: LayerDDP, EType: 1, Code: 0, D: true, DDPHeader: offT}, "11004000 c1400000ab010000000000000010"},
		{"MD untagged", Terminate{Layer: LayerDDP, EType: 2, Code: 5, M: true, SegmentLen: 40, D: true, DDPHeader: offU}, "1205c000 0028 414300000000000000000000000900000000"},
		{"R", Terminate{Layer: LayerRDMAP, EType: 1, Code: 0, R: true, RDMAHeader: rr}, "01002000" + strings.Repeat("00", 28)},
		{"MDR", Terminate{Layer: LayerRDMAP, EType: 1, Code: 2, M: true, SegmentLen: 46, D: true, DDPHeader: offRR, R: true, RDMAHeader: rr}, "0102e000 002e 414100000000000000010000000300000000" + strings.Repeat("00", 28)},
		{"DR", Terminate{Layer: LayerRDMAP, EType: 2, Code: 6, D: true, DDPHeader: offRR, R: true, RDMAHeader: rr}, "02066000 414100000000000000010000000300000000" + strings.Repeat("00", 28)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.wire)
			got, err := tt.term.Append([]byte{0xee})
			if err != nil || !bytes.Equal(got[1:], want) || tt.term.Len() != len(want) {
				t.Fatalf("Append = % x, %v (Len %d)", got, err, tt.term.Len())
			}
			back, err := ParseTerminate(want)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := back.Append(nil)
			if !bytes.Equal(again, want) || back.Layer != tt.term.Layer || back.Code != tt.term.Code || back.M != tt.term.M {
				t.Fatalf("ParseTerminate = %+v", back)
			}
			if back.String() == "" {
				t.Error("empty String")
			}
		})
	}
	// The 13 reserved bits are not checked on receive.
	if _, err := ParseTerminate(unhex(t, "00001fff")); err != nil {
		t.Errorf("reserved bits: %v", err)
	}
}

func TestTerminateErrors(t *testing.T) {
	offT := unhex(t, "c1 40 0000ab01 0000000000000010")
	offU := unhex(t, "41 43 00000000 00000000 00000009 00000000")
	for _, tt := range []struct {
		name string
		term Terminate
	}{
		{"layer 3", Terminate{Layer: 3}},
		{"EType 16", Terminate{EType: 16}},
		{"D without header", Terminate{D: true}},
		{"header without D", Terminate{DDPHeader: offT}},
		{"tagged header of 18", Terminate{D: true, DDPHeader: append(bytes.Clone(offT), 0, 0, 0, 0)}},
		{"untagged header of 14", Terminate{D: true, DDPHeader: offU[:14]}},
		{"R without header", Terminate{R: true}},
		{"R header of 27", Terminate{R: true, RDMAHeader: make([]byte, 27)}},
		{"R with a Send header", Terminate{D: true, DDPHeader: offU, R: true, RDMAHeader: make([]byte, 28)}},
	} {
		if b, err := tt.term.Append([]byte{1}); err == nil || len(b) != 1 {
			t.Errorf("%s: Append = % x, %v", tt.name, b, err)
		}
	}
	for _, tt := range []struct{ name, wire string }{
		{"empty", ""},
		{"3 octets", "000000"},
		{"M without length", "00008000"},
		{"M with 1 octet", "00008000 00"},
		{"D without header", "00004000"},
		{"D with short tagged header", "00004000 c1400000000000000000000000"}, // 13 of 14 octets
		{"D with short untagged header", "00004000 4143000000000000000000000000000000"},
		{"R short", "00002000 " + strings.Repeat("00", 27)},
		{"trailing octet", "00000000 00"},
		{"trailing after M", "00008000 0000 00"},
		{"layer 3", "30000000"},
		{"layer 15", "f0000000"},
		{"R with Send header", "00006000 414300000000000000000000000900000000" + strings.Repeat("00", 28)},
	} {
		var fe *FormatError
		if _, err := ParseTerminate(unhex(t, tt.wire)); !errors.As(err, &fe) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestErrorNames(t *testing.T) {
	for _, tt := range []struct {
		l        Layer
		etype, c uint8
		want     string
	}{
		{LayerRDMAP, 0, 0, "Local Catastrophic Error"},
		{LayerRDMAP, 1, 0x00, "Remote Protection Error: Invalid STag"},
		{LayerRDMAP, 1, 0x01, "Remote Protection Error: Base or bounds violation"},
		{LayerRDMAP, 1, 0x02, "Remote Protection Error: Access rights violation"},
		{LayerRDMAP, 1, 0x03, "Remote Protection Error: STag not associated with RDMAP Stream"},
		{LayerRDMAP, 1, 0x04, "Remote Protection Error: TO wrap"},
		{LayerRDMAP, 1, 0x09, "Remote Protection Error: STag cannot be Invalidated"},
		{LayerRDMAP, 1, 0xff, "Remote Protection Error: Unspecified Error"},
		{LayerRDMAP, 2, 0x05, "Remote Operation Error: Invalid RDMAP version"},
		{LayerRDMAP, 2, 0x06, "Remote Operation Error: Unexpected OpCode"},
		{LayerRDMAP, 2, 0x07, "Remote Operation Error: Catastrophic error, localized to RDMAP Stream"},
		{LayerRDMAP, 2, 0x08, "Remote Operation Error: Catastrophic error, global"},
		{LayerRDMAP, 2, 0x09, "Remote Operation Error: STag cannot be Invalidated"},
		{LayerRDMAP, 2, 0xff, "Remote Operation Error: Unspecified Error"},
		{LayerRDMAP, 2, 0x00, "RDMAP error type 0x2 code 0x00"},
		{LayerDDP, 0, 0, "Local Catastrophic"},
		{LayerDDP, 1, 0x03, "Tagged Buffer Error: TO wrap"},
		{LayerDDP, 2, 0x06, "Untagged Buffer Error: Invalid DDP version"},
		{LayerLLP, 0, 1, "MPA: TCP connection closed, terminated or lost"},
		{LayerLLP, 0, 2, "MPA: CRC error"},
		{LayerLLP, 0, 3, "MPA: marker and ULPDU_Length mismatch"},
		{LayerLLP, 0, 4, "MPA: invalid Request or Reply frame"},
		{LayerLLP, 0, 5, "MPA: local catastrophic error"},
		{LayerLLP, 0, 6, "MPA: insufficient IRD resources"},
		{LayerLLP, 0, 7, "MPA: no matching RTR"},
		{LayerLLP, 0, 8, "LLP error type 0x0 code 0x08"},
		{Layer(5), 0, 0, "layer 5 error type 0x0 code 0x00"},
	} {
		if got := ErrorName(tt.l, tt.etype, tt.c); got != tt.want {
			t.Errorf("ErrorName(%d, %d, %#x) = %q, want %q", tt.l, tt.etype, tt.c, got, tt.want)
		}
	}
}

func TestErrorFrom(t *testing.T) {
	hdr := unhex(t, "c1 40 0000ab01 0000000000000010")
	for _, tt := range []struct {
		name   string
		err    error
		want   Error
		termHx string
	}{
		{"ddp tagged", &ddp.Error{Type: ddp.TypeTaggedBuffer, Code: ddp.CodeBaseBounds, Header: hdr, SegmentLen: 114},
			Error{Layer: LayerDDP, Type: 1, Code: 1}, "1101c000 0072 c1400000ab010000000000000010"},
		{"ddp untagged no header", &ddp.Error{Type: ddp.TypeUntaggedBuffer, Code: ddp.CodeInvalidQN},
			Error{Layer: LayerDDP, Type: 2, Code: 1}, "12010000"},
		{"access", &ddp.AccessError{STag: 0xab01, Need: ddp.RemoteWrite, Header: hdr, SegmentLen: 20},
			Error{Layer: LayerRDMAP, Type: 1, Code: 2}, "0102c000 0014 c1400000ab010000000000000010"},
		{"short header", &ddp.ShortHeaderError{Tagged: true, Have: 10, Need: 14},
			Error{Layer: LayerRDMAP, Type: 2, Code: 7}, "02078000 000a"},
		{"format", &FormatError{Msg: "x"}, Error{Layer: LayerRDMAP, Type: 2, Code: 7}, "02070000"},
		{"other", errors.New("disk on fire"), Error{Layer: LayerRDMAP, Type: 0, Code: 0}, "00000000"},
		{"segment too long for M", &ddp.Error{Type: ddp.TypeTaggedBuffer, Code: ddp.CodeTOWrap, SegmentLen: 70000},
			Error{Layer: LayerDDP, Type: 1, Code: 3}, "11030000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := ErrorFrom(tt.err)
			if e.Layer != tt.want.Layer || e.Type != tt.want.Type || e.Code != tt.want.Code {
				t.Fatalf("ErrorFrom = %v (%d/%d/%d)", e, e.Layer, e.Type, e.Code)
			}
			if !errors.Is(e, &tt.want) || !errors.Is(e, tt.err) {
				t.Error("errors.Is")
			}
			term := e.Terminate()
			got, err := term.Append(nil)
			if err != nil || !bytes.Equal(got, unhex(t, tt.termHx)) {
				t.Errorf("Terminate = % x, %v", got, err)
			}
		})
	}
	if ErrorFrom(nil) != nil {
		t.Error("ErrorFrom(nil)")
	}
	e := &Error{Layer: LayerLLP, Code: 2}
	if ErrorFrom(e) != e {
		t.Error("ErrorFrom(*Error) is not the identity")
	}
	m := MPAError(CodeMPACRC, hdr, 114)
	if got, _ := (&Terminate{}).Append(nil); len(got) != 4 {
		t.Error("empty Terminate")
	}
	term := m.Terminate()
	if got, _ := term.Append(nil); !bytes.Equal(got, unhex(t, "2002c000 0072 c1400000ab010000000000000010")) {
		t.Errorf("MPA CRC Terminate = % x", got)
	}
	back, _ := ParseTerminate(unhex(t, "2002c000 0072 c1400000ab010000000000000010"))
	if be := back.Err(); be.Layer != LayerLLP || be.Code != 2 || be.SegmentLen != 114 || !bytes.Equal(be.DDPHeader, hdr) {
		t.Errorf("Terminate.Err = %+v", be)
	}
}

func TestClassify(t *testing.T) {
	seg := func(h ddp.Header, n int) []byte { return append(h.Append(nil), make([]byte, n)...) }
	tg := func(ctrl uint8) ddp.Header {
		return ddp.Header{Tagged: true, Last: true, DV: 1, ULPCtrl: ctrl, STag: 1}
	}
	ut := func(ctrl uint8, qn uint32) ddp.Header {
		return ddp.Header{Last: true, DV: 1, ULPCtrl: ctrl, QN: qn, MSN: 1}
	}
	for _, tt := range []struct {
		name string
		seg  []byte
		op   Opcode
		err  *Error
	}{
		{"write", seg(tg(0x40), 5), OpWrite, nil},
		{"read response", seg(tg(0x42), 5), OpReadResponse, nil},
		{"read request", seg(ut(0x41, 1), 28), OpReadRequest, nil},
		{"send", seg(ut(0x43, 0), 0), OpSend, nil},
		{"send inv", seg(ut(0x44, 0), 1), OpSendInvalidate, nil},
		{"send se", seg(ut(0x45, 0), 1), OpSendSE, nil},
		{"send se inv", seg(ut(0x46, 0), 1), OpSendSEInvalidate, nil},
		{"terminate", seg(ut(0x47, 2), 4), OpTerminate, nil},
		{"reserved bits ignored", seg(ut(0x73, 0), 1), OpSend, nil},
		{"short", []byte{0xc1, 0x40, 0}, 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 7, SegmentLen: 3}},
		{"tagged DV 2", seg(ddp.Header{Tagged: true, DV: 2, ULPCtrl: 0x40}, 1), 0, &Error{Layer: LayerDDP, Type: 1, Code: 4, SegmentLen: 15}},
		{"untagged DV 0", seg(ddp.Header{DV: 0, ULPCtrl: 0x43}, 1), 0, &Error{Layer: LayerDDP, Type: 2, Code: 6, SegmentLen: 19}},
		{"RV 0", seg(tg(0x00), 1), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 5, SegmentLen: 15}},
		{"RV 2", seg(ut(0x83, 0), 1), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 5, SegmentLen: 19}},
		{"opcode 8", seg(ut(0x48, 0), 1), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 6, SegmentLen: 19}},
		{"opcode 15 tagged", seg(tg(0x4f), 1), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 6, SegmentLen: 15}},
		{"untagged write", seg(ut(0x40, 0), 1), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 6, SegmentLen: 19}},
		{"tagged send", seg(tg(0x43), 1), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 6, SegmentLen: 15}},
		{"tagged read request", seg(tg(0x41), 1), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 6, SegmentLen: 15}},
		{"send on QN 1", seg(ut(0x43, 1), 1), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 6, SegmentLen: 19}},
		{"read request on QN 0", seg(ut(0x41, 0), 28), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 6, SegmentLen: 46}},
		{"terminate on QN 0", seg(ut(0x47, 0), 4), 0, &Error{Layer: LayerRDMAP, Type: 2, Code: 6, SegmentLen: 22}},
		{"send on QN 3", seg(ut(0x43, 3), 1), 0, &Error{Layer: LayerDDP, Type: 2, Code: 1, SegmentLen: 19}},
		{"send on QN 2^32-1", seg(ut(0x43, math.MaxUint32), 1), 0, &Error{Layer: LayerDDP, Type: 2, Code: 1, SegmentLen: 19}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Classify(tt.seg)
			if tt.err == nil {
				if err != nil || s.Opcode != tt.op {
					t.Fatalf("Classify = %v, %v", s.Opcode, err)
				}
				hl := s.Header.Len()
				if len(s.Payload) != len(tt.seg)-hl {
					t.Errorf("payload %d octets", len(s.Payload))
				}
				if s.Opcode.PlacementAccess() != map[bool]ddp.Access{true: ddp.RemoteWrite, false: 0}[s.Opcode.Tagged()] {
					t.Error("PlacementAccess")
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(e, tt.err) || e.SegmentLen != tt.err.SegmentLen {
				t.Fatalf("Classify error = %v (%+v), want %v", err, e, tt.err)
			}
			if len(tt.seg) >= 14 && !bytes.Equal(e.DDPHeader, tt.seg[:len(e.DDPHeader)]) || len(tt.seg) >= 18 && len(e.DDPHeader) == 0 {
				t.Errorf("error header % x", e.DDPHeader)
			}
			// Every classification error makes a valid Terminate.
			term := e.Terminate()
			if _, err := term.Append(nil); err != nil {
				t.Errorf("Terminate: %v", err)
			}
		})
	}
}

func TestMessageErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		m      Message
		mulpdu int
	}{
		{"opcode 8", Message{Opcode: 8}, 128},
		{"send with invalidate STag", Message{Opcode: OpSend, InvalidateSTag: 1}, 128},
		{"read request of 27", Message{Opcode: OpReadRequest, Payload: make([]byte, 27)}, 128},
		{"read request too big for MULPDU", NewReadRequest(1, ReadRequest{}), 45},
		{"terminate garbage", Message{Opcode: OpTerminate, Payload: []byte{0, 0, 0x80, 0}}, 128},
		{"MULPDU 14 tagged", NewWrite(1, 0, []byte{1}), 14},
		{"write wraps TO", NewWrite(1, math.MaxUint64, []byte{1}), 128},
	} {
		if _, err := tt.m.Segments(tt.mulpdu); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if _, err := NewTerminate(1, &Terminate{D: true}); err == nil {
		t.Error("NewTerminate of an inconsistent Terminate")
	}
	// The largest Terminate fits the smallest MULPDU MPA offers.
	rrh := ddp.Header{Last: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 1}
	m, err := NewTerminate(1, &Terminate{M: true, D: true, DDPHeader: rrh.Append(nil), R: true, RDMAHeader: make([]byte, 28)})
	if err != nil {
		t.Fatal(err)
	}
	segs, err := m.AppendSegments(nil, 128)
	if err != nil || len(segs) != 1 || len(segs[0]) != ddp.UntaggedHeaderLen+MaxTerminateLen {
		t.Fatalf("largest Terminate: %d segments, %v", len(segs), err)
	}
}

// A message encoded by this package, placed by a ddp.Sink and read back.
func TestEncodeClassifyPlace(t *testing.T) {
	tab := ddp.NewSTagTable()
	mem := make([]byte, 4096)
	must(t, tab.Register(ddp.Region{STag: 0x1201, PD: 1, Access: ddp.RemoteWrite, Base: 0x10000, Buf: mem[:2048]}))
	sink := ddp.NewSink(1, 1, tab, NumQueues)
	recv := mem[2048:3072]
	if _, err := sink.Post(QNSend, recv, 7); err != nil {
		t.Fatal(err)
	}
	data := pattern(1500)
	var delivered []ddp.Delivery
	for _, m := range []Message{NewWrite(0x1201, 0x10010, data), NewSendSEInvalidate(1, 0x1201, data[:1000])} {
		segs, err := m.AppendSegments(nil, 300)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range segs {
			s, err := Classify(b)
			if err != nil {
				t.Fatal(err)
			}
			d, err := sink.Receive(&s.Header, s.Payload, s.Opcode.PlacementAccess())
			if err != nil {
				t.Fatal(err)
			}
			if d.Delivered {
				delivered = append(delivered, d)
			}
		}
	}
	if !bytes.Equal(mem[0x10:0x10+1500], data) || !bytes.Equal(recv[:1000], data[:1000]) {
		t.Fatal("placed data differs")
	}
	if len(delivered) != 2 || delivered[1].MsgLen != 1000 || delivered[1].ID != 7 || delivered[1].Header.ULPInfo != 0x1201 {
		t.Fatalf("deliveries %+v", delivered)
	}
	// The Send with SE and Invalidate invalidates STag 0x1201; a Write
	// after it is an Invalid STag error at DDP level.
	if err := Invalidate(tab, 1, 1, &delivered[1].Header); err != nil {
		t.Fatal(err)
	}
	if err := Invalidate(tab, 1, 1, &delivered[1].Header); !errors.Is(err, &Error{Layer: LayerRDMAP, Type: ETypeRemoteProtection, Code: CodeCannotInvalidate}) {
		t.Fatalf("second invalidation: %v", err)
	}
	w := NewWrite(0x1201, 0x10000, []byte{1})
	segs, _ := w.AppendSegments(nil, 128)
	s, _ := Classify(segs[0])
	_, err := sink.Receive(&s.Header, s.Payload, s.Opcode.PlacementAccess())
	term := ErrorFrom(err).Terminate()
	got, _ := term.Append(nil)
	if !bytes.Equal(got[:6], unhex(t, "1100c000 000f")) {
		t.Fatalf("Terminate for a Write after invalidation: % x", got)
	}
}

func TestReadSource(t *testing.T) {
	tab := ddp.NewSTagTable()
	mem := pattern(256)
	must(t, tab.Register(ddp.Region{STag: 0x3401, PD: 1, Access: ddp.RemoteRead, Base: 0x1000, Buf: mem}))
	must(t, tab.Register(ddp.Region{STag: 0x3501, PD: 1, Access: ddp.RemoteWrite, Base: 0, Buf: mem}))
	must(t, tab.Register(ddp.Region{STag: 0x3601, PD: 2, Access: ddp.RemoteRead, Base: 0, Buf: mem}))
	h := ddp.Header{Last: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 1}
	data, err := ReadSource(tab, 1, 1, &h, &ReadRequest{SourceSTag: 0x3401, SourceTO: 0x1010, Size: 16})
	if err != nil || !bytes.Equal(data, mem[16:32]) {
		t.Fatalf("ReadSource = % x, %v", data, err)
	}
	if data, err := ReadSource(tab, 1, 1, &h, &ReadRequest{SourceSTag: 0xdead, Size: 0}); err != nil || data != nil {
		t.Fatalf("zero-size read: %v", err)
	}
	for _, tt := range []struct {
		rr   ReadRequest
		code uint8
	}{
		{ReadRequest{SourceSTag: 0x3402, SourceTO: 0x1000, Size: 1}, CodeInvalidSTag},
		{ReadRequest{SourceSTag: 0x3401, SourceTO: 0x1000, Size: 257}, CodeBaseBounds},
		{ReadRequest{SourceSTag: 0x3501, SourceTO: 0, Size: 1}, CodeAccessRights},
		{ReadRequest{SourceSTag: 0x3601, SourceTO: 0, Size: 1}, CodeSTagNotAssociated},
		{ReadRequest{SourceSTag: 0x3401, SourceTO: math.MaxUint64, Size: 1}, CodeTOWrap},
	} {
		_, err := ReadSource(tab, 1, 1, &h, &tt.rr)
		var e *Error
		if !errors.As(err, &e) || e.Layer != LayerRDMAP || e.Type != ETypeRemoteProtection || e.Code != tt.code {
			t.Errorf("%+v: %v, want code %#x", tt.rr, err, tt.code)
			continue
		}
		term := e.Terminate()
		if !term.M || !term.D || !term.R || term.SegmentLen != 46 {
			t.Errorf("%+v: Terminate %v", tt.rr, term.String())
		}
		if _, err := term.Append(nil); err != nil {
			t.Error(err)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A Read Request is taken only as one DDP Segment (DeliveredReadRequest):
// the same 28 octets in two segments, or a last segment at MO 1 whose
// message length is 28 but whose first octet no segment wrote, are
// RDMAP errors 0/2/7, like a Read Request of the wrong length.
func TestDeliveredReadRequest(t *testing.T) {
	rr := ReadRequest{SinkSTag: 0x01020304, SinkTO: 0x05060708090a0b0c, Size: 0x0d0e0f10, SourceSTag: 0x11121314, SourceTO: 0x15161718191a1b1c}
	body := rr.Append(nil)
	m := NewReadRequest(1, rr)
	for _, tt := range []struct {
		name   string
		pieces [][2]int // [MO, length] of each segment, the last one L=1
		ok     bool
	}{
		{"one segment", [][2]int{{0, 28}}, true},
		{"two segments", [][2]int{{0, 10}, {10, 18}}, false},
		{"last segment at MO 1, octet 0 never written", [][2]int{{1, 27}}, false},
		{"one segment of 27 octets", [][2]int{{0, 27}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sink := ddp.NewSink(1, 1, ddp.NewSTagTable(), NumQueues)
			buf := make([]byte, 28)
			for i := range buf {
				buf[i] = 0xee // what the posted buffer held before
			}
			if _, err := sink.Post(QNReadRequest, buf, 9); err != nil {
				t.Fatal(err)
			}
			var d ddp.Delivery
			for i, p := range tt.pieces {
				h, err := m.Header()
				if err != nil {
					t.Fatal(err)
				}
				h.MO, h.Last = uint32(p[0]), i == len(tt.pieces)-1
				if d, err = sink.Receive(&h, body[p[0]:p[0]+p[1]], 0); err != nil {
					t.Fatalf("segment %d: %v", i, err)
				}
			}
			if !d.Delivered {
				t.Fatal("not delivered")
			}
			got, err := DeliveredReadRequest(&d)
			if tt.ok {
				if err != nil || got != rr {
					t.Fatalf("DeliveredReadRequest = %+v, %v", got, err)
				}
				return
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("DeliveredReadRequest: %v, want a FormatError", err)
			}
			if e := ErrorFrom(err); e.Layer != LayerRDMAP || e.Type != ETypeRemoteOperation || e.Code != CodeStreamCatastrophic {
				t.Fatalf("ErrorFrom = %d/%d/%d, want 0/2/7", e.Layer, e.Type, e.Code)
			}
		})
	}
}
