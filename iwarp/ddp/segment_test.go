package ddp

import (
	"bytes"
	"math"
	"testing"
)

type seg struct {
	h       Header
	payload []byte
}

func collect(t *testing.T, h Header, msg []byte, mulpdu int) []seg {
	t.Helper()
	s, err := NewSegmenter(h, msg, mulpdu)
	if err != nil {
		t.Fatal(err)
	}
	count := s.Count()
	var out []seg
	for {
		h, p, ok := s.Next()
		if !ok {
			break
		}
		if h.Len()+len(p) > mulpdu {
			t.Fatalf("segment of %d octets exceeds MULPDU %d", h.Len()+len(p), mulpdu)
		}
		out = append(out, seg{h, p})
	}
	if len(out) != count {
		t.Errorf("Count = %d, got %d segments", count, len(out))
	}
	if _, _, ok := s.Next(); ok {
		t.Error("Next after the last segment returned ok")
	}
	return out
}

// The two examples of RFC 5041 5.2.
func TestSegmenterSpecExamples(t *testing.T) {
	msg := make([]byte, 2048)
	for i := range msg {
		msg[i] = byte(i)
	}
	untagged := collect(t, Header{DV: 1, QN: 0, MSN: 7}, msg, 1500)
	if len(untagged) != 2 ||
		untagged[0].h.MO != 0 || len(untagged[0].payload) != 1482 || untagged[0].h.Last ||
		untagged[1].h.MO != 1482 || len(untagged[1].payload) != 566 || !untagged[1].h.Last {
		t.Errorf("untagged 2048 @ MULPDU 1500: %v", untagged)
	}
	tagged := collect(t, Header{Tagged: true, DV: 1, STag: 9, TO: 16384}, msg, 1500)
	if len(tagged) != 2 ||
		tagged[0].h.TO != 16384 || len(tagged[0].payload) != 1486 || tagged[0].h.Last ||
		tagged[1].h.TO != 17870 || len(tagged[1].payload) != 562 || !tagged[1].h.Last {
		t.Errorf("tagged 2048 @ TO 16384, MULPDU 1500: %v", tagged)
	}
	// Reassembly gives the message back.
	for _, segs := range [][]seg{untagged, tagged} {
		var got []byte
		for _, s := range segs {
			got = append(got, s.payload...)
		}
		if !bytes.Equal(got, msg) {
			t.Error("reassembled message differs")
		}
	}
}

func TestSegmenterEdges(t *testing.T) {
	h := Header{DV: 1, ULPCtrl: 0x43, ULPInfo: 5, QN: 1, MSN: 3, MO: 0}
	// Zero-length message: exactly one segment with L=1 (5.2).
	segs := collect(t, h, nil, 128)
	if len(segs) != 1 || !segs[0].h.Last || len(segs[0].payload) != 0 {
		t.Errorf("zero-length: %v", segs)
	}
	th := Header{Tagged: true, DV: 1, STag: 1, TO: math.MaxUint64}
	segs = collect(t, th, []byte{}, 14+1)
	if len(segs) != 1 || !segs[0].h.Last || segs[0].h.TO != math.MaxUint64 {
		t.Errorf("zero-length tagged at the top TO: %v", segs)
	}
	// Exact multiple of the payload size: no empty trailing segment.
	segs = collect(t, h, make([]byte, 3*110), 128)
	if len(segs) != 3 || !segs[2].h.Last || segs[1].h.Last || segs[2].h.MO != 220 {
		t.Errorf("exact multiple: %v", segs)
	}
	// Every segment carries the template's ULP fields and identity.
	for _, s := range segs {
		if s.h.ULPCtrl != 0x43 || s.h.ULPInfo != 5 || s.h.QN != 1 || s.h.MSN != 3 || s.h.DV != 1 {
			t.Errorf("fields not copied: %v", s.h)
		}
	}
	// The last octet of the TO space can be written.
	segs = collect(t, Header{Tagged: true, DV: 1, TO: math.MaxUint64 - 10}, make([]byte, 10), 14+4)
	if len(segs) != 3 || segs[2].h.TO != math.MaxUint64-2 {
		t.Errorf("top of TO space: %v", segs)
	}
	// A template's L bit is ignored.
	segs = collect(t, Header{Last: true, DV: 1}, make([]byte, 200), 128)
	if segs[0].h.Last {
		t.Error("first of two segments has L=1")
	}
	// Payload sub-slices are capped so that appending to one cannot
	// overwrite the next.
	if cap(segs[0].payload) != len(segs[0].payload) {
		t.Error("payload capacity exceeds its length")
	}
}

func TestSegmenterErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		h      Header
		n      int
		mulpdu int
	}{
		{"untagged MULPDU = header", Header{}, 0, 18},
		{"tagged MULPDU = header", Header{Tagged: true}, 10, 14},
		{"TO wrap", Header{Tagged: true, TO: math.MaxUint64 - 8}, 10, 128},
		{"TO sum 2^64", Header{Tagged: true, TO: math.MaxUint64 - 9}, 10, 128},
		{"MO past 2^32", Header{MO: math.MaxUint32 - 8}, 10, 128},
	} {
		if _, err := NewSegmenter(tt.h, make([]byte, tt.n), tt.mulpdu); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestSegmenterAll(t *testing.T) {
	s, err := NewSegmenter(Header{Tagged: true, DV: 1}, make([]byte, 1000), 128)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for h, p := range s.All() {
		if h.TO != uint64(n*114) || (len(p) != 114 && !h.Last) {
			t.Errorf("segment %d: %v, %d octets", n, h, len(p))
		}
		n++
	}
	if n != 9 {
		t.Errorf("%d segments, want 9", n)
	}
}

func TestSegmenterAllocs(t *testing.T) {
	msg := make([]byte, 64<<10)
	buf := make([]byte, 0, 2048)
	allocs := testing.AllocsPerRun(20, func() {
		s, err := NewSegmenter(Header{Tagged: true, DV: 1, STag: 1}, msg, 1460)
		if err != nil {
			panic(err)
		}
		for {
			h, p, ok := s.Next()
			if !ok {
				break
			}
			buf = AppendSegment(buf[:0], h, p)
		}
	})
	if allocs != 0 {
		t.Errorf("segmenting allocates %v times", allocs)
	}
}
