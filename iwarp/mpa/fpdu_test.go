package mpa

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// ddpSendHdr returns the 18-octet untagged DDP header of RFC 5044 Figures
// 5 and 6: Send with the Last flag (0x41 0x43), no STag, queue 0, the given
// MSN, MO 0.
func ddpSendHdr(msn uint32) []byte {
	h := make([]byte, 18)
	h[0], h[1] = 0x41, 0x43
	binary.BigEndian.PutUint32(h[10:], msn)
	return h
}

func mustAppend(t testing.TB, f *Framer, dst, hdr, payload []byte) []byte {
	t.Helper()
	out, err := f.AppendFPDU(dst, hdr, payload)
	if err != nil {
		t.Fatalf("AppendFPDU(%d+%d octets): %v", len(hdr), len(payload), err)
	}
	return out
}

// RFC 5044 4.4, Figure 5: the first FPDU of a stream, with the marker in
// front of it, byte for byte including its CRC.
func TestFigure5(t *testing.T) {
	want := []byte{
		0x00, 0x00, 0x00, 0x00, // marker: RESERVED, FPDUPTR 0
		0x00, 0x2a, // ULPDU_Length 42
		0x41, 0x43, // DDP control: Send, Last
		0x00, 0x00, 0x00, 0x00, // no STag
		0x00, 0x00, 0x00, 0x00, // queue 0
		0x00, 0x00, 0x00, 0x01, // MSN 1
		0x00, 0x00, 0x00, 0x00, // MO 0
	}
	want = append(want, make([]byte, 24)...)    // Send data
	want = append(want, 0x52, 0x23, 0x99, 0x83) // CRC32c
	f := NewFramer(true, true, 0)
	if got := f.WireLen(42); got != len(want) {
		t.Errorf("WireLen(42) = %d, want %d", got, len(want))
	}
	got := mustAppend(t, f, nil, ddpSendHdr(1), make([]byte, 24))
	if !bytes.Equal(got, want) {
		t.Fatalf("Figure 5 FPDU\n got % x\nwant % x", got, want)
	}
	if f.Seq() != uint32(len(want)) {
		t.Errorf("Seq = %d, want %d", f.Seq(), len(want))
	}
}

// RFC 5044 4.4, Figure 6: the second FPDU of a stream whose first FPDU took
// 492 octets on the wire (the leading marker, a 482-octet ULPDU and its
// CRC); the marker at 0x200 sits between the DDP header and the data with
// FPDUPTR 0x14.
func TestFigure6(t *testing.T) {
	f := NewFramer(true, true, 0)
	wire := mustAppend(t, f, nil, ddpSendHdr(1), make([]byte, 482-18))
	if len(wire) != 492 {
		t.Fatalf("first FPDU is %d octets, want 492", len(wire))
	}
	wire = mustAppend(t, f, wire, ddpSendHdr(2), make([]byte, 24))
	want := []byte{
		0x00, 0x2a, // 0x1ec ULPDU_Length
		0x41, 0x43, // 0x1ee DDP control
		0x00, 0x00, 0x00, 0x00, // 0x1f0 no STag
		0x00, 0x00, 0x00, 0x00, // 0x1f4 queue 0
		0x00, 0x00, 0x00, 0x02, // 0x1f8 MSN 2
		0x00, 0x00, 0x00, 0x00, // 0x1fc MO 0
		0x00, 0x00, 0x00, 0x14, // 0x200 marker, FPDUPTR 0x14
	}
	want = append(want, make([]byte, 24)...)    // 0x204 Send data
	want = append(want, 0x84, 0x92, 0x58, 0x98) // 0x21c CRC32c
	if len(wire) != 0x220 {
		t.Fatalf("stream is %#x octets, want 0x220", len(wire))
	}
	if got := wire[0x1ec:0x220]; !bytes.Equal(got, want) {
		t.Fatalf("Figure 6 FPDU\n got % x\nwant % x", got, want)
	}
}

// marker is a marker found in a wire image: its sequence number and its
// FPDUPTR.
type marker struct {
	seq uint32
	ptr uint16
}

// markersIn lists the markers in wire, whose first octet has sequence
// number seq, for marker base base.
func markersIn(wire []byte, base, seq uint32) []marker {
	var ms []marker
	for i := markerDist(base, seq); i+MarkerLen <= len(wire); i += MarkerInterval {
		ms = append(ms, marker{seq + uint32(i), binary.BigEndian.Uint16(wire[i+2:])})
	}
	return ms
}

// TestFPDUPTR places an FPDU at chosen positions relative to the markers and
// checks every marker in it (RFC 5044 4.2, 4.3). The offsets in the comments
// are stream offsets from the marker base; FPDU octets (header, ULPDU, pad)
// are 4-aligned, so a marker can never split the ULPDU_Length or CRC field
// and never lands inside the pad (the pad ends on a 4-octet boundary).
func TestFPDUPTR(t *testing.T) {
	type mk struct {
		off int    // marker offset from the first octet this FPDU emits
		ptr uint16 // its FPDUPTR
	}
	cases := []struct {
		name     string
		pre      []int // ULPDU lengths of the FPDUs before
		hdr, pay int   // this FPDU's ULPDU pieces
		want     []mk
	}{
		// Offset 0: the first marker of Full Operation, FPDUPTR 0.
		{"leading marker", nil, 18, 24, []mk{{0, 0}}},
		// pre 494: 4+2+494+4 = 504, so the marker at 512 sits 8 octets
		// into this FPDU: 2 of ULPDU_Length, 6 of the DDP header.
		{"marker in DDP header", []int{494}, 18, 24, []mk{{8, 8}}},
		// Figure 6: the FPDU starts at 492, marker at 512 = 20 octets
		// in, between the 18-octet DDP header and the data.
		{"marker after DDP header", []int{482}, 18, 24, []mk{{20, 20}}},
		// pre 390: 4+2+390+4 = 400; marker at 112, inside the data.
		{"marker in payload", []int{390}, 18, 182, []mk{{112, 112}}},
		// Starts at 504 with 2+5+1 = 8 FPDU octets: the marker at 512
		// comes right after the pad, before the CRC, and belongs to this
		// FPDU (RFC 5044 4.4 rule 1).
		{"marker before CRC", []int{494}, 3, 2, []mk{{8, 8}}},
		// Starts at 504 with 2+2 = 4 FPDU octets + CRC = 8: ends at 512;
		// the marker at 512 belongs to the next FPDU.
		{"FPDU ends at marker", []int{494}, 2, 0, nil},
		// The FPDU after it starts with that marker, FPDUPTR 0.
		{"marker between FPDUs", []int{494, 2}, 18, 24, []mk{{0, 0}}},
		// A full-size FPDU after a leading marker: markers at 512,
		// 1024, ... all point back to the ULPDU_Length at 4.
		{"many markers", nil, 18, MaxULPDU - 18, func() []mk {
			var ms []mk
			for off := 0; off < 4+2+MaxULPDU+2+MarkerLen*128; off += MarkerInterval {
				ptr := uint16(off - 4)
				if off == 0 {
					ptr = 0
				}
				ms = append(ms, mk{off, ptr})
			}
			return ms
		}()},
	}
	for _, c := range cases {
		for _, base := range []uint32{0, 11, 0xfffffe00, 0xffffff7c} {
			f := NewFramer(true, true, base)
			var wire []byte
			for _, n := range c.pre {
				wire = mustAppend(t, f, wire, nil, make([]byte, n))
			}
			at := len(wire)
			seq := f.Seq()
			wl := f.WireLen(c.hdr + c.pay)
			wire = mustAppend(t, f, wire, bytes.Repeat([]byte{0xaa}, c.hdr), bytes.Repeat([]byte{0x55}, c.pay))
			if len(wire)-at != wl {
				t.Errorf("%s base %#x: %d octets, WireLen said %d", c.name, base, len(wire)-at, wl)
			}
			var got []mk
			for _, m := range markersIn(wire[at:], base, seq) {
				got = append(got, mk{int(m.seq - seq), m.ptr})
			}
			if len(got) != len(c.want) {
				t.Errorf("%s base %#x: markers %v, want %v", c.name, base, got, c.want)
				continue
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("%s base %#x: marker %d = %+v, want %+v", c.name, base, i, got[i], c.want[i])
				}
			}
			// Every marker's RESERVED field is zero (RFC 5044 4.2).
			for _, m := range markersIn(wire, base, base) {
				i := int(m.seq - base)
				if wire[i] != 0 || wire[i+1] != 0 {
					t.Errorf("%s base %#x: RESERVED at %d = % x", c.name, base, i, wire[i:i+2])
				}
			}
		}
	}
}

// TestFramerStream frames random ULPDUs and checks the result against an
// independent, octet-at-a-time construction of the same stream: markers at
// every 512 octets pointing to their FPDU, zero pad, CRC over the right
// octets, Seq and WireLen consistent, sequence numbers wrapping 2^32.
func TestFramerStream(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	iters := 200
	if testing.Short() {
		iters = 40
	}
	for it := 0; it < iters; it++ {
		markers, crcOn := r.IntN(2) == 0, r.IntN(2) == 0
		base := r.Uint32()
		if r.IntN(2) == 0 {
			base = -uint32(r.IntN(3000)) // wraps within the stream
		}
		f := NewFramer(markers, crcOn, base)
		var wire, ref []byte
		for k := r.IntN(12) + 1; k > 0; k-- {
			n := randULPDULen(r)
			u := randBytes(r, n)
			cut := r.IntN(n + 1)
			seq := f.Seq()
			if seq != base+uint32(len(wire)) {
				t.Fatalf("Seq = %#x, want %#x", seq, base+uint32(len(wire)))
			}
			wl := f.WireLen(n)
			wire = mustAppend(t, f, wire, u[:cut], u[cut:])
			ref = refFrame(ref, markers, crcOn, base, u)
			if !bytes.Equal(wire, ref) {
				t.Fatalf("seed %d iter %d: stream differs from reference at FPDU seq %#x", seed, it, seq)
			}
			if got := int(f.Seq() - seq); got != wl {
				t.Fatalf("WireLen(%d) = %d, FPDU took %d", n, wl, got)
			}
		}
	}
}

// refFrame appends the FPDU for u to the stream ref, octet by octet, the
// slow and obvious way (RFC 5044 4.1 to 4.4).
func refFrame(ref []byte, markers, crcOn bool, base uint32, u []byte) []byte {
	start := len(ref)
	seqAt := func() uint32 { return base + uint32(len(ref)) }
	hdrAt := -1
	content := binary.BigEndian.AppendUint16(nil, uint16(len(u)))
	content = append(content, u...)
	for len(content)%4 != 0 {
		content = append(content, 0)
	}
	for _, b := range content {
		if markers && (seqAt()-base)%MarkerInterval == 0 {
			ptr := 0
			if hdrAt >= 0 {
				ptr = len(ref) - hdrAt
			}
			ref = append(ref, 0, 0, byte(ptr>>8), byte(ptr))
		}
		if hdrAt < 0 {
			hdrAt = len(ref)
		}
		ref = append(ref, b)
	}
	if markers && (seqAt()-base)%MarkerInterval == 0 {
		ptr := len(ref) - hdrAt
		ref = append(ref, 0, 0, byte(ptr>>8), byte(ptr))
	}
	var sum uint32
	if crcOn {
		sum = crc32c.Checksum(ref[start:])
	}
	return crc32c.AppendWire(ref, sum)
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := i; j < min(i+8, n); j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
	return b
}

// randULPDULen picks a ULPDU length: mostly small, sometimes up to
// MaxULPDU.
func randULPDULen(r *rand.Rand) int {
	switch r.IntN(4) {
	case 0:
		return r.IntN(16)
	case 1:
		return r.IntN(600)
	case 2:
		return r.IntN(4000)
	}
	return r.IntN(MaxULPDU + 1)
}

func TestFramerTooLong(t *testing.T) {
	f := NewFramer(true, true, 7)
	dst := []byte{1, 2, 3}
	out, err := f.AppendFPDU(dst, make([]byte, 100), make([]byte, MaxULPDU-99))
	if !errors.Is(err, ErrULPDUTooLong) {
		t.Fatalf("err = %v, want ErrULPDUTooLong", err)
	}
	if !bytes.Equal(out, dst) || f.Seq() != 7 {
		t.Fatalf("refused FPDU changed state: out % x, Seq %d", out, f.Seq())
	}
	if f.WireLen(MaxULPDU+1) != 0 || f.WireLen(-1) != 0 {
		t.Fatal("WireLen accepts an impossible length")
	}
	if _, err := f.AppendFPDU(nil, nil, make([]byte, MaxULPDU)); err != nil {
		t.Fatalf("MaxULPDU refused: %v", err)
	}
}

func TestFramerNoAlloc(t *testing.T) {
	f := NewFramer(true, true, 0)
	hdr, pay := ddpSendHdr(1), make([]byte, 64<<10-18)
	buf := make([]byte, 0, 70000)
	if n := testing.AllocsPerRun(20, func() {
		buf, _ = f.AppendFPDU(buf[:0], hdr, pay[:MaxULPDU-18])
	}); n != 0 {
		t.Fatalf("AppendFPDU allocates %v times per FPDU", n)
	}
}

// TestMULPDU checks RFC 5044 4.5's formulas, and that an FPDU carrying a
// MULPDU-sized ULPDU never exceeds EMSS wherever it starts relative to the
// markers (the formula reserves room for the worst case).
func TestMULPDU(t *testing.T) {
	cases := []struct {
		emss    int
		markers bool
		want    int
	}{
		// 1460 - (6 + 4*ceil(1460/512)=12 + 1460%4=0) = 1442
		{1460, true, 1442},
		// 1460 - (6 + 0) = 1454
		{1460, false, 1454},
		// 1461 - (6 + 12 + 1) = 1442
		{1461, true, 1442},
		// 1448 (1500 minus IP, TCP and timestamps) - (6 + 12) = 1430
		{1448, true, 1430},
		// 536 - (6 + 4*2) = 522
		{536, true, 522},
		// 8960 - (6 + 4*18 + 0) = 8882
		{8960, true, 8882},
		{8960, false, 8954},
		// 9000 - (6 + 4*18) = 8922
		{9000, true, 8922},
		// Never below 128 (4.5) ...
		{100, true, MinMULPDU},
		{133, false, MinMULPDU},
		// ... nor above 64768 (3).
		{65535, true, MaxULPDU},
		{65535, false, MaxULPDU},
	}
	for _, c := range cases {
		if got := MULPDU(c.emss, c.markers); got != c.want {
			t.Errorf("MULPDU(%d, markers %v) = %d, want %d", c.emss, c.markers, got, c.want)
		}
	}
	for emss := 140; emss <= 65535; emss += 1 + emss/64 {
		for _, markers := range []bool{false, true} {
			m := MULPDU(emss, markers)
			if m == MaxULPDU {
				continue
			}
			for off := uint32(0); off < MarkerInterval; off += 4 {
				f := &Framer{markers: markers, base: 0, seq: off}
				if w := f.WireLen(m); w > emss {
					t.Fatalf("EMSS %d markers %v at offset %d: MULPDU %d takes %d octets", emss, markers, off, m, w)
				}
			}
		}
	}
}

// frameULPDUs cuts data into ULPDUs (each one's length taken from its
// first two octets xor split, modulo what is left, never zero or above
// MaxULPDU) and frames them; it returns the stream and the ULPDUs with the
// sequence numbers of their ULPDU_Length fields.
func frameULPDUs(t testing.TB, data []byte, split uint16, markers, crcOn bool, base uint32) ([]byte, []delivery) {
	fr := NewFramer(markers, crcOn, base)
	var want []delivery
	var wire []byte
	for rest := data; len(rest) > 0; {
		n := int(split) % (len(rest) + 1)
		if len(rest) >= 2 {
			n = (int(binary.BigEndian.Uint16(rest)) ^ int(split)) % (len(rest) + 1)
		}
		n = min(max(n, 1), MaxULPDU)
		u := rest[:n]
		rest = rest[n:]
		seq := fr.Seq()
		if markers && isMarkerSeq(base, seq) {
			seq += MarkerLen // RFC 5044 4.3: FPDUPTR 0 marker in front
		}
		want = append(want, delivery{seq, u})
		var err error
		wire, err = fr.AppendFPDU(wire, u[:len(u)/2], u[len(u)/2:])
		if err != nil {
			t.Fatal(err)
		}
	}
	return wire, want
}

// FuzzRoundTrip frames ULPDUs cut from the input with a Framer, feeds the
// stream to a Receiver in chunks chosen by the input and expects every
// ULPDU back, in order, at the sequence number where it was framed.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("\x00\x2a hello, world"), uint32(0), uint16(42), true, true, uint8(1))
	f.Add(bytes.Repeat([]byte{0xa5}, 3000), uint32(0xfffffe00), uint16(509), true, false, uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, base uint32, split uint16, markers, crcOn bool, chunk uint8) {
		wire, want := frameULPDUs(t, data, split, markers, crcOn, base)
		rx := NewReceiver(markers, crcOn, base)
		step := int(chunk)%64 + 1
		got, err := feedChunks(t, rx, wire, func() int {
			n := step
			step = step*7%97 + 1
			return n
		})
		if err != nil {
			t.Fatalf("Feed: %v", err)
		}
		sameDeliveries(t, "round trip", got, want)
		if end := base + uint32(len(wire)); rx.Seq() != end || rx.Buffered() != 0 {
			t.Fatalf("receiver at %#x with %d buffered, stream ends at %#x", rx.Seq(), rx.Buffered(), end)
		}
	})
}

func benchmarkFramer(b *testing.B, markers, crcOn bool) {
	f := NewFramer(markers, crcOn, 0)
	hdr := ddpSendHdr(1)
	pay := make([]byte, 64<<10-len(hdr))
	buf := make([]byte, 0, 70000)
	b.SetBytes(int64(len(hdr) + len(pay)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = f.AppendFPDU(buf[:0], hdr, pay[:MaxULPDU-len(hdr)])
	}
}

// BenchmarkFramer64K frames maximum-size ULPDUs (64768 octets, the largest
// RFC 5044 allows; "64K" in the name).
func BenchmarkFramer64K(b *testing.B) {
	b.Run("markers+crc", func(b *testing.B) { benchmarkFramer(b, true, true) })
	b.Run("crc", func(b *testing.B) { benchmarkFramer(b, false, true) })
	b.Run("plain", func(b *testing.B) { benchmarkFramer(b, false, false) })
}
