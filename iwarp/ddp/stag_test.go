package ddp

import (
	"errors"
	"math"
	"testing"
)

func TestSTagLayout(t *testing.T) {
	s := MakeSTag(0x123456, 0x78)
	if s != 0x12345678 || STagIndex(s) != 0x123456 || STagKey(s) != 0x78 {
		t.Errorf("MakeSTag/STagIndex/STagKey: %#x", s)
	}
}

func isDDP(err error, typ ErrorType, code uint8) bool {
	return errors.Is(err, &Error{Type: typ, Code: code})
}

func TestSTagTableLifecycle(t *testing.T) {
	tab := NewSTagTable()
	a := MakeSTag(7, 1)
	buf := make([]byte, 16)
	if err := tab.Register(Region{STag: a, PD: 1, Access: RemoteWrite, Base: 100, Buf: buf}); err != nil {
		t.Fatal(err)
	}
	if _, ok := tab.Lookup(a); !ok {
		t.Fatal("Lookup of a registered STag failed")
	}
	// Same index, other key: in use while valid.
	if err := tab.Register(Region{STag: MakeSTag(7, 2), PD: 1}); !errors.Is(err, ErrSTagInUse) {
		t.Errorf("Register over a valid index: %v", err)
	}
	// A stale key is an invalid STag.
	if _, ok := tab.Lookup(MakeSTag(7, 2)); ok {
		t.Error("Lookup with the wrong key succeeded")
	}
	if _, err := tab.Check(MakeSTag(7, 2), 1, 0, 100, 1, RemoteWrite); !isDDP(err, TypeTaggedBuffer, CodeInvalidSTag) {
		t.Errorf("Check with the wrong key: %v", err)
	}
	if err := tab.Invalidate(MakeSTag(7, 2)); !isDDP(err, TypeTaggedBuffer, CodeInvalidSTag) {
		t.Errorf("Invalidate with the wrong key: %v", err)
	}
	if err := tab.Invalidate(a); err != nil {
		t.Fatal(err)
	}
	if _, ok := tab.Lookup(a); ok {
		t.Error("Lookup after Invalidate succeeded")
	}
	if err := tab.Invalidate(a); !isDDP(err, TypeTaggedBuffer, CodeInvalidSTag) {
		t.Errorf("second Invalidate: %v", err)
	}
	if _, err := tab.Check(a, 1, 0, 100, 1, RemoteWrite); !isDDP(err, TypeTaggedBuffer, CodeInvalidSTag) {
		t.Errorf("Check after Invalidate: %v", err)
	}
	// Reuse of the index with a new key; the old STag stays invalid.
	b := MakeSTag(7, 2)
	if err := tab.Register(Region{STag: b, PD: 1, Access: RemoteWrite, Base: 0, Buf: buf}); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Check(a, 1, 0, 100, 1, RemoteWrite); !isDDP(err, TypeTaggedBuffer, CodeInvalidSTag) {
		t.Errorf("old key after reuse: %v", err)
	}
	if _, err := tab.Check(b, 1, 0, 0, 16, RemoteWrite); err != nil {
		t.Errorf("new key after reuse: %v", err)
	}
	if err := tab.Deregister(a); err == nil {
		t.Error("Deregister with the old key succeeded")
	}
	if err := tab.Deregister(b); err != nil {
		t.Fatal(err)
	}
	if _, ok := tab.Lookup(b); ok {
		t.Error("Lookup after Deregister succeeded")
	}
	if err := tab.Register(Region{STag: MakeSTag(1, 0), Base: math.MaxUint64, Buf: buf}); err == nil {
		t.Error("Register of a region wrapping the TO space succeeded")
	}
	if err := tab.Register(Region{STag: MakeSTag(1, 0), Base: math.MaxUint64 - 15, Buf: buf}); err == nil {
		t.Error("Register of a region ending at 2^64 succeeded")
	}
	if err := tab.Register(Region{STag: MakeSTag(1, 0), Base: math.MaxUint64 - 16, Buf: buf}); err != nil {
		t.Errorf("Register of a region ending at the top of the TO space: %v", err)
	}
}

func TestSTagTableCheck(t *testing.T) {
	tab := NewSTagTable()
	w := MakeSTag(1, 1)
	r := MakeSTag(2, 1)
	bound := MakeSTag(3, 1)
	top := MakeSTag(4, 1)
	must(t, tab.Register(Region{STag: w, PD: 1, Access: RemoteWrite, Base: 1000, Buf: make([]byte, 100)}))
	must(t, tab.Register(Region{STag: r, PD: 1, Access: RemoteRead, Base: 0, Buf: make([]byte, 100)}))
	must(t, tab.Register(Region{STag: bound, PD: 1, Stream: 5, Access: RemoteWrite | RemoteRead, Buf: make([]byte, 10)}))
	must(t, tab.Register(Region{STag: top, PD: 1, Access: RemoteWrite, Base: math.MaxUint64 - 10, Buf: make([]byte, 10)}))
	for _, tt := range []struct {
		name   string
		stag   uint32
		pd     uint32
		stream uint64
		to, n  uint64
		need   Access
		typ    ErrorType
		code   int // -1: no error, -2: *AccessError
	}{
		{"whole region", w, 1, 9, 1000, 100, RemoteWrite, 0, -1},
		{"last octet", w, 1, 9, 1099, 1, RemoteWrite, 0, -1},
		{"no STag", MakeSTag(9, 1), 1, 9, 0, 1, RemoteWrite, TypeTaggedBuffer, int(CodeInvalidSTag)},
		{"other PD", w, 2, 9, 1000, 1, RemoteWrite, TypeTaggedBuffer, int(CodeSTagNotAssociated)},
		{"other stream", bound, 1, 6, 0, 1, RemoteWrite, TypeTaggedBuffer, int(CodeSTagNotAssociated)},
		{"bound stream", bound, 1, 5, 0, 10, RemoteWrite | RemoteRead, 0, -1},
		{"no write right", r, 1, 9, 0, 1, RemoteWrite, 0, -2},
		{"no read right", w, 1, 9, 1000, 1, RemoteRead, 0, -2},
		{"below base", w, 1, 9, 999, 1, RemoteWrite, TypeTaggedBuffer, int(CodeBaseBounds)},
		{"past end", w, 1, 9, 1099, 2, RemoteWrite, TypeTaggedBuffer, int(CodeBaseBounds)},
		{"at end", w, 1, 9, 1100, 1, RemoteWrite, TypeTaggedBuffer, int(CodeBaseBounds)},
		{"far past end", w, 1, 9, 1 << 40, 1, RemoteWrite, TypeTaggedBuffer, int(CodeBaseBounds)},
		{"huge length", w, 1, 9, 1000, 1 << 63, RemoteWrite, TypeTaggedBuffer, int(CodeBaseBounds)},
		{"wrap", w, 1, 9, math.MaxUint64 - 4, 10, RemoteWrite, TypeTaggedBuffer, int(CodeTOWrap)},
		{"sum 2^64", top, 1, 9, math.MaxUint64 - 9, 10, RemoteWrite, TypeTaggedBuffer, int(CodeTOWrap)},
		{"last TO", top, 1, 9, math.MaxUint64, 1, RemoteWrite, TypeTaggedBuffer, int(CodeTOWrap)},
		{"top of TO space", top, 1, 9, math.MaxUint64 - 10, 10, RemoteWrite, 0, -1},
		{"past top region", top, 1, 9, math.MaxUint64 - 10, 11, RemoteWrite, TypeTaggedBuffer, int(CodeTOWrap)},
	} {
		_, err := tab.Check(tt.stag, tt.pd, tt.stream, tt.to, tt.n, tt.need)
		switch tt.code {
		case -1:
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
		case -2:
			var ae *AccessError
			if !errors.As(err, &ae) || ae.Need != tt.need {
				t.Errorf("%s: %v, want *AccessError", tt.name, err)
			}
		default:
			if !isDDP(err, tt.typ, uint8(tt.code)) {
				t.Errorf("%s: %v, want type %d code %d", tt.name, err, tt.typ, tt.code)
			}
		}
	}
	if _, err := tab.Check(w, 1, 0, 1000, 0, RemoteWrite); err == nil {
		t.Error("zero-length Check succeeded")
	}
	if err := tab.InvalidateRemote(bound, 1, 6); !isDDP(err, TypeTaggedBuffer, CodeSTagNotAssociated) {
		t.Errorf("InvalidateRemote from another stream: %v", err)
	}
	if err := tab.InvalidateRemote(w, 2, 6); !isDDP(err, TypeTaggedBuffer, CodeSTagNotAssociated) {
		t.Errorf("InvalidateRemote from another PD: %v", err)
	}
	if err := tab.InvalidateRemote(bound, 1, 5); err != nil {
		t.Errorf("InvalidateRemote: %v", err)
	}
	reg, _ := tab.Lookup(w)
	if p, ok := reg.Slice(1010, 5); !ok || len(p) != 5 || &p[0] != &reg.Buf[10] {
		t.Error("Slice of a valid range")
	}
	if _, ok := reg.Slice(1099, 2); ok {
		t.Error("Slice past the end succeeded")
	}
	if _, ok := reg.Slice(math.MaxUint64, 2); ok {
		t.Error("wrapping Slice succeeded")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
