package mpa

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// recorder is an OOOHandler that checks the placement and delivery rules
// as calls come in: every FPDU placed once, delivered once, in stream order,
// never before it was placed, and nothing at all after an error.
type recorder struct {
	t         testing.TB
	o         *OOOReceiver
	base      uint32
	placed    map[uint32][]byte // placed, not yet delivered
	ever      map[uint32]bool   // ever placed
	delivered []delivery
	early     int // placed while the gap before it was open
	lastOff   int64
	failed    bool // the receiver has returned an error
}

func newRecorder(t testing.TB, base uint32) *recorder {
	return &recorder{t: t, base: base, placed: map[uint32][]byte{}, ever: map[uint32]bool{}, lastOff: -1}
}

func (r *recorder) Place(seq uint32, u []byte) error {
	if r.failed {
		r.t.Fatalf("Place(%#x) after an error", seq)
	}
	if r.ever[seq] {
		r.t.Fatalf("FPDU at %#x placed twice", seq)
	}
	r.ever[seq] = true
	r.placed[seq] = bytes.Clone(u)
	if !less(seq, r.o.Seq()) {
		r.early++
	}
	return nil
}

func (r *recorder) Deliver(seq uint32) error {
	if r.failed {
		r.t.Fatalf("Deliver(%#x) after an error", seq)
	}
	u, ok := r.placed[seq]
	if !ok {
		r.t.Fatalf("FPDU at %#x delivered but not placed (or delivered twice)", seq)
	}
	delete(r.placed, seq)
	if off := int64(seq - r.base); off <= r.lastOff {
		r.t.Fatalf("FPDU at %#x delivered out of order", seq)
	} else {
		r.lastOff = off
	}
	if less(r.o.Seq(), seq+HeaderLen) {
		r.t.Fatalf("FPDU at %#x delivered before the stream reached it (Seq %#x)", seq, r.o.Seq())
	}
	r.delivered = append(r.delivered, delivery{seq, u})
	return nil
}

// segment is one TCP segment for the OOOReceiver: stream offset and data.
type segment struct {
	off  int
	data []byte
}

// segmentsOf cuts stream[from:] into segments of random sizes up to
// maxSeg, adds duplicates and overlapping copies, and shuffles them, fully
// or a little.
func segmentsOf(r *rand.Rand, stream []byte, from, maxSeg int) []segment {
	var segs []segment
	for i := from; i < len(stream); {
		n := 1 + r.IntN(maxSeg)
		if r.IntN(4) == 0 {
			n = 1 + r.IntN(min(maxSeg, 64))
		}
		n = min(n, len(stream)-i)
		segs = append(segs, segment{i, stream[i : i+n]})
		i += n
	}
	// Duplicates and overlaps: copies of ranges across segment borders.
	for k := r.IntN(len(segs)/3 + 2); k > 0; k-- {
		a := from + r.IntN(len(stream)-from)
		b := min(len(stream), a+1+r.IntN(maxSeg*2))
		segs = append(segs, segment{a, stream[a:b]})
	}
	if r.IntN(3) == 0 {
		// Local reordering only.
		for i := range segs {
			j := min(len(segs)-1, i+r.IntN(8))
			segs[i], segs[j] = segs[j], segs[i]
		}
	} else {
		r.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
	}
	return segs
}

// pageBound is the most pages an OOOReceiver with window w may hold.
func pageBound(w int) int { return (w+65536)/pageSize + 2 }

// runOOO sends stream (first octet at base) to a new OOOReceiver in
// shuffled, duplicated, overlapping segments of at most maxSeg octets, and
// "retransmits" what is still missing after each round, until the receiver
// has it all or stops with an error.
func runOOO(t testing.TB, r *rand.Rand, stream []byte, markers, crcOn bool, base uint32, maxSeg, window int) (*recorder, *OOOReceiver, error) {
	rec := newRecorder(t, base)
	o := NewOOOReceiver(markers, crcOn, base, rec)
	o.SetWindow(window)
	rec.o = o
	for round := 0; ; round++ {
		from := int(o.Seq() - base)
		if from == len(stream) {
			return rec, o, nil
		}
		if round > 100000 {
			t.Fatalf("no progress at offset %d", from)
		}
		for _, s := range segmentsOf(r, stream, from, maxSeg) {
			err := o.Segment(base+uint32(s.off), s.data)
			if err != nil {
				rec.failed = true
				// Sticky, and nothing more happens.
				if o.Segment(base+uint32(s.off), s.data) != err || o.Err() != err {
					t.Fatalf("error %v did not stick", err)
				}
				return rec, o, err
			}
			if len(o.pages) > pageBound(window) || o.Buffered() > window {
				t.Fatalf("%d pages, %d octets held, window %d", len(o.pages), o.Buffered(), window)
			}
		}
	}
}

// TestOOOProperty is the main evidence for the OOOReceiver: for random
// streams, segmentations, reorderings, duplicates and overlaps, it places
// and delivers exactly what an in-order Receiver delivers for the same
// stream, each FPDU placed once and delivered once, placed before
// delivered, delivered in order; with markers on, FPDUs really are placed
// before the gap in front of them closes.
func TestOOOProperty(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	iters := 300
	if testing.Short() {
		iters = 40
	}
	early := map[bool]int{}
	fpdus := 0
	for it := range iters {
		markers, crcOn := it%2 == 0, it%4 < 2
		var base uint32
		switch r.IntN(3) {
		case 0:
			base = r.Uint32()
		case 1:
			base = -uint32(r.IntN(200000)) // wraps 2^32 inside the stream
		}
		maxSeg := []int{1, 7, 100, 1460, 9000, 64 << 10}[r.IntN(6)]
		count := 1 + r.IntN(40)
		length := func() int { return randULPDULen(r) }
		switch {
		case maxSeg < 100:
			count = 1 + r.IntN(12)
			length = func() int { return r.IntN(700) }
		case r.IntN(3) == 0:
			length = func() int { return r.IntN(200) }
		}
		stream, want, _ := testStream(t, r, markers, crcOn, base, count, length)
		window := DefaultWindow
		if r.IntN(4) == 0 {
			// A window smaller than the stream: some segments are
			// dropped and sent again in a later round.
			window = len(stream)/4 + 1 + r.IntN(len(stream)/2+1)
		}
		rec, o, err := runOOO(t, r, stream, markers, crcOn, base, maxSeg, window)
		what := fmt.Sprintf("seed %d iter %d markers %v crc %v base %#x maxSeg %d window %d", seed, it, markers, crcOn, base, maxSeg, window)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		sameDeliveries(t, what, rec.delivered, want)
		if len(rec.placed) != 0 {
			t.Fatalf("%s: %d FPDUs placed but never delivered", what, len(rec.placed))
		}
		if o.Buffered() != 0 || rec.early != o.early {
			t.Fatalf("%s: %d octets left, early %d/%d", what, o.Buffered(), rec.early, o.early)
		}
		if !markers && rec.early != 0 {
			t.Fatalf("%s: placed %d FPDUs out of order without markers", what, rec.early)
		}
		early[markers] += rec.early
		fpdus += len(want)
	}
	t.Logf("%d FPDUs; placed before the gap closed: %d with markers", fpdus, early[true])
	if early[true] == 0 {
		t.Fatal("with markers on, no FPDU was ever placed out of order")
	}
}

// TestOOOCorruption damages one FPDU and checks that the OOOReceiver
// reports what the in-order reference reports for the same stream, at the
// same FPDU, and that nothing from that FPDU on is delivered.
func TestOOOCorruption(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	iters := 300
	if testing.Short() {
		iters = 40
	}
	for it := range iters {
		markers := r.IntN(4) != 0
		crcOn := true
		kind := r.IntN(3)
		if kind == 2 && !markers {
			kind = 0
		}
		base := r.Uint32()
		stream, want, spans := testStream(t, r, markers, crcOn, base, 2+r.IntN(20), func() int { return r.IntN(3000) })
		v := r.IntN(len(want))
		start, end := spans[v][0], spans[v][1]
		hdr := int(want[v].seq - base)
		var code ErrorCode
		switch kind {
		case 0, 1:
			// Flip an octet of the ULPDU, pad or CRC (not a marker,
			// not ULPDU_Length: those change the framing).
			i := hdr + HeaderLen + r.IntN(end-hdr-HeaderLen)
			for markers && isMarkerSeq(0, uint32(i)&^3) {
				i = hdr + HeaderLen + r.IntN(end-hdr-HeaderLen)
			}
			stream[i] ^= byte(1 << r.IntN(8))
			code = ErrCRC
		case 2:
			// Point a marker of the FPDU elsewhere, CRC made good.
			ms := markerOffsets(start, end)
			if len(ms) == 0 {
				continue
			}
			m := ms[r.IntN(len(ms))]
			stream[m+2] ^= byte(1 << r.IntN(8))
			fixCRC(stream, start, end)
			code = ErrMarker
		}
		ref, rerr := refParse(stream, markers, crcOn, base)
		if rerr == nil || rerr.Code != code || rerr.Seq != want[v].seq {
			t.Fatalf("iter %d: reference says %v", it, rerr)
		}
		maxSeg := []int{1, 100, 1460, 9000}[r.IntN(4)]
		if maxSeg == 1 && len(stream) > 20000 {
			maxSeg = 13
		}
		rec, _, err := runOOO(t, r, stream, markers, crcOn, base, maxSeg, DefaultWindow)
		what := fmt.Sprintf("seed %d iter %d kind %d markers %v", seed, it, kind, markers)
		var me *Error
		if !errors.As(err, &me) || me.Code != code || me.Seq != want[v].seq {
			t.Fatalf("%s: err %v, want code %d at %#x", what, err, code, want[v].seq)
		}
		var refD []delivery
		for _, f := range ref {
			refD = append(refD, delivery{f.seq, f.u})
		}
		sameDeliveries(t, what, rec.delivered, refD)
		if len(rec.delivered) != v {
			t.Fatalf("%s: %d delivered, want %d", what, len(rec.delivered), v)
		}
		if rec.ever[want[v].seq] {
			t.Fatalf("%s: the damaged FPDU was placed", what)
		}
	}
}

// TestOOOLaterCopyIgnored: once an FPDU's octets are held, a differing
// retransmission of them changes nothing (RFC 5044 appendix A.3 1).
func TestOOOLaterCopyIgnored(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, markers := range []bool{true, false} {
		stream, want, spans := testStream(t, r, markers, true, 100, 6, func() int { return 1000 })
		rec := newRecorder(t, 100)
		o := NewOOOReceiver(markers, true, 100, rec)
		rec.o = o
		// FPDUs 2..5 first, then a garbage copy of them, then the gap.
		a := spans[1][0]
		if err := o.Segment(100+uint32(a), stream[a:]); err != nil {
			t.Fatal(err)
		}
		if markers && rec.early != 5 {
			t.Fatalf("markers: %d FPDUs placed out of order, want 5", rec.early)
		}
		garbage := bytes.Repeat([]byte{0xee}, len(stream)-a+10)
		if err := o.Segment(100+uint32(a), garbage); err != nil {
			t.Fatal(err)
		}
		if err := o.Segment(100, stream[:a]); err != nil {
			t.Fatal(err)
		}
		sameDeliveries(t, fmt.Sprintf("markers %v", markers), rec.delivered, want)
		// Beyond the end of the stream the garbage tail was accepted
		// and taken by the chain as the start of another FPDU.
		if o.Seq() != 100+uint32(len(stream)+10) || o.Buffered() != 0 {
			t.Fatalf("markers %v: Seq %#x, %d held", markers, o.Seq(), o.Buffered())
		}
	}
}

// TestOOOWindow: data before Seq() or at or beyond Seq()+window is
// dropped; data straddling either edge is cut.
func TestOOOWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	base := uint32(0xfffff000)
	stream, want, _ := testStream(t, r, true, true, base, 30, func() int { return 500 })
	rec := newRecorder(t, base)
	o := NewOOOReceiver(true, true, base, rec)
	rec.o = o
	o.SetWindow(4096)
	if o.Window() != 4096 {
		t.Fatalf("Window %d", o.Window())
	}
	steps := []struct {
		off, n int
		held   int // Buffered after
		seq    int // Seq() - base after
	}{
		{4096, 100, 0, 0},   // at the window's end: dropped
		{5000, 100, 0, 0},   // beyond it: dropped
		{4000, 200, 96, 0},  // straddles the end: cut
		{1000, 100, 196, 0}, // inside
		{0, 500, 196, 500},  // in order, straight to the chain
	}
	for i, s := range steps {
		if err := o.Segment(base+uint32(s.off), stream[s.off:s.off+s.n]); err != nil {
			t.Fatal(err)
		}
		if o.Buffered() != s.held || int(o.Seq()-base) != s.seq {
			t.Fatalf("step %d: %d held, Seq at %d; want %d, %d", i, o.Buffered(), o.Seq()-base, s.held, s.seq)
		}
	}
	// A segment wholly before Seq() is a duplicate; one straddling it is
	// cut. Then send everything in order.
	if err := o.Segment(base, bytes.Repeat([]byte{1}, 500)); err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(stream); off += 1000 {
		if err := o.Segment(base+uint32(max(off-300, 0)), stream[max(off-300, 0):min(off+1000, len(stream))]); err != nil {
			t.Fatal(err)
		}
	}
	sameDeliveries(t, "window", rec.delivered, want)
	o.SetWindow(0)
	if o.Window() != 1 {
		t.Fatalf("SetWindow(0) gives %d", o.Window())
	}
}

// failingHandler returns an error from the call numbered failAt.
type failingHandler struct {
	n, failAt int
	err       error
}

func (h *failingHandler) Place(uint32, []byte) error { return h.call() }
func (h *failingHandler) Deliver(uint32) error       { return h.call() }
func (h *failingHandler) call() error {
	h.n++
	if h.n == h.failAt {
		return h.err
	}
	return nil
}

// TestOOOHandlerError: an error from Place or Deliver, in order or out of
// order, stops the receiver and is returned as is.
func TestOOOHandlerError(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	stream, _, spans := testStream(t, r, true, true, 0, 6, func() int { return 1000 })
	for failAt := 1; failAt <= 4; failAt++ {
		h := &failingHandler{failAt: failAt, err: fmt.Errorf("handler %d", failAt)}
		o := NewOOOReceiver(true, true, 0, h)
		a := spans[2][0]
		err := o.Segment(uint32(a), stream[a:]) // Place calls out of order
		if err == nil {
			err = o.Segment(0, stream[:a])
		}
		if err != h.err {
			t.Fatalf("failAt %d: err %v", failAt, err)
		}
		n := h.n
		if o.Segment(0, stream) != h.err || h.n != n {
			t.Fatalf("failAt %d: receiver went on after the handler's error", failAt)
		}
	}
}

// FuzzOOOReceiver sends segments cut (and sometimes garbled) from the
// input stream in an order the input chooses (with frame set, the input is
// first cut into ULPDUs and framed, and lightly damaged, see FuzzReceiver). The effective stream is the
// first accepted copy of each octet; what the OOOReceiver delivers, and
// its error, must be what refParse finds in the contiguous part of it, and
// the recorder checks the placement and delivery rules on every call.
func FuzzOOOReceiver(f *testing.F) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, cfg := range []struct{ markers, crc bool }{{true, true}, {true, false}, {false, true}} {
		stream, _, _ := testStream(f, r, cfg.markers, cfg.crc, 0xfffffe00, 5, func() int { return r.IntN(900) })
		f.Add(stream, cfg.markers, cfg.crc, uint32(0xfffffe00), uint64(1), uint16(0), false)
		f.Add(stream, cfg.markers, cfg.crc, uint32(0xfffffe00), uint64(2), uint16(700), false)
		f.Add(stream[:len(stream)/2], cfg.markers, cfg.crc, uint32(0xfffffe00), uint64(3), uint16(0), true)
	}
	f.Fuzz(func(t *testing.T, stream []byte, markers, crcOn bool, base uint32, seed uint64, window uint16, frame bool) {
		r := rand.New(rand.NewPCG(seed, 0))
		if frame {
			stream, _ = frameULPDUs(t, stream, uint16(seed), markers, crcOn, base)
			damage(r, stream)
		}
		rec := newRecorder(t, base)
		o := NewOOOReceiver(markers, crcOn, base, rec)
		rec.o = o
		if window != 0 {
			o.SetWindow(int(window))
		}
		eff := make([]byte, len(stream)) // first accepted copy of each octet
		known := make([]bool, len(stream))
		var err error
		nseg := 8 + r.IntN(8+len(stream)/32)
		for k := 0; k < nseg && err == nil; k++ {
			a := r.IntN(len(stream) + 1)
			if r.IntN(3) == 0 {
				a = int(o.Seq() - base) // in order
			}
			a = min(a, len(stream))
			b := min(len(stream), a+r.IntN(1+r.IntN(3000)))
			data := bytes.Clone(stream[a:b])
			if r.IntN(8) == 0 && len(data) > 0 {
				data[r.IntN(len(data))] ^= byte(1 + r.IntN(255))
			}
			next := int(o.Seq() - base)
			for i := range data {
				p := a + i
				if p >= next && p-next < o.Window() && !known[p] {
					eff[p], known[p] = data[i], true
				}
			}
			err = o.Segment(base+uint32(a), data)
			if len(o.pages) > pageBound(o.Window()) || o.Buffered() > o.Window() {
				t.Fatalf("%d pages, %d held, window %d", len(o.pages), o.Buffered(), o.Window())
			}
		}
		n := 0
		for n < len(known) && known[n] {
			n++
		}
		want, werr := refParse(eff[:n], markers, crcOn, base)
		if werr == nil && err == nil && int(o.Seq()-base) != n {
			t.Fatalf("Seq at %d, contiguous data to %d", o.Seq()-base, n)
		}
		if werr != nil && err == nil {
			// The error is in the contiguous part: the receiver must
			// have found it.
			t.Fatalf("no error, reference says %v", werr)
		}
		if werr == nil && err != nil {
			t.Fatalf("error %v, reference none", err)
		}
		checkAgainstRef(t, "fuzz", rec.delivered, err, want, werr)
	})
}

// BenchmarkOOOReceiver64K: maximum-size FPDUs with markers and CRC, sent
// as 9000-octet segments with every pair of segments swapped, so half the
// data arrives out of order.
func BenchmarkOOOReceiver64K(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 11))
	stream, _, _ := testStream(b, r, true, true, 0, 32, func() int { return MaxULPDU })
	var segs []segment
	for i := 0; i < len(stream); i += 9000 {
		segs = append(segs, segment{i, stream[i:min(i+9000, len(stream))]})
	}
	for i := 0; i+1 < len(segs); i += 2 {
		segs[i], segs[i+1] = segs[i+1], segs[i]
	}
	h := &failingHandler{}
	b.SetBytes(int64(32 * MaxULPDU))
	b.ReportAllocs()
	for b.Loop() {
		o := NewOOOReceiver(true, true, 0, h)
		for _, s := range segs {
			if err := o.Segment(uint32(s.off), s.data); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// disagreeStream builds a stream (markers and CRC on, base 0) whose first
// FPDU, at seq 4 with a 3000-octet ULPDU of zeros, hides a fake FPDU at
// seq 1000: its marker at 1024 says FPDUPTR 24, and the fake FPDU (40-octet
// ULPDU, that marker inside, good CRC) is valid on its own. The real
// FPDU's CRC is made good again, so only the marker gives it away.
func disagreeStream(t testing.TB) []byte {
	f := NewFramer(true, true, 0)
	stream := mustAppend(t, f, nil, make([]byte, 3000), nil)
	stream = mustAppend(t, f, stream, make([]byte, 100), nil)
	if len(stream) != 3032+112 {
		t.Fatalf("stream is %d octets", len(stream))
	}
	stream[1000], stream[1001] = 0, 40 // fake ULPDU_Length
	for i := 1002; i < 1048; i++ {
		stream[i] = byte(i)
	}
	stream[1024], stream[1025], stream[1026], stream[1027] = 0, 0, 0, 24 // marker: FPDUPTR 24
	stream[1046], stream[1047] = 0, 0                                    // fake pad
	fixCRC(stream, 1000, 1052)
	fixCRC(stream, 0, 3032)
	return stream
}

// TestOOOMarkerDisagrees: an FPDU found through a marker and placed out of
// order, which the ULPDU_Length chain then contradicts, is ErrMarker (RFC
// 5044 8 code 3) at the chain's FPDU that holds the marker; the fake FPDU is
// never delivered.
func TestOOOMarkerDisagrees(t *testing.T) {
	stream := disagreeStream(t)
	rec := newRecorder(t, 0)
	o := NewOOOReceiver(true, true, 0, rec)
	rec.o = o
	if err := o.Segment(512, stream[512:]); err != nil {
		t.Fatal(err)
	}
	// The fake FPDU and the real second FPDU (at 3032) are placed.
	if !rec.ever[1000] || !rec.ever[3032] || rec.early != 2 {
		t.Fatalf("placed out of order: %v, want 1000 and 3032", rec.ever)
	}
	err := o.Segment(0, stream[:512])
	var me *Error
	if !errors.As(err, &me) || me.Code != ErrMarker || me.Seq != 4 {
		t.Fatalf("err %v, want ErrMarker at 4", err)
	}
	if len(rec.delivered) != 0 {
		t.Fatalf("delivered %v", rec.delivered)
	}
	if _, rerr := refParse(stream, true, true, 0); rerr == nil || rerr.Code != ErrMarker || rerr.Seq != 4 {
		t.Fatalf("reference says %v", rerr)
	}
}

// orderRecorder records Place calls in order.
type orderRecorder struct{ seqs []uint32 }

func (r *orderRecorder) Place(seq uint32, _ []byte) error { r.seqs = append(r.seqs, seq); return nil }
func (r *orderRecorder) Deliver(uint32) error             { return nil }

// TestOOODeterministic: the same segment, past a hole, given to fresh
// receivers places the same FPDUs in the same order every time, in stream
// order, also when its markers were rewritten at random and disagree (the
// hardware's tests replay seeds against this model).
func TestOOODeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for it := range 40 {
		f := NewFramer(true, true, 0)
		var stream []byte
		for len(stream) < 12000 {
			stream = mustAppend(t, f, stream, make([]byte, 20+r.IntN(700)), nil)
		}
		if it%2 == 1 {
			for m := 512; m+4 <= len(stream); m += 512 {
				if r.IntN(3) == 0 {
					stream[m+2], stream[m+3] = byte(r.IntN(3)), byte(r.IntN(256))&^3
				}
			}
		}
		var want []uint32
		for run := range 10 {
			rec := &orderRecorder{}
			o := NewOOOReceiver(true, true, 0, rec)
			_ = o.Segment(1000, stream[1000:])
			if run == 0 {
				want = rec.seqs
				continue
			}
			if fmt.Sprint(rec.seqs) != fmt.Sprint(want) {
				t.Fatalf("stream %d: run %d placed %v, run 0 %v", it, run, rec.seqs, want)
			}
		}
		if it%2 == 0 {
			if len(want) == 0 {
				t.Fatalf("stream %d: nothing placed", it)
			}
			for i := 1; i < len(want); i++ {
				if want[i] <= want[i-1] {
					t.Fatalf("stream %d: placed out of stream order: %v", it, want)
				}
			}
		}
	}
}
