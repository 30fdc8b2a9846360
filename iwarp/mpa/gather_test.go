package mpa

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"unsafe"
)

// within reports whether p lies inside the memory of b.
func within(p, b []byte) bool {
	if len(p) == 0 || len(b) == 0 {
		return false
	}
	ps := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	bs := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return ps >= bs && ps+uintptr(len(p)) <= bs+uintptr(len(b))
}

// checkGather compares one FPDU added to g (whose pieces from index
// firstPiece on belong to it) with want, the same FPDU from AppendFPDU, and
// checks that the payload was referenced rather than copied.
func checkGather(t *testing.T, g *Gather, firstPiece int, payload, want []byte, markers, copied bool) {
	t.Helper()
	var flat []byte
	for _, p := range g.Buffers()[firstPiece:] {
		flat = append(flat, p...)
	}
	// The first piece may start with octets of the FPDU before (merged
	// scratch); compare the tail.
	if len(flat) < len(want) || !bytes.Equal(flat[len(flat)-len(want):], want) {
		t.Fatalf("gathered FPDU differs from AppendFPDU's (%d octets gathered, want %d)", len(flat), len(want))
	}
	if copied {
		for _, p := range g.Buffers()[firstPiece:] {
			if within(p, payload) {
				t.Fatal("CopyFPDU left a piece pointing into the payload")
			}
		}
		return
	}
	ref := 0
	for _, p := range g.Buffers()[firstPiece:] {
		if within(p, payload) {
			if len(p) < GatherMin {
				t.Fatalf("a %d-octet payload span is its own piece (GatherMin %d)", len(p), GatherMin)
			}
			ref += len(p)
		}
	}
	// Only the first and last span of the payload may be short and so
	// copied; everything else is referenced.
	if copiedOctets := len(payload) - ref; copiedOctets > 2*(GatherMin-1) || (!markers && copiedOctets != 0 && len(payload) >= GatherMin) {
		t.Fatalf("%d of %d payload octets copied", copiedOctets, len(payload))
	}
}

// TestGatherMatchesAppend frames random ULPDU streams twice, with
// AppendFPDU and with GatherFPDU/CopyFPDU into Gathers written out now and
// then, and expects the same octets, the same sequence numbers and the
// payload left in place, for markers and CRC on and off and marker bases
// that make the stream wrap 2^32.
func TestGatherMatchesAppend(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	iters := 300
	if testing.Short() {
		iters = 60
	}
	for it := 0; it < iters; it++ {
		markers, crcOn := r.IntN(2) == 0, r.IntN(2) == 0
		base := r.Uint32()
		if r.IntN(2) == 0 {
			base = -uint32(r.IntN(3000))
		}
		// Start anywhere relative to the markers, as after earlier FPDUs.
		skip := r.IntN(2000)
		fa, fg := NewFramer(markers, crcOn, base), NewFramer(markers, crcOn, base)
		lead := make([]byte, skip)
		pre := mustAppend(t, fa, nil, lead, nil)
		var g Gather
		if err := fg.GatherFPDU(&g, lead, nil); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if r.IntN(2) == 0 {
			g.WriteTo(&out)
		}
		want := pre
		for k := r.IntN(10) + 1; k > 0; k-- {
			n := randULPDULen(r)
			u := randBytes(r, n)
			cut := r.IntN(n + 1)
			if r.IntN(3) == 0 {
				cut = min(n, r.IntN(30)) // a DDP header's worth
			}
			before := len(want)
			want = mustAppend(t, fa, want, u[:cut], u[cut:])
			first := g.Pieces()
			copied := r.IntN(5) == 0
			var err error
			if copied {
				err = fg.CopyFPDU(&g, u[:cut], u[cut:])
			} else {
				err = fg.GatherFPDU(&g, u[:cut], u[cut:])
			}
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if fa.Seq() != fg.Seq() {
				t.Fatalf("seed %d: Seq %#x after gathering, %#x after appending", seed, fg.Seq(), fa.Seq())
			}
			checkGather(t, &g, max(first-1, 0), u[cut:], want[before:], markers, copied)
			if r.IntN(3) == 0 {
				g.WriteTo(&out)
			}
		}
		if g.Len() != len(want)-out.Len() {
			t.Fatalf("seed %d: Len %d, want %d", seed, g.Len(), len(want)-out.Len())
		}
		out.Write(g.AppendTo(nil))
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("seed %d iter %d: gathered stream differs from AppendFPDU's", seed, it)
		}
	}
}

// TestGatherFigures rebuilds RFC 5044 Figures 5 and 6 through a Gather.
func TestGatherFigures(t *testing.T) {
	f := NewFramer(true, true, 0)
	var g Gather
	if err := f.GatherFPDU(&g, ddpSendHdr(1), make([]byte, 482-18)); err != nil {
		t.Fatal(err)
	}
	if err := f.GatherFPDU(&g, ddpSendHdr(2), make([]byte, 24)); err != nil {
		t.Fatal(err)
	}
	a := NewFramer(true, true, 0)
	want := mustAppend(t, a, nil, ddpSendHdr(1), make([]byte, 482-18))
	want = mustAppend(t, a, want, ddpSendHdr(2), make([]byte, 24))
	if got := g.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("Figure 6 stream\n got % x\nwant % x", got, want)
	}
}

func TestGatherTooLong(t *testing.T) {
	f := NewFramer(true, true, 7)
	var g Gather
	if err := f.GatherFPDU(&g, []byte{1, 2}, []byte{3}); err != nil {
		t.Fatal(err)
	}
	before, seq := g.AppendTo(nil), f.Seq()
	for _, add := range []func(*Gather, []byte, []byte) error{f.GatherFPDU, f.CopyFPDU} {
		err := add(&g, make([]byte, 100), make([]byte, MaxULPDU-99))
		if !errors.Is(err, ErrULPDUTooLong) {
			t.Fatalf("err = %v, want ErrULPDUTooLong", err)
		}
		if !bytes.Equal(g.AppendTo(nil), before) || g.Len() != len(before) || f.Seq() != seq {
			t.Fatal("a refused FPDU changed the Gather or the Framer")
		}
	}
}

// TestGatherWriteTo writes gathered FPDUs, far more pieces than one writev
// takes, over loopback TCP and to a writer that does not gather.
func TestGatherWriteTo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(c)
		c.Close()
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	payload := randBytes(r, 300<<10)
	fa, fg := NewFramer(true, true, 0xffff0000), NewFramer(true, true, 0xffff0000)
	var want []byte
	var g Gather
	var flat bytes.Buffer
	var sent int64
	for round := 0; round < 3; round++ {
		for off := 0; off < len(payload); off += 30000 {
			p := payload[off:min(off+30000, len(payload))]
			want = mustAppend(t, fa, want, ddpSendHdr(uint32(off)), p)
			if err := fg.GatherFPDU(&g, ddpSendHdr(uint32(off)), p); err != nil {
				t.Fatal(err)
			}
		}
		if g.Pieces() <= 1024 {
			t.Fatalf("only %d pieces; the test wants more than one writev's worth", g.Pieces())
		}
		flat.Write(g.AppendTo(nil))
		n, err := g.WriteTo(c)
		if err != nil {
			t.Fatal(err)
		}
		sent += n
		if g.Len() != 0 || g.Pieces() != 0 {
			t.Fatal("WriteTo left octets in the Gather")
		}
	}
	c.Close()
	if b := <-got; !bytes.Equal(b, want) || sent != int64(len(want)) {
		t.Fatalf("TCP peer got %d octets (WriteTo said %d), want %d, equal %v", len(b), sent, len(want), bytes.Equal(b, want))
	}
	if !bytes.Equal(flat.Bytes(), want) {
		t.Fatal("flattened Gathers differ from AppendFPDU's stream")
	}
	// A writer that does not gather gets one Write per piece.
	fg = NewFramer(false, true, 3)
	fa = NewFramer(false, true, 3)
	if err := fg.GatherFPDU(&g, ddpSendHdr(1), payload[:5000]); err != nil {
		t.Fatal(err)
	}
	var bb bytes.Buffer
	if _, err := g.WriteTo(&bb); err != nil {
		t.Fatal(err)
	}
	if want := mustAppend(t, fa, nil, ddpSendHdr(1), payload[:5000]); !bytes.Equal(bb.Bytes(), want) {
		t.Fatal("WriteTo a bytes.Buffer differs from AppendFPDU")
	}
}

// TestCopyFPDUOnePiece: a Gather filled by CopyFPDU alone is one piece, so
// a writer that does not gather still gets one Write.
func TestCopyFPDUOnePiece(t *testing.T) {
	f := NewFramer(true, true, 0)
	var g Gather
	for i := 0; i < 50; i++ {
		if err := f.CopyFPDU(&g, ddpSendHdr(uint32(i)), make([]byte, 1000*i)); err != nil {
			t.Fatal(err)
		}
		if g.Pieces() != 1 {
			t.Fatalf("%d pieces after %d CopyFPDUs", g.Pieces(), i+1)
		}
	}
}

func TestGatherNoAlloc(t *testing.T) {
	for _, markers := range []bool{false, true} {
		f := NewFramer(markers, true, 0)
		hdr, pay := ddpSendHdr(1), make([]byte, MaxULPDU-18)
		var g Gather
		for range 8 { // grow the arrays to a batch's size
			f.GatherFPDU(&g, hdr, pay)
		}
		g.Reset()
		if n := testing.AllocsPerRun(20, func() {
			for range 8 {
				f.GatherFPDU(&g, hdr, pay)
			}
			g.Reset()
		}); n != 0 {
			t.Fatalf("markers %v: GatherFPDU allocates %v times per batch", markers, n)
		}
	}
}

// FuzzGather frames ULPDUs cut from the input with AppendFPDU and with
// GatherFPDU or CopyFPDU into one Gather and expects the same octets.
func FuzzGather(f *testing.F) {
	f.Add([]byte("\x00\x2a hello, world"), uint32(0), uint16(42), uint16(3), true, true)
	f.Add(bytes.Repeat([]byte{0xa5}, 3000), uint32(0xfffffe00), uint16(509), uint16(18), true, false)
	f.Add(bytes.Repeat([]byte{0x5a}, 9000), uint32(0xfffffffe), uint16(4096), uint16(14), false, true)
	f.Fuzz(func(t *testing.T, data []byte, base uint32, split, hdrLen uint16, markers, crcOn bool) {
		fa, fg := NewFramer(markers, crcOn, base), NewFramer(markers, crcOn, base)
		var want []byte
		var g Gather
		for rest := data; len(rest) > 0; {
			n := min(max(int(split)%(len(rest)+1), 1), MaxULPDU)
			u := rest[:n]
			rest = rest[n:]
			h := min(int(hdrLen)%64, n)
			want = mustAppend(t, fa, want, u[:h], u[h:])
			add := fg.GatherFPDU
			if split&0x100 != 0 {
				add = fg.CopyFPDU
			}
			if err := add(&g, u[:h], u[h:]); err != nil {
				t.Fatal(err)
			}
			split = split*31 + 7
		}
		if got := g.AppendTo(nil); !bytes.Equal(got, want) || g.Len() != len(want) || fa.Seq() != fg.Seq() {
			t.Fatalf("gathered %d octets, appended %d; equal %v", len(got), len(want), bytes.Equal(got, want))
		}
	})
}

func benchmarkGather(b *testing.B, markers, crcOn bool) {
	f := NewFramer(markers, crcOn, 0)
	hdr := ddpSendHdr(1)
	pay := make([]byte, 64<<10-len(hdr))
	var g Gather
	b.SetBytes(int64(MaxULPDU))
	b.ReportAllocs()
	for b.Loop() {
		f.GatherFPDU(&g, hdr, pay[:MaxULPDU-len(hdr)])
		g.Reset()
	}
}

// BenchmarkGather64K is BenchmarkFramer64K for GatherFPDU: the user-space
// cost of framing without copying the payload (the kernel's copy of the
// pieces is not included).
func BenchmarkGather64K(b *testing.B) {
	b.Run("markers+crc", func(b *testing.B) { benchmarkGather(b, true, true) })
	b.Run("crc", func(b *testing.B) { benchmarkGather(b, false, true) })
	b.Run("plain", func(b *testing.B) { benchmarkGather(b, false, false) })
}

// BenchmarkTCPWrite frames 64 KiB Writes-worth of ULPDUs (two 32 KiB FPDUs
// each, as with loopback's EMSS) and writes them to loopback TCP in 512 KiB
// batches, copying (AppendFPDU + Write) or gathering (GatherFPDU + writev),
// with a reader draining the other end: user and kernel cost together.
func BenchmarkTCPWrite(b *testing.B) {
	for _, mode := range []string{"copy", "gather"} {
		for _, markers := range []bool{true, false} {
			name := mode + "/markers=" + map[bool]string{true: "on", false: "off"}[markers]
			b.Run(name, func(b *testing.B) { benchmarkTCPWrite(b, mode == "gather", markers) })
		}
	}
}

func benchmarkTCPWrite(b *testing.B, gather, markers bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Skip(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 256<<10)
		for {
			if _, err := c.Read(buf); err != nil {
				c.Close()
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	const ulpdu = 32506 // MULPDU at loopback's EMSS of 32768, markers on
	pay := randBytes(rand.New(rand.NewPCG(1, 1)), 64<<10)
	hdr := make([]byte, 14)
	f := NewFramer(markers, true, 0)
	var g Gather
	buf := make([]byte, 0, 512<<10)
	b.SetBytes(512 << 10)
	for b.Loop() {
		for sent := 0; sent < 512<<10; sent += ulpdu {
			p := pay[sent%(32<<10) : sent%(32<<10)+ulpdu-len(hdr)]
			if gather {
				f.GatherFPDU(&g, hdr, p)
			} else {
				buf, _ = f.AppendFPDU(buf, hdr, p)
			}
		}
		if gather {
			_, err = g.WriteTo(c)
		} else {
			_, err = c.Write(buf)
			buf = buf[:0]
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	<-done
}
