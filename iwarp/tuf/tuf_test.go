package tuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

const testKey Key = 0x0123456789ab

// Draft 4.1.1: Length (16 bits) then Key (48 bits), network order.
func TestHeaderLayout(t *testing.T) {
	got := Header{Length: 0x05b4, Key: 0xa1b2c3d4e5f6}.Append([]byte{0xee})
	want := []byte{0xee, 0x05, 0xb4, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6}
	if !bytes.Equal(got, want) {
		t.Fatalf("header % x, want % x", got, want)
	}
	h, err := ParseHeader(got[1:])
	if err != nil || h.Length != 0x05b4 || h.Key != 0xa1b2c3d4e5f6 {
		t.Fatalf("ParseHeader = %+v, %v", h, err)
	}
	// Bits above 48 never reach the wire.
	if got := (Header{Key: 0xffff_0000_0000_0001}).Append(nil); !bytes.Equal(got, []byte{0, 0, 0, 0, 0, 0, 0, 1}) {
		t.Errorf("key above 48 bits: % x", got)
	}
	if _, err := ParseHeader(make([]byte, 7)); !errors.Is(err, ErrShortHeader) {
		t.Errorf("7 octets: %v", err)
	}
}

func TestNewKey(t *testing.T) {
	k, err := NewKey(bytes.NewReader([]byte{1, 2, 3, 4, 5, 6, 7}))
	if err != nil || k != 0x010203040506 {
		t.Fatalf("NewKey = %v, %v", k, err)
	}
	if _, err := NewKey(bytes.NewReader([]byte{1, 2})); err == nil {
		t.Error("a short reader gave a key")
	}
	// crypto/rand: 48 bits, and two draws differ (a collision has
	// probability 2^-48).
	a, err1 := NewKey(nil)
	b, err2 := NewKey(nil)
	if err1 != nil || err2 != nil || a == b || a>>48 != 0 || b>>48 != 0 {
		t.Fatalf("crypto/rand keys %v %v (%v %v)", a, b, err1, err2)
	}
}

// Draft 4.1.2: MULPDU = EMSS - 8; the trailer takes 4 more.
func TestMULPDU(t *testing.T) {
	for _, c := range []struct{ emss, mulpdu, max int }{
		{1460, 1452, 1448}, {536, 528, 524}, {9000, 8992, 8988}, {13, 5, 1}, {8, 0, 0}, {70000, 65535, 65531},
	} {
		if got := MULPDU(c.emss); got != c.mulpdu {
			t.Errorf("MULPDU(%d) = %d, want %d", c.emss, got, c.mulpdu)
		}
		if got := MaxULPDU(c.emss); got != c.max {
			t.Errorf("MaxULPDU(%d) = %d, want %d", c.emss, got, c.max)
		}
	}
}

// A by-hand FPDU: header, ULPDU, CRC32c of both least significant octet
// first (as MPA's CRC field, RFC 5044 4.4).
func TestAppendFPDU(t *testing.T) {
	u := []byte("ULPDU")
	got, err := AppendFPDU(nil, testKey, u)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x00, 0x09, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 'U', 'L', 'P', 'D', 'U'}
	want = binary.LittleEndian.AppendUint32(want, crc32c.Checksum(want))
	if !bytes.Equal(got, want) {
		t.Fatalf("FPDU % x\nwant % x", got, want)
	}
	if _, err := AppendFPDU(nil, testKey, make([]byte, MaxULPDUs+1)); !errors.Is(err, ErrTooLong) {
		t.Errorf("over MaxULPDUs: %v", err)
	}
	if f, err := AppendFPDU(nil, testKey, make([]byte, MaxULPDUs)); err != nil || len(f) != MaxLength+HeaderLen {
		t.Errorf("MaxULPDUs: %d octets, %v", len(f), err)
	}
}

func randULPDUs(r *rand.Rand, n, maxLen int) [][]byte {
	us := make([][]byte, n)
	for i := range us {
		l := r.IntN(maxLen + 1)
		if r.IntN(3) == 0 {
			l = r.IntN(min(maxLen, 64) + 1)
		}
		us[i] = make([]byte, l)
		for j := range us[i] {
			us[i][j] = byte(r.Uint32())
		}
	}
	return us
}

func mustSender(t testing.TB, cfg Config) *Sender {
	t.Helper()
	s, err := NewSender(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Draft 4.2 and 4.1.2: every FPDU starts a segment and is one, each within
// EMSS; with packing, ULPDUs share an FPDU up to EMSS, greedily.
func TestSenderSegments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, pack := range []bool{false, true} {
		const emss = 1460
		s := mustSender(t, Config{Key: testKey, EMSS: emss, Pack: pack})
		us := randULPDUs(r, 300, MaxULPDU(emss))
		segs, err := s.Segments(nil, us)
		if err != nil {
			t.Fatal(err)
		}
		var joined, stream []byte
		for i, seg := range segs {
			stream = append(stream, seg...)
			if len(seg) > emss {
				t.Fatalf("pack %v: segment %d has %d octets, EMSS %d", pack, i, len(seg), emss)
			}
			body, ok := Contains(seg, testKey)
			if !ok || !CRCGood(seg) {
				t.Fatalf("pack %v: segment %d is not one good FPDU", pack, i)
			}
			joined = append(joined, body...)
		}
		if want := bytes.Join(us, nil); !bytes.Equal(joined, want) {
			t.Fatalf("pack %v: framed ULPDUs differ from the ULPDUs", pack)
		}
		if uint64(len(stream)) != s.Offset() {
			t.Errorf("Offset %d, %d octets sent", s.Offset(), len(stream))
		}
		if !pack && len(segs) != len(us) {
			t.Errorf("no packing: %d segments for %d ULPDUs", len(segs), len(us))
		}
		if pack {
			// Rebuild the greedy grouping from the ULPDU lengths.
			want, n := 0, -1
			for _, u := range us {
				if n < 0 || n+len(u) > MaxULPDU(emss) {
					want++
					n = 0
				}
				n += len(u)
			}
			if len(segs) != want {
				t.Errorf("packing: %d segments, greedy packing gives %d", len(segs), want)
			}
		}
	}
}

// Appendix A.3 and A.6, 5.2.5: an oversized ULPDU is refused, or (when
// allowed) its FPDU is cut into segments none of which passes the test,
// even where the ULPDU's own octets would make one look like an FPDU.
func TestSenderOversized(t *testing.T) {
	const emss = 100
	s := mustSender(t, Config{Key: testKey, EMSS: emss})
	if _, err := s.Segments(nil, [][]byte{make([]byte, MaxULPDU(emss)+1)}); !errors.Is(err, ErrTooLong) {
		t.Fatalf("oversized ULPDU: %v", err)
	}
	if s.Offset() != 0 {
		t.Errorf("a refused ULPDU moved the sender to %d", s.Offset())
	}
	if _, err := NewSender(Config{Key: testKey, EMSS: MinEMSS - 1}); err == nil {
		t.Error("EMSS below MinEMSS accepted")
	}
	s = mustSender(t, Config{Key: testKey, EMSS: emss, Oversized: true})
	// A ULPDU of 250 octets: the FPDU's second segment would start at
	// FPDU octet 100 = ULPDU octet 92. Plant a header there that makes a
	// 100-octet segment look contained (Length 92, the key).
	u := make([]byte, 250)
	Header{Length: emss - HeaderLen, Key: testKey}.Append(u[92:92])
	segs, err := s.Segments(nil, [][]byte{u, []byte("next")})
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	for i, seg := range segs[:len(segs)-1] {
		if len(seg) > emss {
			t.Errorf("piece %d: %d octets", i, len(seg))
		}
		if _, ok := Contains(seg, testKey); ok {
			t.Errorf("piece %d of the oversized FPDU passes the containment test", i)
		}
		stream = append(stream, seg...)
	}
	if len(segs[1]) != emss-1 {
		t.Errorf("the planted header did not shorten the second piece: %d octets", len(segs[1]))
	}
	if _, ok := Contains(segs[len(segs)-1], testKey); !ok {
		t.Error("the FPDU after the oversized one is not contained")
	}
	stream = append(stream, segs[len(segs)-1]...)
	got := receiveAll(t, NewReceiver(testKey), stream, func() int { return 7 })
	if len(got) != 2 || !bytes.Equal(got[0], u) || string(got[1]) != "next" {
		t.Errorf("received %d ULPDUs", len(got))
	}
}

func TestContains(t *testing.T) {
	good, _ := AppendFPDU(nil, testKey, []byte("0123456789"))
	short := Header{Length: 3, Key: testKey}.Append(nil)
	short = append(short, 1, 2, 3)
	two := append(append([]byte(nil), good...), good...)
	for _, c := range []struct {
		name string
		seg  []byte
		key  Key
		ok   bool
	}{
		{"one whole FPDU", good, testKey, true},
		{"other key", good, testKey ^ 1, false},
		{"key differs in bit 47", good, testKey ^ 1<<47, false},
		{"one octet short", good[:len(good)-1], testKey, false},
		{"one octet long", append(append([]byte(nil), good...), 0), testKey, false},
		{"starts one octet in", good[1:], testKey, false},
		{"Length below the trailer", short, testKey, false},
		{"header only", good[:8], testKey, false},
		{"empty", nil, testKey, false},
		{"two FPDUs", two, testKey, false},
	} {
		u, ok := Contains(c.seg, c.key)
		if ok != c.ok {
			t.Errorf("%s: Contains = %v", c.name, ok)
		}
		if ok && string(u) != "0123456789" {
			t.Errorf("%s: ULPDUs %q", c.name, u)
		}
	}
	if lens, ok := ContainsRun(two, testKey); !ok || len(lens) != 2 || lens[0] != len(good) {
		t.Errorf("ContainsRun(two FPDUs) = %v, %v", lens, ok)
	}
	if _, ok := ContainsRun(two[:len(two)-1], testKey); ok {
		t.Error("ContainsRun took a run whose last FPDU is cut")
	}
	if _, ok := ContainsRun(append(append([]byte(nil), good...), short...), testKey); ok {
		t.Error("ContainsRun took a run with an FPDU too short for its trailer")
	}
}

// receiveAll feeds stream to rx in chunks of next() octets and returns
// the ULPDUs delivered; it fails the test on an error.
func receiveAll(t testing.TB, rx *Receiver, stream []byte, next func() int) [][]byte {
	t.Helper()
	got, err := feed(rx, stream, next)
	if err == nil {
		err = rx.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func feed(rx *Receiver, stream []byte, next func() int) ([][]byte, error) {
	var got [][]byte
	for off := 0; off < len(stream); {
		n := min(len(stream)-off, max(1, next()))
		err := rx.Feed(stream[off:off+n], func(at uint64, u []byte) error {
			got = append(got, bytes.Clone(u))
			return nil
		})
		if err != nil {
			return got, err
		}
		off += n
	}
	return got, nil
}

func frameStream(t testing.TB, cfg Config, us [][]byte) ([][]byte, []byte) {
	segs, err := mustSender(t, cfg).Segments(nil, us)
	if err != nil {
		t.Fatal(err)
	}
	return segs, bytes.Join(segs, nil)
}

func TestReceiverChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	us := randULPDUs(r, 200, 2000)
	_, stream := frameStream(t, Config{Key: testKey, EMSS: 2100}, us)
	for _, maxChunk := range []int{1, 3, 9, 100, 5000, len(stream)} {
		got := receiveAll(t, NewReceiver(testKey), stream, func() int { return 1 + r.IntN(maxChunk) })
		if len(got) != len(us) {
			t.Fatalf("chunks up to %d: %d ULPDUs, want %d", maxChunk, len(got), len(us))
		}
		for i := range us {
			if !bytes.Equal(got[i], us[i]) {
				t.Fatalf("chunks up to %d: ULPDU %d differs", maxChunk, i)
			}
		}
	}
	// The offsets delivered are the FPDUs' stream offsets.
	rx := NewReceiver(testKey)
	var offs []uint64
	rx.Feed(stream, func(at uint64, u []byte) error { offs = append(offs, at); return nil })
	var want uint64
	for i, u := range us {
		if offs[i] != want {
			t.Fatalf("FPDU %d at offset %d, want %d", i, offs[i], want)
		}
		want += uint64(len(u) + Overhead)
	}
	if rx.Offset() != want || !rx.AtBoundary() {
		t.Errorf("Offset %d, want %d", rx.Offset(), want)
	}
}

// DDP draft section 3, requirement 6, met by the trailer: one octet
// changed anywhere in any FPDU of a stream (every position, every bit of
// it in turn) ends the stream with an error, as MPA's CRC error does, and
// no ULPDU that differs from the one sent is ever delivered. The same on
// the seam: a damaged contained segment is either refused (header) or
// taken with a bad verdict that puts the connection in error.
func TestCorruptionDetected(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	us := [][]byte{[]byte("first ULPDU"), make([]byte, 40), []byte("third")}
	for i := range us[1] {
		us[1][i] = byte(r.Uint32())
	}
	segs, stream := frameStream(t, Config{Key: testKey, EMSS: 200}, us)
	codes := map[ErrorCode]int{}
	for pos := range stream {
		bad := bytes.Clone(stream)
		bad[pos] ^= 1 << (pos % 8)
		for _, chunk := range []int{1, 13, len(bad)} {
			rx := NewReceiver(testKey)
			got, err := feed(rx, bad, func() int { return chunk })
			if err == nil {
				err = rx.Close()
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("octet %d flipped, chunks of %d: error %v", pos, chunk, err)
			}
			codes[te.Code]++
			for i, g := range got {
				if !bytes.Equal(g, us[i]) {
					t.Fatalf("octet %d flipped: ULPDU %d delivered damaged", pos, i)
				}
			}
		}
		// The seam, segment by segment.
		seam := Seam{Enabled: true, Key: testKey}
		off := 0
		for _, seg := range segs {
			b := bad[off : off+len(seg)]
			o := seam.Take(uint32(off), b)
			damaged := pos >= off && pos < off+len(seg)
			switch {
			case !damaged && o.Reason == Taken && o.CRCGood:
			case damaged && o.Reason == Taken && !o.CRCGood:
				if next := seam.Take(seam.Next, []byte{1}); next.Reason != InError {
					t.Fatalf("after a bad trailer: %v", next.Reason)
				}
			case damaged && o.Reason == NotContained && pos-off < HeaderLen:
			default:
				t.Fatalf("octet %d flipped, segment at %d (damaged %v): %v, CRC good %v", pos, off, damaged, o.Reason, o.CRCGood)
			}
			if o.Reason != Taken || !o.CRCGood {
				break
			}
			off += len(seg)
		}
	}
	for _, c := range []ErrorCode{ErrKey, ErrCRC} {
		if codes[c] == 0 {
			t.Errorf("no corruption reported as %v: %v", c, codes)
		}
	}
}

// middlebox re-cuts a stream into segments of size octets (the last one
// shorter), as the impairment wire's Middlebox does (driver/wire.go).
func middlebox(stream []byte, size int) [][]byte {
	var segs [][]byte
	for off := 0; off < len(stream); off += size {
		segs = append(segs, stream[off:min(off+size, len(stream))])
	}
	return segs
}

// randomCut re-cuts a stream at random points, pieces down to one octet.
func randomCut(r *rand.Rand, stream []byte, maxLen int) [][]byte {
	var segs [][]byte
	for off := 0; off < len(stream); {
		n := min(len(stream)-off, 1+r.IntN(maxLen))
		segs = append(segs, stream[off:off+n])
		off += n
	}
	return segs
}

func runSegments(t *testing.T, sr *SegmentReceiver, segs [][]byte) (got [][]byte, viaTest int) {
	t.Helper()
	var off uint64
	for i, seg := range segs {
		took, err := sr.Segment(off, seg, func(at uint64, u []byte) error {
			got = append(got, bytes.Clone(u))
			return nil
		})
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
		if took {
			viaTest++
		}
		off += uint64(len(seg))
	}
	if err := sr.Close(); err != nil {
		t.Fatal(err)
	}
	return got, viaTest
}

func checkULPDUs(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d ULPDUs delivered, %d sent", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("ULPDU %d differs", i)
		}
	}
}

// 5.2.1: a clean path keeps containment; a re-segmenting middlebox (536
// octets, the minimal MSS, on a 1460-octet EMSS) is detected after the
// documented 4 windows of 64 segments, and the stream is delivered whole
// either way.
func TestSegmentReceiverPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	us := randULPDUs(r, 400, MaxULPDU(1460))
	segs, stream := frameStream(t, Config{Key: testKey, EMSS: 1460}, us)

	sr := NewSegmentReceiver(testKey)
	got, via := runSegments(t, sr, segs)
	checkULPDUs(t, got, us)
	if via != len(segs) || sr.Detector().Fallback() {
		t.Errorf("clean path: %d of %d segments through the test, fallback %v", via, len(segs), sr.Detector().Fallback())
	}

	sr = NewSegmentReceiver(testKey)
	mb := middlebox(stream, 536)
	got, via = runSegments(t, sr, mb)
	checkULPDUs(t, got, us)
	n, hits := sr.Detector().Counts()
	if !sr.Detector().Fallback() {
		t.Errorf("middlebox: no fallback after %d segments, %d contained", n, hits)
	}
	if _, fp := sr.Stats(); fp != 0 {
		t.Errorf("middlebox: %d false positives", fp)
	}
	t.Logf("middlebox 536: %d segments, %d contained, %d through the test", n, hits, via)

	// Random cuts: whatever passes the test is a true FPDU boundary
	// (the SegmentReceiver never takes a false positive, and counts one
	// if the test passes inside an FPDU).
	sr = NewSegmentReceiver(testKey)
	got, _ = runSegments(t, sr, randomCut(r, stream, 3000))
	checkULPDUs(t, got, us)
	if _, fp := sr.Stats(); fp != 0 {
		t.Errorf("random cuts: %d false positives", fp)
	}
}

// Data that carries FPDU-shaped octets with another key, at the cut
// points of a middlebox, never passes; with the connection's own key (the
// case the key's secrecy makes unlikely, 5.2.1) the SegmentReceiver still
// does not take it, because the stream is inside an FPDU there.
func TestPlantedHeaders(t *testing.T) {
	const cut = 256
	for _, planted := range []Key{testKey ^ 0x800000000000, testKey} {
		// ULPDUs of 1000 octets; the 16-octet overhead shifts the cut
		// points: plant a header for a 256-octet segment at every
		// ULPDU offset that a 256-octet cut can land on.
		us := make([][]byte, 20)
		for i := range us {
			us[i] = make([]byte, 1000)
		}
		// Plant, then frame; the cut points are at multiples of 256 in
		// the stream: ULPDU i starts at 1012*i + 8.
		for i := range us {
			start := 1012*i + HeaderLen
			for p := (start + cut - 1) / cut * cut; p+HeaderLen <= start+1000; p += cut {
				Header{Length: cut - HeaderLen, Key: planted}.Append(us[i][p-start : p-start])
			}
		}
		_, stream := frameStream(t, Config{Key: testKey, EMSS: 1460}, us)
		sr := NewSegmentReceiver(testKey)
		got, via := runSegments(t, sr, middlebox(stream, cut))
		checkULPDUs(t, got, us)
		_, fp := sr.Stats()
		if via != 0 {
			t.Errorf("key %v: %d segments taken through the test", planted, via)
		}
		if planted != testKey && fp != 0 {
			t.Errorf("key %v: %d false positives", planted, fp)
		}
		if planted == testKey && fp == 0 {
			t.Errorf("own key planted: the test never passed inside an FPDU (the case is not exercised)")
		}
	}
}

func TestDetectorThresholds(t *testing.T) {
	feedWindow := func(d *Detector, contained int) {
		for i := 0; i < d.Window; i++ {
			d.Observe(i < contained)
		}
	}
	d := NewDetector()
	for i := 0; i < DefaultWindows-1; i++ {
		feedWindow(d, 15) // 15 of 64: below a quarter
	}
	if d.Fallback() {
		t.Fatal("fallback after 3 low windows")
	}
	feedWindow(d, 16) // exactly a quarter: not low, resets the run
	for i := 0; i < DefaultWindows-1; i++ {
		feedWindow(d, 0)
	}
	if d.Fallback() {
		t.Fatal("fallback after a good window and 3 low ones")
	}
	for i := 0; i < d.Window-1; i++ {
		d.Observe(false)
	}
	if d.Fallback() {
		t.Fatal("fallback before the fourth low window ended")
	}
	if !d.Observe(false) {
		t.Fatal("no fallback after 4 low windows in a row")
	}
	feedWindow(d, d.Window)
	if !d.Fallback() {
		t.Fatal("fallback not latched")
	}
	n, hits := d.Counts()
	if n != uint64(9*d.Window) || hits != uint64(15*3+16+d.Window) {
		t.Errorf("Counts = %d, %d", n, hits)
	}
	d.Reset()
	if d.Fallback() || d.Window != DefaultWindow {
		t.Error("Reset did not start afresh")
	}
}

func TestSeam(t *testing.T) {
	f1, _ := AppendFPDU(nil, testKey, []byte("one"))
	f2, _ := AppendFPDU(nil, testKey, []byte("two!"))
	base := uint32(0xfffffff0) // the sequence numbers wrap inside the stream
	s := Seam{Enabled: true, Key: testKey, Next: base}
	steps := []struct {
		name   string
		seq    uint32
		seg    []byte
		reason Reason
	}{
		{"empty", base, nil, Empty},
		{"past a hole", base + 1, f1, OutOfOrder},
		{"starts inside", base - 1, append([]byte{0}, f1...), NotContained},
		{"first FPDU", base, f1, Taken},
		{"duplicate", base, f1, Duplicate},
		{"overlap into the next", base + uint32(len(f1)) - 2, append(f1[len(f1)-2:], f2...), NotContained},
		{"half an FPDU", base + uint32(len(f1)), f2[:9], NotContained},
		{"second FPDU (across the wrap)", base + uint32(len(f1)), f2, Taken},
	}
	for _, st := range steps {
		o := s.Take(st.seq, st.seg)
		if o.Reason != st.reason {
			t.Errorf("%s: %v, want %v", st.name, o.Reason, st.reason)
		}
	}
	if s.Next != base+uint32(len(f1)+len(f2)) {
		t.Errorf("Next %#x", s.Next)
	}
	// Past a hole: a whole FPDU with a good trailer may be placed early;
	// a damaged one, or one cut, may not; neither moves Next.
	ahead := s.Next + 100
	if o := s.Take(ahead, f2); o.Reason != OutOfOrder || !o.Early || string(o.ULPDUs) != "two!" {
		t.Errorf("whole FPDU past a hole: %+v", o)
	}
	dam := bytes.Clone(f2)
	dam[len(dam)-1] ^= 1
	for _, seg := range [][]byte{dam, f2[:len(f2)-1]} {
		if o := s.Take(ahead, seg); o.Reason != OutOfOrder || o.Early {
			t.Errorf("damaged or cut FPDU past a hole: %+v", o)
		}
	}
	if s.Next != base+uint32(len(f1)+len(f2)) {
		t.Errorf("Next moved on out-of-order segments: %#x", s.Next)
	}
	bad := bytes.Clone(f1)
	bad[9] ^= 0x40
	if o := s.Take(s.Next, bad); o.Reason != Taken || o.CRCGood || !s.Failed {
		t.Errorf("bad trailer: %+v, failed %v", o, s.Failed)
	}
	if o := s.Take(s.Next, f1); o.Reason != InError {
		t.Errorf("after a bad trailer: %v", o.Reason)
	}
	s.Enabled = false
	if o := s.Take(s.Next, f1); o.Reason != NotEnabled {
		t.Errorf("not enabled: %v", o.Reason)
	}
}
