package mpa

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// refFPDU is one FPDU as the reference parser sees it.
type refFPDU struct {
	seq        uint32 // ULPDU_Length field
	start, end int    // stream offsets: first octet (leading marker or ULPDU_Length), one past the CRC
	u          []byte
}

// refParse is a deliberately plain, octet-at-a-time MPA receiver over a
// whole stream whose first octet is at the marker base: the reference the
// Receiver and the OOOReceiver are checked against. It returns the FPDUs it
// accepted, the error that stopped it (nil when it ran out of data), and it
// follows the error order documented on Receiver: CRC, then markers, then
// ULPDU_Length above MaxULPDU, all decided once the whole FPDU is there.
func refParse(stream []byte, markers, crcOn bool, base uint32) ([]refFPDU, *Error) {
	var out []refFPDU
	isMk := func(off int) bool { return markers && off%MarkerInterval == 0 }
	pos := 0
	for {
		start := pos
		var mks []int
		if isMk(pos) {
			mks = append(mks, pos)
			pos += MarkerLen
		}
		hdrAt := pos
		if hdrAt+HeaderLen > len(stream) {
			return out, nil
		}
		ulen := int(binary.BigEndian.Uint16(stream[hdrAt:]))
		content := HeaderLen + ulen + PadLen(ulen)
		var body []byte
		k := hdrAt
		for taken := 0; taken < content; {
			if isMk(k) {
				mks = append(mks, k)
				k += MarkerLen
				continue
			}
			if k >= len(stream) {
				return out, nil
			}
			if taken >= HeaderLen && taken < HeaderLen+ulen {
				body = append(body, stream[k])
			}
			taken++
			k++
		}
		if isMk(k) {
			mks = append(mks, k)
			k += MarkerLen
		}
		if k+CRCLen > len(stream) {
			return out, nil
		}
		seq := base + uint32(hdrAt)
		if crcOn && crc32c.Checksum(stream[start:k]) != crc32c.Wire(stream[k:]) {
			return out, &Error{Code: ErrCRC, Seq: seq}
		}
		for _, m := range mks {
			want := m - hdrAt
			if m < hdrAt {
				want = 0
			}
			if int(binary.BigEndian.Uint16(stream[m+2:])&^3) != want {
				return out, &Error{Code: ErrMarker, Seq: seq}
			}
		}
		if ulen > MaxULPDU {
			return out, &Error{Code: ErrMarker, Seq: seq}
		}
		if body == nil {
			body = []byte{}
		}
		pos = k + CRCLen
		out = append(out, refFPDU{seq, start, pos, body})
	}
}

// delivery is one ULPDU a receiver handed over.
type delivery struct {
	seq uint32
	u   []byte
}

// feedChunks feeds stream to r in chunks whose sizes come from next, and
// collects what r delivers.
func feedChunks(t testing.TB, r *Receiver, stream []byte, next func() int) ([]delivery, error) {
	t.Helper()
	var got []delivery
	deliver := func(seq uint32, u []byte) error {
		got = append(got, delivery{seq, bytes.Clone(u)})
		return nil
	}
	for i := 0; i < len(stream); {
		n := min(next(), len(stream)-i)
		if err := r.Feed(stream[i:i+n], deliver); err != nil {
			return got, err
		}
		if b := r.Buffered(); b > MaxULPDU || len(r.buf) > MaxULPDU {
			t.Fatalf("receiver buffers %d octets (buffer %d)", b, len(r.buf))
		}
		i += n
	}
	return got, nil
}

// feedChunksGather is feedChunks with the Receiver's gathered delivery on
// (SetGather): ULPDUs handed over in pieces are joined and collected with
// the others, after checking the pieces (none empty, n their total, each
// inside the chunk being fed). gathered counts those ULPDUs.
func feedChunksGather(t testing.TB, r *Receiver, stream []byte, next func() int) (got []delivery, gathered int, err error) {
	t.Helper()
	var chunk []byte
	r.SetGather(func(seq uint32, pieces [][]byte, n int) error {
		var u []byte
		for _, p := range pieces {
			if len(p) == 0 {
				t.Fatalf("gathered ULPDU at seq %#x: an empty piece", seq)
			}
			if !inside(p, chunk) {
				t.Fatalf("gathered ULPDU at seq %#x: a piece outside the chunk", seq)
			}
			u = append(u, p...)
		}
		if len(u) != n {
			t.Fatalf("gathered ULPDU at seq %#x: pieces of %d octets, n %d", seq, len(u), n)
		}
		got = append(got, delivery{seq, u})
		gathered++
		return nil
	})
	deliver := func(seq uint32, u []byte) error {
		got = append(got, delivery{seq, bytes.Clone(u)})
		return nil
	}
	for i := 0; i < len(stream); {
		n := min(next(), len(stream)-i)
		chunk = stream[i : i+n]
		if err := r.Feed(chunk, deliver); err != nil {
			return got, gathered, err
		}
		i += n
	}
	return got, gathered, nil
}

// inside reports whether p lies within b's memory.
func inside(p, b []byte) bool {
	if len(p) == 0 || len(b) == 0 {
		return len(p) == 0
	}
	pb, pe := &p[0], &p[len(p)-1]
	bb, be := &b[0], &b[len(b)-1]
	return uintptr(unsafe.Pointer(pb)) >= uintptr(unsafe.Pointer(bb)) &&
		uintptr(unsafe.Pointer(pe)) <= uintptr(unsafe.Pointer(be))
}

// testStream frames random ULPDUs and returns the stream, the ULPDUs with
// their sequence numbers, and each FPDU's [start, end) stream offsets.
func testStream(t testing.TB, r *rand.Rand, markers, crcOn bool, base uint32, count int, length func() int) ([]byte, []delivery, [][2]int) {
	t.Helper()
	f := NewFramer(markers, crcOn, base)
	var wire []byte
	var want []delivery
	var spans [][2]int
	for range count {
		u := randBytes(r, length())
		seq := f.Seq()
		start := len(wire)
		wire = mustAppend(t, f, wire, u[:min(len(u), 18)], u[min(len(u), 18):])
		hdr := seq
		if markers && isMarkerSeq(base, seq) {
			hdr += MarkerLen
		}
		want = append(want, delivery{hdr, u})
		spans = append(spans, [2]int{start, len(wire)})
	}
	return wire, want, spans
}

func sameDeliveries(t testing.TB, what string, got, want []delivery) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d ULPDUs, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i].seq != want[i].seq || !bytes.Equal(got[i].u, want[i].u) {
			t.Fatalf("%s: ULPDU %d at seq %#x (%d octets), want seq %#x (%d octets)",
				what, i, got[i].seq, len(got[i].u), want[i].seq, len(want[i].u))
		}
	}
}

// TestReceiverFigures receives the FPDUs of RFC 5044 Figures 5 and 6.
func TestReceiverFigures(t *testing.T) {
	f := NewFramer(true, true, 0)
	u1 := append(ddpSendHdr(1), make([]byte, 482-18)...)
	u2 := append(ddpSendHdr(2), make([]byte, 24)...)
	wire := mustAppend(t, f, nil, u1, nil)
	wire = mustAppend(t, f, wire, u2, nil)
	for _, chunk := range []int{1, 2, 3, 4, 5, 52, 492, 500, 1000} {
		rx := NewReceiver(true, true, 0)
		got, err := feedChunks(t, rx, wire, func() int { return chunk })
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		sameDeliveries(t, fmt.Sprintf("chunk %d", chunk), got, []delivery{{4, u1}, {0x1ec, u2}})
		if rx.Seq() != 0x220 || rx.Buffered() != 0 {
			t.Fatalf("chunk %d: Seq %#x Buffered %d", chunk, rx.Seq(), rx.Buffered())
		}
	}
}

// TestReceiverChunking frames random ULPDUs and feeds them back in every
// kind of chunking, with and without markers and CRCs, across 2^32.
func TestReceiverChunking(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	chunkings := []struct {
		name string
		next func() int
	}{
		{"1", func() int { return 1 }},
		{"3", func() int { return 3 }},
		{"509", func() int { return 509 }},
		{"4096", func() int { return 4096 }},
		{"64K", func() int { return 64 << 10 }},
		{"random small", func() int { return 1 + r.IntN(40) }},
		{"random", func() int { return 1 + r.IntN(70000) }},
	}
	count := 30
	if testing.Short() {
		count = 8
	}
	for _, cfg := range []struct{ markers, crc bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		for _, base := range []uint32{0, 11, 0xffff0000, 0xfffffff0} {
			stream, want, spans := testStream(t, r, cfg.markers, cfg.crc, base, count, func() int { return randULPDULen(r) })
			for _, ch := range chunkings {
				s, w := stream, want
				if ch.name == "1" || ch.name == "3" {
					// Octet-sized chunks: a prefix is enough.
					n := 0
					for n < len(spans) && spans[n][1] <= 100000 {
						n++
					}
					s, w = stream[:spans[max(n, 1)-1][1]], want[:max(n, 1)]
				}
				rx := NewReceiver(cfg.markers, cfg.crc, base)
				got, err := feedChunks(t, rx, s, ch.next)
				what := fmt.Sprintf("seed %d markers %v crc %v base %#x chunks %s", seed, cfg.markers, cfg.crc, base, ch.name)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				sameDeliveries(t, what, got, w)
				if rx.Seq() != base+uint32(len(s)) || rx.Buffered() != 0 {
					t.Fatalf("%s: ends at %#x with %d buffered", what, rx.Seq(), rx.Buffered())
				}
			}
		}
	}
}

// fixCRC recomputes the CRC of the FPDU at stream[start:end].
func fixCRC(stream []byte, start, end int) {
	crc32c.PutWire(stream[end-CRCLen:], crc32c.Checksum(stream[start:end-CRCLen]))
}

// markerOffsets lists the stream offsets of the markers in [start, end),
// for a stream whose first octet is at the marker base.
func markerOffsets(start, end int) []int {
	var ms []int
	for m := (start + MarkerInterval - 1) / MarkerInterval * MarkerInterval; m < end; m += MarkerInterval {
		ms = append(ms, m)
	}
	return ms
}

// TestReceiverErrors damages one FPDU of a clean stream in the ways RFC
// 5044 8 names and checks the error, its code and sequence number, that
// nothing from the damaged FPDU on is delivered, and that the error sticks.
func TestReceiverErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(5044, 8))
	// Nine FPDUs of 700 octets each: every one holds a marker inside,
	// and the third begins right after a marker.
	type damage func(s []byte, spans [][2]int) // damages FPDU 3 (index 2)
	const victim = 2
	setPtr := func(s []byte, m int, ptr uint16) { binary.BigEndian.PutUint16(s[m+2:], ptr) }
	cases := []struct {
		name         string
		markers, crc bool
		damage       damage
		code         ErrorCode // 0: no error
	}{
		{"clean", true, true, func([]byte, [][2]int) {}, 0},
		{"payload octet flipped", true, true, func(s []byte, sp [][2]int) { s[sp[victim][0]+100] ^= 0x10 }, ErrCRC},
		{"CRC octet flipped", false, true, func(s []byte, sp [][2]int) { s[sp[victim][1]-1] ^= 1 }, ErrCRC},
		{"FPDUPTR wrong, CRC off", true, false, func(s []byte, sp [][2]int) {
			m := markerOffsets(sp[victim][0]+1, sp[victim][1])[0]
			setPtr(s, m, 0x40)
		}, ErrMarker},
		{"FPDUPTR wrong, CRC fixed", true, true, func(s []byte, sp [][2]int) {
			m := markerOffsets(sp[victim][0]+1, sp[victim][1])[0]
			setPtr(s, m, binary.BigEndian.Uint16(s[m+2:])+4)
			fixCRC(s, sp[victim][0], sp[victim][1])
		}, ErrMarker},
		// RFC 5044 8: code 3 only "in the event that the CRC is valid".
		{"FPDUPTR wrong, CRC not fixed", true, true, func(s []byte, sp [][2]int) {
			m := markerOffsets(sp[victim][0]+1, sp[victim][1])[0]
			setPtr(s, m, 0)
		}, ErrCRC},
		// RFC 5044 4.2: receivers treat the low two bits as zero and
		// ignore RESERVED (the CRC still covers them).
		{"FPDUPTR low bits set", true, true, func(s []byte, sp [][2]int) {
			for _, m := range markerOffsets(sp[victim][0], sp[victim][1]) {
				s[m+3] |= 3
				s[m], s[m+1] = 0xde, 0xad
			}
			fixCRC(s, sp[victim][0], sp[victim][1])
		}, 0},
		{"leading marker not zero", true, true, func(s []byte, sp [][2]int) {
			m := sp[victim][0]
			if m%MarkerInterval != 0 {
				panic("test stream changed: FPDU 3 no longer starts at a marker")
			}
			setPtr(s, m, 0x200)
			fixCRC(s, sp[victim][0], sp[victim][1])
		}, ErrMarker},
	}
	for _, c := range cases {
		// The victim must start right after a marker for the
		// "leading marker" case: the first FPDU takes 4+2+700+2+4
		// (marker inside)+4 = 716 octets; a 810-octet ULPDU from there
		// takes 2+810+4 (marker at 1024)+4 = 820 and ends at 1536.
		lengths := []int{700, 810, 700, 700, 700, 700}
		if !c.markers {
			lengths[1] = 700
		}
		i := 0
		stream, want, spans := testStream(t, r, c.markers, c.crc, 0, len(lengths), func() int { i++; return lengths[i-1] })
		if c.markers && spans[victim][0] != 1536 {
			t.Fatalf("test stream: FPDU 3 starts at %d", spans[victim][0])
		}
		c.damage(stream, spans)
		for _, chunk := range []int{1, 7, 512, len(stream)} {
			rx := NewReceiver(c.markers, c.crc, 0)
			got, err := feedChunks(t, rx, stream, func() int { return chunk })
			what := fmt.Sprintf("%s, chunks of %d", c.name, chunk)
			if c.code == 0 {
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				sameDeliveries(t, what, got, want)
				continue
			}
			var me *Error
			if !errors.As(err, &me) || me.Code != c.code || me.Seq != want[victim].seq {
				t.Fatalf("%s: err = %v, want code %d at seq %#x", what, err, c.code, want[victim].seq)
			}
			if !errors.Is(err, &Error{Code: c.code}) {
				t.Fatalf("%s: errors.Is does not match the code", what)
			}
			sameDeliveries(t, what, got, want[:victim])
			// Sticky: no more deliveries, same error.
			err2 := rx.Feed(stream, func(uint32, []byte) error {
				t.Fatalf("%s: delivery after an error", what)
				return nil
			})
			if err2 != err || rx.Err() != err {
				t.Fatalf("%s: later Feed returned %v, want %v", what, err2, err)
			}
			// The reference parser agrees.
			_, rerr := refParse(stream, c.markers, c.crc, 0)
			if rerr == nil || rerr.Code != me.Code || rerr.Seq != me.Seq {
				t.Fatalf("%s: reference parser says %v", what, rerr)
			}
		}
	}
}

// TestReceiverHostileLength: a ULPDU_Length above MaxULPDU is not
// buffered, and the error comes when the (CRC-checked) FPDU would end.
func TestReceiverHostileLength(t *testing.T) {
	for _, crcOn := range []bool{false, true} {
		for _, markers := range []bool{false, true} {
			stream := make([]byte, 70000)
			binary.BigEndian.PutUint16(stream, 0xffff)
			if markers {
				binary.BigEndian.PutUint16(stream[4:], 0xffff)
			}
			rx := NewReceiver(markers, crcOn, 0)
			_, err := feedChunks(t, rx, stream, func() int { return 1000 })
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("markers %v crc %v: err = %v", markers, crcOn, err)
			}
			want := ErrMarker
			if crcOn {
				want = ErrCRC
			}
			if me.Code != want {
				t.Errorf("markers %v crc %v: code %v, want %v", markers, crcOn, me.Code, want)
			}
			if rx.buf != nil {
				t.Errorf("markers %v crc %v: buffer allocated for a hostile length", markers, crcOn)
			}
		}
	}
}

// TestReceiverDeliverError: an error from the callback stops the Receiver.
func TestReceiverDeliverError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	stream, _, _ := testStream(t, r, true, true, 0, 5, func() int { return 100 })
	stop := errors.New("stop")
	rx := NewReceiver(true, true, 0)
	n := 0
	err := rx.Feed(stream, func(uint32, []byte) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Fatalf("err %v after %d deliveries", err, n)
	}
	if rx.Feed(nil, nil) != stop {
		t.Fatal("error did not stick")
	}
}

// TestReceiverReference compares the Receiver with refParse on random
// streams, clean and damaged, in random chunks.
func TestReceiverReference(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	iters := 300
	if testing.Short() {
		iters = 60
	}
	gathered := 0
	for it := range iters {
		markers, crcOn := r.IntN(2) == 0, r.IntN(2) == 0
		base := r.Uint32()
		stream, _, _ := testStream(t, r, markers, crcOn, base, 1+r.IntN(8), func() int {
			if r.IntN(3) == 0 {
				return r.IntN(3000)
			}
			return r.IntN(40)
		})
		// Damage: flip octets, or set marker fields, or cut the end.
		for k := r.IntN(3); k > 0; k-- {
			i := r.IntN(len(stream))
			if r.IntN(2) == 0 && markers {
				i = i / MarkerInterval * MarkerInterval
				if i+MarkerLen <= len(stream) {
					stream[i+r.IntN(4)] ^= byte(1 << r.IntN(8))
				}
				continue
			}
			stream[i] ^= byte(1 << r.IntN(8))
		}
		stream = stream[:len(stream)-r.IntN(min(len(stream), 10))]
		// The reference works on offsets from the marker base.
		want, werr := refParse(stream, markers, crcOn, base)
		rx := NewReceiver(markers, crcOn, base)
		got, err := feedChunks(t, rx, stream, func() int { return 1 + r.IntN(1+r.IntN(2000)) })
		what := fmt.Sprintf("seed %d iter %d markers %v crc %v", seed, it, markers, crcOn)
		checkAgainstRef(t, what, got, err, want, werr)
		// The same with gathered delivery, in larger chunks so that many
		// FPDUs lie whole in one.
		rx = NewReceiver(markers, crcOn, base)
		got, g, err := feedChunksGather(t, rx, stream, func() int { return 1 + r.IntN(1+r.IntN(20000)) })
		checkAgainstRef(t, what+" gathered", got, err, want, werr)
		gathered += g
	}
	if gathered == 0 {
		t.Fatal("no ULPDU went through gathered delivery")
	}
	t.Logf("%d ULPDUs gathered", gathered)
}

func checkAgainstRef(t testing.TB, what string, got []delivery, err error, want []refFPDU, werr *Error) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d ULPDUs, reference %d (err %v, reference %v)", what, len(got), len(want), err, werr)
	}
	for i := range got {
		if got[i].seq != want[i].seq || !bytes.Equal(got[i].u, want[i].u) {
			t.Fatalf("%s: ULPDU %d seq %#x len %d, reference seq %#x len %d", what, i, got[i].seq, len(got[i].u), want[i].seq, len(want[i].u))
		}
	}
	if werr == nil {
		if err != nil {
			t.Fatalf("%s: err %v, reference none", what, err)
		}
		return
	}
	var me *Error
	if !errors.As(err, &me) || me.Code != werr.Code || me.Seq != werr.Seq {
		t.Fatalf("%s: err %v, reference code %d at %#x", what, err, werr.Code, werr.Seq)
	}
}

// TestReceiverNoAlloc: in steady state the Receiver does not allocate.
// The stream is a whole number of marker intervals long, so feeding it
// again and again is a valid stream too.
func TestReceiverNoAlloc(t *testing.T) {
	stream, _ := alignedStream(t, true, true, 4, MaxULPDU)
	rx := NewReceiver(true, true, 0)
	deliver := func(uint32, []byte) error { return nil }
	feed := func() {
		for i := 0; i < len(stream); i += 64 << 10 {
			if err := rx.Feed(stream[i:min(i+64<<10, len(stream))], deliver); err != nil {
				t.Fatal(err)
			}
		}
	}
	feed() // the reassembly buffer is allocated once, here
	if allocs := testing.AllocsPerRun(10, feed); allocs != 0 {
		t.Fatalf("%v allocations per pass over the stream", allocs)
	}
}

// FuzzReceiver feeds a stream to a Receiver in chunks the input chooses
// and compares what it delivers, and its error, with refParse: never a
// panic, never a ULPDU whose CRC is wrong (refParse recomputes it), never
// more than MaxULPDU octets buffered (feedChunks checks). With frame set
// the input is first cut into ULPDUs and framed, and a few octets of the
// stream are then damaged, so that most FPDUs are valid.
func FuzzReceiver(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, cfg := range []struct{ markers, crc bool }{{true, true}, {false, true}, {true, false}} {
		stream, _, _ := testStream(f, r, cfg.markers, cfg.crc, 0, 4, func() int { return r.IntN(700) })
		f.Add(stream, cfg.markers, cfg.crc, uint32(0), uint64(7), false)
		f.Add(stream[:len(stream)/2], cfg.markers, cfg.crc, uint32(0), uint64(8), true)
	}
	f.Add([]byte("\xff\xff\x00\x00"), false, false, uint32(0xfffffffc), uint64(1), false)
	f.Fuzz(func(t *testing.T, stream []byte, markers, crcOn bool, base uint32, seed uint64, frame bool) {
		cr := rand.New(rand.NewPCG(seed, 0))
		if frame {
			stream, _ = frameULPDUs(t, stream, uint16(seed), markers, crcOn, base)
			damage(cr, stream)
		}
		want, werr := refParse(stream, markers, crcOn, base)
		rx := NewReceiver(markers, crcOn, base)
		got, err := feedChunks(t, rx, stream, func() int { return 1 + cr.IntN(1+cr.IntN(3000)) })
		checkAgainstRef(t, "fuzz", got, err, want, werr)
		rx = NewReceiver(markers, crcOn, base)
		got, _, err = feedChunksGather(t, rx, stream, func() int { return 1 + cr.IntN(1+cr.IntN(30000)) })
		checkAgainstRef(t, "fuzz gathered", got, err, want, werr)
	})
}

// damage flips up to two random octets of stream, often none.
func damage(r *rand.Rand, stream []byte) {
	for k := r.IntN(4) - 1; k > 0 && len(stream) > 0; k-- {
		stream[r.IntN(len(stream))] ^= byte(1 + r.IntN(255))
	}
}

// alignedStream frames count ULPDUs of n octets and then small ones until
// the stream is a whole number of marker intervals long, so that it can be
// fed to one Receiver over and over. It returns the stream and the number
// of ULPDU octets in it.
func alignedStream(tb testing.TB, markers, crcOn bool, count, n int) ([]byte, int) {
	r := rand.New(rand.NewPCG(4, 4))
	f := NewFramer(markers, crcOn, 0)
	u := randBytes(r, n)
	var stream []byte
	total := 0
	for range count {
		stream = mustAppend(tb, f, stream, u, nil)
		total += n
	}
	for len(stream)%MarkerInterval != 0 {
		k := 2 // 8 octets on the wire without a marker, 12 with one
		if len(stream)%8 == 4 {
			k = 6 // 12 octets
		}
		stream = mustAppend(tb, f, stream, u[:k], nil)
		total += k
	}
	return stream, total
}

// BenchmarkReceiver64K receives maximum-size FPDUs (64768-octet ULPDUs,
// the largest RFC 5044 allows) fed in 64 KiB chunks, so that most FPDUs
// straddle two chunks; one Receiver in steady state.
func BenchmarkReceiver64K(b *testing.B) {
	for _, cfg := range []struct {
		name         string
		markers, crc bool
	}{{"markers+crc", true, true}, {"crc", false, true}, {"plain", false, false}} {
		b.Run(cfg.name, func(b *testing.B) {
			stream, total := alignedStream(b, cfg.markers, cfg.crc, 64, MaxULPDU)
			rx := NewReceiver(cfg.markers, cfg.crc, 0)
			deliver := func(uint32, []byte) error { return nil }
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for i := 0; i < len(stream); i += 64 << 10 {
					if err := rx.Feed(stream[i:min(i+64<<10, len(stream))], deliver); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
