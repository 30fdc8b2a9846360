package ddp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func FuzzParseHeader(f *testing.F) {
	for _, tt := range headerTests {
		f.Add(append(tt.h.Append(nil), 0xee))
	}
	f.Add([]byte{})
	f.Add([]byte{0xc1, 0x40, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, payload, err := ParseHeader(b)
		if err != nil {
			var se *ShortHeaderError
			if !errors.As(err, &se) || se.Have != len(b) || se.Need <= len(b) {
				t.Fatalf("ParseHeader(% x): %v", b, err)
			}
			return
		}
		if h.Len()+len(payload) != len(b) {
			t.Fatalf("header %d + payload %d != %d", h.Len(), len(payload), len(b))
		}
		// Every header bit survives a round trip, reserved bits included.
		if got := h.Append(nil); !bytes.Equal(got, b[:h.Len()]) {
			t.Fatalf("Append(ParseHeader(% x)) = % x", b[:h.Len()], got)
		}
		if len(payload) > 0 && &payload[0] != &b[h.Len()] {
			t.Fatal("payload is not a sub-slice of the input")
		}
	})
}

// Fuzz input for FuzzSinkPlace is a list of operations, each an op octet,
// a 16-bit big-endian length and that many octets:
//
//	op&3 == 0: ReceiveSegment(data, need)
//	op&3 == 1: ParseHeader(data), Place, then Deliver (or Receive if
//	           Place refused); a short header goes to Fail
//	op&3 == 2: Invalidate the region with STag index data[0]%4+1 (key 1)
//	op&3 == 3: Post a buffer of data[0] octets to QN (op>>2)%3
//
// need = Access(op>>4 & 3).
func fuzzOp(op byte, data []byte) []byte {
	b := []byte{op, 0, 0}
	binary.BigEndian.PutUint16(b[1:], uint16(len(data)))
	return append(b, data...)
}

// fuzzSink is the world of FuzzSinkPlace: four regions in a 1 KiB arena
// (only region 1 may be written by the stream), posted buffers in a
// second KiB, guard octets everywhere else.
type fuzzSink struct {
	arena    []byte
	snap     []byte
	writable []bool
	tab      *STagTable
	sink     *Sink
	postOff  int
}

func newFuzzSink(t testing.TB) *fuzzSink {
	w := &fuzzSink{arena: bytes.Repeat([]byte{0x5a}, 2048), writable: make([]bool, 2048), tab: NewSTagTable(), postOff: 1024}
	regions := []Region{
		{STag: MakeSTag(1, 1), PD: 1, Access: RemoteWrite, Base: 0x1000, Buf: w.arena[16:272]},              // writable
		{STag: MakeSTag(2, 1), PD: 1, Access: RemoteRead, Base: 0x1000, Buf: w.arena[288:544]},              // read only
		{STag: MakeSTag(3, 1), PD: 2, Access: RemoteWrite, Base: 0, Buf: w.arena[560:816]},                  // other PD
		{STag: MakeSTag(4, 1), PD: 1, Stream: 2, Access: RemoteWrite, Base: 0xfff0, Buf: w.arena[832:1008]}, // other stream
	}
	for _, r := range regions {
		must(t, w.tab.Register(r))
	}
	for i := 16; i < 272; i++ {
		w.writable[i] = true
	}
	w.sink = NewSink(1, 1, w.tab, 3)
	w.post(0, 64)
	w.post(0, 32)
	w.post(1, 28)
	w.snap = bytes.Clone(w.arena)
	return w
}

func (w *fuzzSink) post(qn uint32, n int) {
	if w.postOff+n+8 > len(w.arena) {
		return
	}
	w.postOff += 8 // guard
	w.sink.Post(qn, w.arena[w.postOff:w.postOff+n], 0)
	for i := w.postOff; i < w.postOff+n; i++ {
		w.writable[i] = true
	}
	w.postOff += n
}

// check fails if an octet outside the writable areas changed, then takes
// the new state as the reference.
func (w *fuzzSink) check(t *testing.T, what string) {
	for i := range w.arena {
		if w.arena[i] != w.snap[i] && !w.writable[i] {
			t.Fatalf("%s wrote arena[%d] outside every writable range", what, i)
		}
	}
	copy(w.snap, w.arena)
	if w.sink.Err() != nil {
		// After the first error nothing may be written at all.
		clear(w.writable)
	}
}

func FuzzSinkPlace(f *testing.F) {
	w := Header{Tagged: true, Last: true, DV: 1, ULPCtrl: 0x40, STag: MakeSTag(1, 1), TO: 0x1000}
	s := Header{Last: true, DV: 1, ULPCtrl: 0x43, QN: 0, MSN: 1}
	rr := Header{Last: true, DV: 1, ULPCtrl: 0x41, QN: 1, MSN: 1}
	ro := Header{Tagged: true, Last: true, DV: 1, STag: MakeSTag(2, 1), TO: 0x1000}
	seg := func(h Header, n int) []byte { return append(h.Append(nil), bytes.Repeat([]byte{0xa5}, n)...) }
	f.Add(fuzzOp(0x10, seg(w, 256)))
	f.Add(bytes.Join([][]byte{fuzzOp(0x10, seg(w, 10)), fuzzOp(0x00, seg(s, 64)), fuzzOp(0x00, seg(rr, 28))}, nil))
	f.Add(bytes.Join([][]byte{fuzzOp(0x11, seg(w, 10)), fuzzOp(0x02, []byte{0}), fuzzOp(0x10, seg(w, 10))}, nil))
	f.Add(bytes.Join([][]byte{fuzzOp(0x10, seg(ro, 1)), fuzzOp(0x10, seg(w, 1))}, nil))
	f.Add(bytes.Join([][]byte{fuzzOp(0x07, []byte{40}), fuzzOp(0x01, seg(Header{Last: true, DV: 1, QN: 1, MSN: 2}, 40))}, nil))
	f.Add(fuzzOp(0x00, []byte{0x41, 0x43, 0, 0}))
	f.Fuzz(func(t *testing.T, in []byte) {
		world := newFuzzSink(t)
		for len(in) >= 3 {
			op, n := in[0], int(binary.BigEndian.Uint16(in[1:3]))
			in = in[3:]
			if n > len(in) {
				n = len(in)
			}
			data := in[:n]
			in = in[n:]
			need := Access(op>>4) & (RemoteWrite | RemoteRead)
			switch op & 3 {
			case 0:
				world.sink.ReceiveSegment(data, need)
			case 1:
				h, payload, err := ParseHeader(data)
				if err != nil {
					world.sink.Fail(err)
					break
				}
				if world.sink.Place(&h, payload, need) == nil {
					world.check(t, "Place")
					world.sink.Deliver(&h, len(payload), need)
				} else {
					world.sink.Receive(&h, payload, need)
				}
			case 2:
				if len(data) > 0 {
					stag := MakeSTag(uint32(data[0]%4+1), 1)
					if world.tab.Invalidate(stag) == nil && stag == MakeSTag(1, 1) {
						for i := 16; i < 272; i++ {
							world.writable[i] = false
						}
					}
				}
			case 3:
				if len(data) > 0 {
					world.post(uint32(op>>2)%3, int(data[0]))
				}
			}
			world.check(t, "segment")
		}
	})
}
