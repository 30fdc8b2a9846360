package ddp

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

var (
	stagW     = MakeSTag(1, 0xaa) // PD 1, remote write, TOs 0x1000..0x103f
	stagR     = MakeSTag(2, 0x01) // PD 1, remote read only
	stagPD2   = MakeSTag(3, 0x01) // PD 2
	stagBound = MakeSTag(4, 0x01) // PD 1, bound to stream 99
	stagOwn   = MakeSTag(5, 0x01) // PD 1, bound to stream 7 (ours)
)

type fixture struct {
	tab  *STagTable
	sink *Sink
	mem  []byte // all buffers, regions and posted, carved from here
	snap []byte
}

// newFixture builds a sink for stream 7 of PD 1 with three queues: QN 0
// has two 32-octet buffers (MSN 1 and 2), QN 1 one 28-octet buffer, QN 2
// none.
func newFixture(t testing.TB) *fixture {
	f := &fixture{tab: NewSTagTable(), mem: make([]byte, 512)}
	must(t, f.tab.Register(Region{STag: stagW, PD: 1, Access: RemoteWrite, Base: 0x1000, Buf: f.mem[0:64]}))
	must(t, f.tab.Register(Region{STag: stagR, PD: 1, Access: RemoteRead, Base: 0, Buf: f.mem[64:128]}))
	must(t, f.tab.Register(Region{STag: stagPD2, PD: 2, Access: RemoteWrite, Base: 0, Buf: f.mem[128:192]}))
	must(t, f.tab.Register(Region{STag: stagBound, PD: 1, Stream: 99, Access: RemoteWrite, Base: 0, Buf: f.mem[192:256]}))
	must(t, f.tab.Register(Region{STag: stagOwn, PD: 1, Stream: 7, Access: RemoteWrite, Base: 0, Buf: f.mem[256:320]}))
	f.sink = NewSink(1, 7, f.tab, 3)
	for i, b := range [][]byte{f.mem[320:352], f.mem[352:384]} {
		msn, err := f.sink.Post(0, b, uint64(100+i))
		must(t, err)
		if msn != uint32(1+i) {
			t.Fatalf("Post gave MSN %d, want %d", msn, 1+i)
		}
	}
	if msn, err := f.sink.Post(1, f.mem[384:412], 200); err != nil || msn != 1 {
		t.Fatalf("Post QN 1: %d %v", msn, err)
	}
	f.snap = bytes.Clone(f.mem)
	return f
}

func (f *fixture) unchanged() bool { return bytes.Equal(f.mem, f.snap) }

func tagged(stag uint32, to uint64, last bool) Header {
	return Header{Tagged: true, Last: last, DV: 1, ULPCtrl: 0x40, STag: stag, TO: to}
}

func untagged(qn, msn, mo uint32, last bool) Header {
	return Header{Last: last, DV: 1, ULPCtrl: 0x43, QN: qn, MSN: msn, MO: mo}
}

func TestSinkErrors(t *testing.T) {
	ones := func(n int) []byte { return bytes.Repeat([]byte{1}, n) }
	tooWide := tagged(stagW, math.MaxUint64-3, true)
	for _, tt := range []struct {
		name    string
		h       Header
		payload []byte
		need    Access
		typ     ErrorType
		code    int // -1 ok, -2 *AccessError
	}{
		{"write whole region", tagged(stagW, 0x1000, true), ones(64), RemoteWrite, 0, -1},
		{"tagged DV 0", Header{Tagged: true, DV: 0, STag: stagW, TO: 0x1000}, ones(1), RemoteWrite, TypeTaggedBuffer, int(CodeTaggedInvalidVersion)},
		{"tagged DV 2 zero length", Header{Tagged: true, DV: 2, STag: 0, TO: 0}, nil, RemoteWrite, TypeTaggedBuffer, int(CodeTaggedInvalidVersion)},
		{"zero length bad STag and TO", tagged(0xdeadbeef, math.MaxUint64, true), nil, RemoteWrite, 0, -1},
		{"unknown STag", tagged(MakeSTag(77, 1), 0, true), ones(1), RemoteWrite, TypeTaggedBuffer, int(CodeInvalidSTag)},
		{"stale key", tagged(MakeSTag(1, 0xab), 0x1000, true), ones(1), RemoteWrite, TypeTaggedBuffer, int(CodeInvalidSTag)},
		{"other PD", tagged(stagPD2, 0, true), ones(1), RemoteWrite, TypeTaggedBuffer, int(CodeSTagNotAssociated)},
		{"other stream", tagged(stagBound, 0, true), ones(1), RemoteWrite, TypeTaggedBuffer, int(CodeSTagNotAssociated)},
		{"own stream", tagged(stagOwn, 0, true), ones(64), RemoteWrite, 0, -1},
		{"read-only", tagged(stagR, 0, true), ones(1), RemoteWrite, 0, -2},
		// Found by FuzzSinkPlace: a caller passing no right must not open a
		// read-only buffer to placement.
		{"read-only need none", tagged(stagR, 0, true), ones(1), 0, 0, -2},
		{"read-only need read", tagged(stagR, 0, true), ones(1), RemoteRead, 0, -2},
		{"below base", tagged(stagW, 0xfff, true), ones(2), RemoteWrite, TypeTaggedBuffer, int(CodeBaseBounds)},
		{"past end", tagged(stagW, 0x1001, true), ones(64), RemoteWrite, TypeTaggedBuffer, int(CodeBaseBounds)},
		{"TO wrap", tooWide, ones(8), RemoteWrite, TypeTaggedBuffer, int(CodeTOWrap)},
		{"untagged DV 3", Header{DV: 3, QN: 0, MSN: 1}, ones(1), 0, TypeUntaggedBuffer, int(CodeUntaggedInvalidVersion)},
		{"untagged DV 0 zero length", Header{DV: 0, QN: 0, MSN: 1, Last: true}, nil, 0, TypeUntaggedBuffer, int(CodeUntaggedInvalidVersion)},
		{"QN 3", untagged(3, 1, 0, true), ones(1), 0, TypeUntaggedBuffer, int(CodeInvalidQN)},
		{"QN 2^32-1", untagged(math.MaxUint32, 1, 0, true), ones(1), 0, TypeUntaggedBuffer, int(CodeInvalidQN)},
		{"QN 2 no buffer", untagged(2, 1, 0, true), ones(1), 0, TypeUntaggedBuffer, int(CodeNoBuffer)},
		{"QN 2 zero length no buffer", untagged(2, 1, 0, true), nil, 0, TypeUntaggedBuffer, int(CodeNoBuffer)},
		{"MSN past window", untagged(0, 3, 0, false), ones(1), 0, TypeUntaggedBuffer, int(CodeNoBuffer)},
		{"MSN before window", untagged(0, 0, 0, false), ones(1), 0, TypeUntaggedBuffer, int(CodeMSNRange)},
		{"MSN far behind", untagged(0, 0x80000001, 0, false), ones(1), 0, TypeUntaggedBuffer, int(CodeMSNRange)},
		{"MSN 2 middle segment", untagged(0, 2, 0, false), ones(32), 0, 0, -1},
		{"MSN 2 last before MSN 1", untagged(0, 2, 0, true), ones(1), 0, TypeUntaggedBuffer, int(CodeMSNRange)},
		{"whole buffer", untagged(0, 1, 0, true), ones(32), 0, 0, -1},
		{"MO at end zero length", untagged(0, 1, 32, true), nil, 0, 0, -1},
		{"MO beyond buffer", untagged(0, 1, 33, false), nil, 0, TypeUntaggedBuffer, int(CodeInvalidMO)},
		{"MO far beyond", untagged(0, 1, math.MaxUint32, false), ones(1), 0, TypeUntaggedBuffer, int(CodeInvalidMO)},
		{"MO at end with payload", untagged(0, 1, 32, false), ones(1), 0, TypeUntaggedBuffer, int(CodeTooLong)},
		{"too long", untagged(0, 1, 0, false), ones(33), 0, TypeUntaggedBuffer, int(CodeTooLong)},
		{"too long at MO", untagged(0, 1, 31, false), ones(2), 0, TypeUntaggedBuffer, int(CodeTooLong)},
		{"read request queue", untagged(1, 1, 0, true), ones(28), 0, 0, -1},
		{"read request too long", untagged(1, 1, 0, true), ones(29), 0, TypeUntaggedBuffer, int(CodeTooLong)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := f.sink.Receive(&tt.h, tt.payload, tt.need)
			switch tt.code {
			case -1:
				if err != nil {
					t.Fatal(err)
				}
				if len(tt.payload) > 0 && f.unchanged() {
					t.Error("nothing placed")
				}
				return
			case -2:
				var ae *AccessError
				if !errors.As(err, &ae) || !bytes.Equal(ae.Header, tt.h.Append(nil)) || ae.SegmentLen != tt.h.Len()+len(tt.payload) {
					t.Fatalf("err = %#v, want *AccessError with header and length", err)
				}
			default:
				var de *Error
				if !errors.As(err, &de) || de.Type != tt.typ || de.Code != uint8(tt.code) {
					t.Fatalf("err = %v, want %v", err, &Error{Type: tt.typ, Code: uint8(tt.code)})
				}
				// 7.1: the report carries the DDP header and segment length.
				if !bytes.Equal(de.Header, tt.h.Append(nil)) || de.SegmentLen != tt.h.Len()+len(tt.payload) {
					t.Errorf("report header % x length %d", de.Header, de.SegmentLen)
				}
			}
			if !f.unchanged() {
				t.Error("memory changed by a rejected segment")
			}
			// 7.1: everything after the first error is dropped and the
			// first error stays.
			good := tagged(stagW, 0x1000, true)
			if _, err2 := f.sink.Receive(&good, []byte{9}, RemoteWrite); err2 != err {
				t.Errorf("after the error: %v, want the first error", err2)
			}
			if err2 := f.sink.Place(&good, []byte{9}, RemoteWrite); err2 != err {
				t.Errorf("Place after the error: %v", err2)
			}
			if _, err2 := f.sink.Deliver(&good, 1, RemoteWrite); err2 != err {
				t.Errorf("Deliver after the error: %v", err2)
			}
			if f.sink.Err() != err || !f.unchanged() {
				t.Error("placed after the first error")
			}
		})
	}
}

func TestSinkUntaggedDelivery(t *testing.T) {
	f := newFixture(t)
	msg := []byte("0123456789abcdefghijklmnopqrstu") // 31 octets
	s, err := NewSegmenter(Header{DV: 1, ULPCtrl: 0x43, ULPInfo: 0x77, QN: 0, MSN: 1}, msg, 18+8)
	must(t, err)
	var last Delivery
	n := 0
	for h, p := range s.All() {
		d, err := f.sink.Receive(&h, p, 0)
		must(t, err)
		if d.Delivered != h.Last {
			t.Fatalf("segment %d: Delivered %v", n, d.Delivered)
		}
		last = d
		n++
	}
	if n != 4 || last.MsgLen != 31 || last.ID != 100 || !bytes.Equal(last.Buf[:last.MsgLen], msg) ||
		last.Header.ULPInfo != 0x77 || last.Header.ULPCtrl != 0x43 || last.Header.MSN != 1 {
		t.Fatalf("delivery %+v after %d segments", last, n)
	}
	if first, count := f.sink.Window(0); first != 2 || count != 1 {
		t.Errorf("window after delivery: %d, %d", first, count)
	}
	// MSN 1 has been delivered: a late segment of it is behind the window.
	h := untagged(0, 1, 0, false)
	if _, err := f.sink.Receive(&h, []byte{1}, 0); !isDDP(err, TypeUntaggedBuffer, CodeMSNRange) {
		t.Errorf("segment of a delivered message: %v", err)
	}
}

func TestSinkZeroLengthSend(t *testing.T) {
	f := newFixture(t)
	h := untagged(0, 1, 0, true)
	d, err := f.sink.Receive(&h, nil, 0)
	if err != nil || !d.Delivered || d.MsgLen != 0 || d.ID != 100 {
		t.Fatalf("zero-length Send: %+v %v", d, err)
	}
	// The next one consumes the second buffer.
	h.MSN = 2
	if d, err = f.sink.Receive(&h, nil, 0); err != nil || d.ID != 101 {
		t.Fatalf("second zero-length Send: %+v %v", d, err)
	}
	// And then there is none left.
	h.MSN = 3
	if _, err = f.sink.Receive(&h, nil, 0); !isDDP(err, TypeUntaggedBuffer, CodeNoBuffer) {
		t.Fatalf("third zero-length Send: %v", err)
	}
}

func TestSinkInterleavedMessages(t *testing.T) {
	// Segments of MSN 1 and 2 interleave; the L segments come in MSN order.
	f := newFixture(t)
	steps := []struct {
		h       Header
		payload string
	}{
		{untagged(0, 1, 0, false), "aa"},
		{untagged(0, 2, 0, false), "bb"},
		{untagged(0, 1, 2, true), "AA"},
		{untagged(0, 2, 2, true), "BBB"},
	}
	var got []Delivery
	for _, s := range steps {
		d, err := f.sink.Receive(&s.h, []byte(s.payload), 0)
		must(t, err)
		if d.Delivered {
			got = append(got, d)
		}
	}
	if len(got) != 2 || string(got[0].Buf[:got[0].MsgLen]) != "aaAA" || string(got[1].Buf[:got[1].MsgLen]) != "bbBBB" {
		t.Fatalf("deliveries %+v", got)
	}
}

func TestSinkTaggedDelivery(t *testing.T) {
	f := newFixture(t)
	h := tagged(stagW, 0x1000, false)
	d, err := f.sink.Receive(&h, []byte{1, 2}, RemoteWrite)
	if err != nil || d.Delivered {
		t.Fatalf("middle segment: %+v %v", d, err)
	}
	h = tagged(stagW, 0x1002, true)
	d, err = f.sink.Receive(&h, []byte{3}, RemoteWrite)
	if err != nil || !d.Delivered || d.Header.STag != stagW || d.Header.TO != 0x1002 {
		t.Fatalf("last segment: %+v %v", d, err)
	}
	if !bytes.Equal(f.mem[:4], []byte{1, 2, 3, 0}) {
		t.Errorf("memory % x", f.mem[:4])
	}
}

// TestSinkReceiveVBounds: ReceiveV checks and writes n octets, whatever
// the pieces hold; pieces longer than n put nothing past them, tagged or
// untagged.
func TestSinkReceiveVBounds(t *testing.T) {
	f := newFixture(t)
	h := tagged(stagW, 0x1000+60, true)
	pieces := [][]byte{{1, 2}, {}, {3, 4, 5, 6, 7, 8}}
	if _, err := f.sink.ReceiveV(&h, pieces, 4, RemoteWrite); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.mem[58:66], []byte{0, 0, 1, 2, 3, 4, 0, 0}) {
		t.Errorf("tagged: memory % x", f.mem[58:66])
	}
	// 5 octets at TO base+60 of a 64-octet region: refused, nothing placed.
	g := newFixture(t)
	if _, err := g.sink.ReceiveV(&h, pieces, 5, RemoteWrite); err == nil || !g.unchanged() {
		t.Fatalf("5 octets past the end: err %v, memory changed %v", err, !g.unchanged())
	}
	u := untagged(0, 1, 28, true)
	if _, err := f.sink.ReceiveV(&u, [][]byte{{9}, {9, 9, 9, 9}}, 3, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.mem[320+27:320+33], []byte{0, 9, 9, 9, 0, 0}) {
		t.Errorf("untagged: memory % x", f.mem[320+27:320+33])
	}
}

func TestSinkInvalidate(t *testing.T) {
	f := newFixture(t)
	h := tagged(stagW, 0x1000, true)
	must(t, f.tab.InvalidateRemote(stagW, 1, 7))
	if _, err := f.sink.Receive(&h, []byte{1}, RemoteWrite); !isDDP(err, TypeTaggedBuffer, CodeInvalidSTag) || !f.unchanged() {
		t.Fatalf("write after invalidation: %v", err)
	}
}

func TestSinkPlaceDeliver(t *testing.T) {
	f := newFixture(t)
	// Early placement of MSN 2's L segment, then MSN 1 arrives in order.
	h2 := untagged(0, 2, 0, true)
	must(t, f.sink.Place(&h2, []byte("two"), 0))
	if string(f.mem[352:355]) != "two" {
		t.Fatal("Place did not place")
	}
	// Deliver in stream order: MSN 2 cannot be delivered before MSN 1;
	// Receive MSN 1 first.
	h1 := untagged(0, 1, 0, true)
	d, err := f.sink.Receive(&h1, []byte("one"), 0)
	if err != nil || d.ID != 100 {
		t.Fatal(d, err)
	}
	d, err = f.sink.Deliver(&h2, 3, 0)
	if err != nil || !d.Delivered || d.MsgLen != 3 || d.ID != 101 || string(d.Buf[:3]) != "two" {
		t.Fatal(d, err)
	}

	// A Place that fails is not final: a buffer posted later makes the
	// same segment valid.
	f = newFixture(t)
	h := untagged(2, 1, 0, true)
	if err := f.sink.Place(&h, []byte("term"), 0); !isDDP(err, TypeUntaggedBuffer, CodeNoBuffer) {
		t.Fatalf("early Place without buffer: %v", err)
	}
	if f.sink.Err() != nil || !f.unchanged() {
		t.Fatal("failed Place recorded an error or placed")
	}
	_, err = f.sink.Post(2, f.mem[448:480], 300)
	must(t, err)
	if d, err := f.sink.Receive(&h, []byte("term"), 0); err != nil || d.ID != 300 {
		t.Fatal(d, err)
	}

	// Deliver re-checks: an STag invalidated between Place and Deliver
	// is a final error at Deliver.
	f = newFixture(t)
	h = tagged(stagW, 0x1000, true)
	must(t, f.sink.Place(&h, []byte{5}, RemoteWrite))
	must(t, f.tab.Invalidate(stagW))
	if _, err := f.sink.Deliver(&h, 1, RemoteWrite); !isDDP(err, TypeTaggedBuffer, CodeInvalidSTag) || f.sink.Err() != err {
		t.Fatalf("Deliver after invalidation: %v", err)
	}
}

func TestSinkFailAndShortSegment(t *testing.T) {
	f := newFixture(t)
	_, err := f.sink.ReceiveSegment([]byte{0xc1, 0x40, 0, 0}, RemoteWrite)
	var se *ShortHeaderError
	if !errors.As(err, &se) || f.sink.Err() != err {
		t.Fatalf("short segment: %v", err)
	}
	if f.sink.Fail(errors.New("later")) != err {
		t.Error("Fail replaced the first error")
	}
	good := tagged(stagW, 0x1000, true)
	seg := good.Append(nil)
	if _, err2 := f.sink.ReceiveSegment(append(seg, 1), RemoteWrite); err2 != err || !f.unchanged() {
		t.Error("placed after a short segment")
	}
}

func TestSinkPostErrors(t *testing.T) {
	s := NewSink(1, 7, NewSTagTable(), 1)
	if _, err := s.Post(1, nil, 0); err == nil {
		t.Error("Post to QN 1 of a one-queue sink")
	}
	// Many posts wrap the ring.
	for i := 0; i < 100; i++ {
		msn, err := s.Post(0, make([]byte, 1), uint64(i))
		if err != nil || msn != uint32(1+i) {
			t.Fatal(msn, err)
		}
		if i%3 == 0 {
			h := untagged(0, s.queues[0].first, 0, true)
			d, err := s.Receive(&h, []byte{1}, 0)
			if err != nil || !d.Delivered {
				t.Fatal(err)
			}
		}
	}
}

func TestSinkReceiveAllocs(t *testing.T) {
	f := newFixture(t)
	h := tagged(stagW, 0x1000, false)
	payload := make([]byte, 64)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := f.sink.Receive(&h, payload, RemoteWrite); err != nil {
			panic(err)
		}
	}); n != 0 {
		t.Errorf("Receive allocates %v times", n)
	}
}
