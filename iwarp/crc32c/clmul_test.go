package crc32c

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// The folding path (updateCLMUL) against hash/crc32 (crc32Ref). These
// tests skip where the CPU lacks AVX2+VPCLMULQDQ or under the purego tag;
// the dispatch tests run both ways wherever the folding path exists.

func crc32Ref(crc uint32, p []byte) uint32 { return crc32.Update(crc, Table, p) }

func needCLMUL(t testing.TB) {
	t.Helper()
	if !hasCLMUL {
		t.Skip("no AVX2+VPCLMULQDQ folding path on this CPU or build")
	}
}

// bothPaths runs f with Update and Checksum forced to hash/crc32, then
// (where the CPU has it) with the folding path enabled.
func bothPaths(t *testing.T, f func(t *testing.T)) {
	saved := useCLMUL
	defer func() { useCLMUL = saved }()
	t.Run("fallback", func(t *testing.T) { useCLMUL = false; f(t) })
	if hasCLMUL {
		t.Run("clmul", func(t *testing.T) { useCLMUL = true; f(t) })
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestCLMULAllLengths: every length 0..4096 at every offset 0..63 into a
// buffer, each with a random initial CRC.
func TestCLMULAllLengths(t *testing.T) {
	needCLMUL(t)
	r := rand.New(rand.NewPCG(5, 6))
	buf := randBytes(r, 4096+64)
	for off := 0; off < 64; off++ {
		for n := 0; n <= 4096; n++ {
			p := buf[off : off+n]
			crc := r.Uint32()
			if got, want := updateCLMUL(crc, p), crc32Ref(crc, p); got != want {
				t.Fatalf("off %d len %d crc %#x: %#08x, want %#08x", off, n, crc, got, want)
			}
		}
	}
}

// TestCLMULRandom: random lengths up to 1 MiB at random offsets, and the
// lengths around the assembly's chunking (256*hybridMax octets a call).
func TestCLMULRandom(t *testing.T) {
	needCLMUL(t)
	r := rand.New(rand.NewPCG(7, 8))
	buf := randBytes(r, 1<<20+64)
	var lens []int
	for i := 0; i < 300; i++ {
		lens = append(lens, r.IntN(1<<20+1))
	}
	for _, k := range []int{1, 2, 3} {
		for _, d := range []int{-256, -255, -129, -128, -127, -33, -32, -31, -1, 0, 1, 31, 32, 33, 127, 128, 129, 255, 256} {
			lens = append(lens, k*256*hybridMax+d)
		}
	}
	lens = append(lens, 1<<20)
	for _, n := range lens {
		off := r.IntN(64)
		p := buf[off : off+n]
		crc := r.Uint32()
		if got, want := updateCLMUL(crc, p), crc32Ref(crc, p); got != want {
			t.Fatalf("off %d len %d crc %#x: %#08x, want %#08x", off, n, crc, got, want)
		}
	}
}

// TestDispatch: Update and Checksum on both paths, lengths across the
// threshold, and Update resumed at every cut of a long buffer.
func TestDispatch(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		buf := randBytes(r, 70000)
		for n := 0; n <= 1000; n++ {
			crc := r.Uint32()
			if got, want := Update(crc, buf[:n]), crc32Ref(crc, buf[:n]); got != want {
				t.Fatalf("Update len %d crc %#x: %#08x, want %#08x", n, crc, got, want)
			}
			if got, want := Checksum(buf[:n]), crc32.Checksum(buf[:n], Table); got != want {
				t.Fatalf("Checksum len %d: %#08x, want %#08x", n, got, want)
			}
		}
		whole := crc32.Checksum(buf, Table)
		for i := 0; i < 200; i++ {
			a, b := r.IntN(len(buf)+1), r.IntN(len(buf)+1)
			a, b = min(a, b), max(a, b)
			if got := Update(Update(Checksum(buf[:a]), buf[a:b]), buf[b:]); got != whole {
				t.Fatalf("cuts %d, %d: %#08x, want %#08x", a, b, got, whole)
			}
		}
	})
}

// TestRFC3720VectorsBothPaths runs the RFC 3720 B.4 vectors on both paths,
// and the same vectors repeated to long buffers, whose CRCs follow from
// the RFC's values through Combine (pure Go, no hash/crc32).
func TestRFC3720VectorsBothPaths(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		TestRFC3720Vectors(t)
		inc := make([]byte, 32)
		dec := make([]byte, 32)
		for i := range inc {
			inc[i] = byte(i)
			dec[i] = byte(31 - i)
		}
		cases := []struct {
			in   []byte
			want uint32
		}{
			{make([]byte, 32), 0x8A9136AA},
			{bytes.Repeat([]byte{0xff}, 32), 0x62A8AB43},
			{inc, 0x46DD794E},
			{dec, 0x113FDB5C},
		}
		for _, c := range cases {
			want := c.want // CRC of 1 copy
			long := c.in
			for k := 2; k <= 2100; k++ {
				long = append(long, c.in...)
				want = Combine(want, c.want, 32)
				if k%50 == 0 || k < 40 || k == 2048 || k == 2049 {
					if got := Checksum(long); got != want {
						t.Fatalf("%x repeated %d times: %#08x, want %#08x", c.in[:4], k, got, want)
					}
				}
			}
		}
	})
}

// FuzzUpdate compares Update (as dispatched) and the folding path with
// hash/crc32 on the fuzzer's bytes and on a buffer of size octets made by
// repeating them, so long lengths get fuzzed too.
func FuzzUpdate(f *testing.F) {
	f.Add(uint32(0), []byte("123456789"), uint32(0))
	f.Add(uint32(0xffffffff), make([]byte, 300), uint32(4096))
	f.Add(uint32(0x12345678), bytes.Repeat([]byte{0xa5, 0x5a, 0xff}, 100), uint32(65536+77))
	f.Fuzz(func(t *testing.T, crc uint32, data []byte, size uint32) {
		want := crc32Ref(crc, data)
		if got := Update(crc, data); got != want {
			t.Fatalf("Update len %d: %#08x, want %#08x", len(data), got, want)
		}
		if !hasCLMUL {
			return
		}
		if got := updateCLMUL(crc, data); got != want {
			t.Fatalf("updateCLMUL len %d: %#08x, want %#08x", len(data), got, want)
		}
		n := int(size % (3*256*hybridMax + 1000))
		p := make([]byte, n)
		if len(data) > 0 {
			for i := 0; i < n; i += copy(p[i:], data) {
			}
		}
		if got, want := updateCLMUL(crc, p), crc32Ref(crc, p); got != want {
			t.Fatalf("updateCLMUL on %d octets of % x...: %#08x, want %#08x", n, data[:min(len(data), 16)], got, want)
		}
	})
}
