package crc32c

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// RFC 3720 appendix B.4, the iSCSI CRC32c examples (also listed in
// ../shared/spec/NOTES.md with their wire octets).
func TestRFC3720Vectors(t *testing.T) {
	inc := make([]byte, 32)
	dec := make([]byte, 32)
	for i := range inc {
		inc[i] = byte(i)
		dec[i] = byte(31 - i)
	}
	cases := []struct {
		name string
		in   []byte
		want uint32
		wire []byte
	}{
		{"32 zeros", make([]byte, 32), 0x8A9136AA, []byte{0xaa, 0x36, 0x91, 0x8a}},
		{"32 ones", bytes.Repeat([]byte{0xff}, 32), 0x62A8AB43, []byte{0x43, 0xab, 0xa8, 0x62}},
		{"incrementing", inc, 0x46DD794E, []byte{0x4e, 0x79, 0xdd, 0x46}},
		{"decrementing", dec, 0x113FDB5C, []byte{0x5c, 0xdb, 0x3f, 0x11}},
		{"123456789", []byte("123456789"), 0xE3069283, []byte{0x83, 0x92, 0x06, 0xe3}},
	}
	for _, c := range cases {
		got := Checksum(c.in)
		if got != c.want {
			t.Errorf("%s: Checksum = %#08x, want %#08x", c.name, got, c.want)
		}
		if w := AppendWire(nil, got); !bytes.Equal(w, c.wire) {
			t.Errorf("%s: wire = % x, want % x", c.name, w, c.wire)
		}
		if Wire(c.wire) != c.want {
			t.Errorf("%s: Wire(% x) = %#08x", c.name, c.wire, Wire(c.wire))
		}
	}
}

func TestUpdateResumes(t *testing.T) {
	b := []byte("MPA ID Req Frame and some more octets")
	for cut := 0; cut <= len(b); cut++ {
		if got, want := Update(Checksum(b[:cut]), b[cut:]), Checksum(b); got != want {
			t.Fatalf("cut %d: %#x != %#x", cut, got, want)
		}
	}
}

func TestCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		a := make([]byte, r.IntN(3000))
		b := make([]byte, r.IntN(70000))
		for j := range a {
			a[j] = byte(r.Uint32())
		}
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		whole := Checksum(append(append([]byte{}, a...), b...))
		if got := Combine(Checksum(a), Checksum(b), int64(len(b))); got != whole {
			t.Fatalf("len(a)=%d len(b)=%d: Combine=%#x, want %#x", len(a), len(b), got, whole)
		}
	}
}

func BenchmarkChecksum64K(b *testing.B) {
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		Checksum(buf)
	}
}

func BenchmarkCombine(b *testing.B) {
	for b.Loop() {
		Combine(0x12345678, 0x9abcdef0, 65536)
	}
}
