package ddp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The expected octets below were written by hand from figures 3 to 5 of
// RFC 5041 (control octet T|L|Rsvd(4)|DV(2), then RsvdULP, then the
// big-endian fields), not produced by the code under test.
var headerTests = []struct {
	name string
	h    Header
	wire string
}{
	{
		// RDMA Write, last segment: T=1 L=1 DV=1 -> 0xC1, RDMAP control
		// RV=1 opcode 0 -> 0x40.
		name: "tagged last",
		h:    Header{Tagged: true, Last: true, DV: 1, ULPCtrl: 0x40, STag: 0x01020304, TO: 0x1122334455667788},
		wire: "c1 40 01020304 1122334455667788",
	},
	{
		name: "tagged middle",
		h:    Header{Tagged: true, DV: 1, ULPCtrl: 0x42, STag: 0xfffffffe, TO: 0},
		wire: "81 42 fffffffe 0000000000000000",
	},
	{
		// The Send of RFC 5044 figure 5: "41 43", QN 0, MSN 1, MO 0.
		name: "untagged RFC 5044 figure 5",
		h:    Header{Last: true, DV: 1, ULPCtrl: 0x43, QN: 0, MSN: 1, MO: 0},
		wire: "41 43 00000000 00000000 00000001 00000000",
	},
	{
		name: "untagged all fields",
		h:    Header{DV: 1, ULPCtrl: 0x44, ULPInfo: 0xdeadbeef, QN: 2, MSN: 0x01020304, MO: 0x0a0b0c0d},
		wire: "01 44 deadbeef 00000002 01020304 0a0b0c0d",
	},
	{
		// Reserved bits and a wrong DV survive a round trip: the receiver
		// does not check Rsvd and reports DV itself.
		name: "reserved bits and DV 2",
		h:    Header{Tagged: true, Rsvd: 0xf, DV: 2, STag: 1, TO: 2},
		wire: "be 00 00000001 0000000000000002",
	},
	{
		name: "untagged DV 0 rsvd 5",
		h:    Header{Rsvd: 5, DV: 0, MSN: 7},
		wire: "14 00 00000000 00000000 00000007 00000000",
	},
}

func TestHeaderAppendParse(t *testing.T) {
	for _, tt := range headerTests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.wire)
			got := tt.h.Append([]byte{0xaa})
			if !bytes.Equal(got[1:], want) || got[0] != 0xaa {
				t.Fatalf("Append = % x, want aa % x", got, want)
			}
			if tt.h.Len() != len(want) {
				t.Errorf("Len = %d, want %d", tt.h.Len(), len(want))
			}
			seg := append(want, 1, 2, 3)
			h, payload, err := ParseHeader(seg)
			if err != nil {
				t.Fatal(err)
			}
			if h != tt.h {
				t.Errorf("ParseHeader = %+v, want %+v", h, tt.h)
			}
			if !bytes.Equal(payload, []byte{1, 2, 3}) {
				t.Errorf("payload = % x", payload)
			}
		})
	}
}

func TestAppendIgnoresOtherModelsFields(t *testing.T) {
	h := Header{Tagged: true, DV: 1, STag: 5, TO: 6, ULPInfo: 7, QN: 8, MSN: 9, MO: 10}
	if got, want := h.Append(nil), unhex(t, "81 00 00000005 0000000000000006"); !bytes.Equal(got, want) {
		t.Errorf("tagged Append = % x, want % x", got, want)
	}
	h = Header{DV: 1, STag: 5, TO: 6, QN: 8, MSN: 9, MO: 10}
	if got, want := h.Append(nil), unhex(t, "01 00 00000000 00000008 00000009 0000000a"); !bytes.Equal(got, want) {
		t.Errorf("untagged Append = % x, want % x", got, want)
	}
}

func TestParseHeaderShort(t *testing.T) {
	tagged := unhex(t, "c1 40 01020304 1122334455667788")
	untagged := unhex(t, "41 43 00000000 00000000 00000001 00000000")
	check := func(b []byte, wantTagged bool, wantNeed int) {
		t.Helper()
		_, _, err := ParseHeader(b)
		var se *ShortHeaderError
		if !errors.As(err, &se) {
			t.Fatalf("ParseHeader(% x) err = %v, want *ShortHeaderError", b, err)
		}
		if se.Have != len(b) || se.Need != wantNeed || se.Tagged != wantTagged {
			t.Errorf("ParseHeader(% x) = %+v", b, se)
		}
		if se.Error() == "" {
			t.Error("empty message")
		}
	}
	check(nil, false, TaggedHeaderLen)
	for n := 1; n < TaggedHeaderLen; n++ {
		check(tagged[:n], true, TaggedHeaderLen)
	}
	for n := 1; n < UntaggedHeaderLen; n++ {
		check(untagged[:n], false, UntaggedHeaderLen)
	}
	if _, p, err := ParseHeader(tagged); err != nil || len(p) != 0 {
		t.Errorf("exact tagged header: %v, payload %d", err, len(p))
	}
	if _, p, err := ParseHeader(untagged); err != nil || len(p) != 0 {
		t.Errorf("exact untagged header: %v, payload %d", err, len(p))
	}
}

func TestHeaderAllocs(t *testing.T) {
	buf := make([]byte, 0, 64)
	seg := unhex(t, "41 43 00000000 00000000 00000001 00000000")
	n := testing.AllocsPerRun(100, func() {
		h, _, _ := ParseHeader(seg)
		buf = h.Append(buf[:0])
	})
	if n != 0 {
		t.Errorf("ParseHeader+Append allocate %v times", n)
	}
}

func TestErrorStrings(t *testing.T) {
	for _, tt := range []struct {
		t    ErrorType
		code uint8
		want string
	}{
		{TypeLocalCatastrophic, CodeLocalCatastrophic, "Local Catastrophic"},
		{TypeTaggedBuffer, CodeInvalidSTag, "Tagged Buffer Error: Invalid STag"},
		{TypeTaggedBuffer, CodeBaseBounds, "Tagged Buffer Error: Base or bounds violation"},
		{TypeTaggedBuffer, CodeSTagNotAssociated, "Tagged Buffer Error: STag not associated with DDP Stream"},
		{TypeTaggedBuffer, CodeTOWrap, "Tagged Buffer Error: TO wrap"},
		{TypeTaggedBuffer, CodeTaggedInvalidVersion, "Tagged Buffer Error: Invalid DDP version"},
		{TypeUntaggedBuffer, CodeInvalidQN, "Untagged Buffer Error: Invalid QN"},
		{TypeUntaggedBuffer, CodeNoBuffer, "Untagged Buffer Error: Invalid MSN - no buffer available"},
		{TypeUntaggedBuffer, CodeMSNRange, "Untagged Buffer Error: Invalid MSN - MSN range is not valid"},
		{TypeUntaggedBuffer, CodeInvalidMO, "Untagged Buffer Error: Invalid MO"},
		{TypeUntaggedBuffer, CodeTooLong, "Untagged Buffer Error: DDP Message too long for available buffer"},
		{TypeUntaggedBuffer, CodeUntaggedInvalidVersion, "Untagged Buffer Error: Invalid DDP version"},
		{TypeUntaggedBuffer, 0x00, "Untagged Buffer Error: Untagged Buffer Error, code 0x00"},
	} {
		e := &Error{Type: tt.t, Code: tt.code}
		if got := e.String(); got != tt.want {
			t.Errorf("%d/%d: String = %q, want %q", tt.t, tt.code, got, tt.want)
		}
		if !errors.Is(e, &Error{Type: tt.t, Code: tt.code}) {
			t.Errorf("errors.Is fails for %v", e)
		}
		if errors.Is(e, &Error{Type: tt.t, Code: tt.code + 1}) {
			t.Errorf("errors.Is matches another code for %v", e)
		}
	}
}
