package tuf

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrnic/rnic/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenKey is the key of every golden file: distinct octets, so a swapped
// or shifted field shows.
const goldenKey Key = 0xa1b2c3d4e5f6

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

type goldenCase struct {
	file   string
	desc   string
	cfg    Config
	ulpdus [][]byte
}

func goldenCases() []goldenCase {
	// An 18-octet untagged DDP header (Send, Last, MSN 1: RFC 5041 4.2,
	// RFC 5040 4) with 16 octets of data: what DDP over TUF frames.
	send := append([]byte{0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, pattern(16)...)
	return []goldenCase{
		{"header", "FPDU header alone: Length 0x05b4 (1460), key a1b2c3d4e5f6", Config{}, nil},
		{"fpdu_empty", "FPDU of an empty ULPDU: Length 4 (the trailer alone)", Config{Key: goldenKey, EMSS: 1460}, [][]byte{{}}},
		{"fpdu_send", "FPDU of a DDP Send segment (18-octet header, 16 octets of data), EMSS 1460", Config{Key: goldenKey, EMSS: 1460}, [][]byte{send}},
		{"nopack", "three ULPDUs of 10, 20, 30 octets without packing: three FPDUs, three segments", Config{Key: goldenKey, EMSS: 100}, [][]byte{pattern(10), pattern(20), pattern(30)}},
		{"pack", "the same three ULPDUs packed at EMSS 60 (MaxULPDU 48): 10+20 in one FPDU, 30 in the next", Config{Key: goldenKey, EMSS: 60, Pack: true}, [][]byte{pattern(10), pattern(20), pattern(30)}},
		{"oversized", "a 40-octet ULPDU at EMSS 24 (MaxULPDU 12), oversized allowed: one FPDU in three segments", Config{Key: goldenKey, EMSS: 24, Oversized: true}, [][]byte{pattern(40)}},
	}
}

func hexLines(b *bytes.Buffer, p []byte) {
	for off := 0; off < len(p); off += 16 {
		line := p[off:min(off+16, len(p))]
		parts := make([]string, len(line))
		for j, c := range line {
			parts[j] = fmt.Sprintf("%02x", c)
		}
		b.WriteString(strings.Join(parts, " ") + "\n")
	}
}

func renderGolden(t testing.TB, c goldenCase) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", c.desc)
	if c.file == "header" {
		h := Header{Length: 1460, Key: goldenKey}
		fmt.Fprintf(&b, "# segment 1/1, 8 octets: Length %d | Key %v\n", h.Length, h.Key)
		hexLines(&b, h.Append(nil))
		return b.Bytes()
	}
	segs, err := mustSender(t, c.cfg).Segments(nil, c.ulpdus)
	if err != nil {
		t.Fatal(err)
	}
	for i, seg := range segs {
		desc := "a piece of an FPDU longer than EMSS"
		if h, err := ParseHeader(seg); err == nil && i == 0 || err == nil && int(h.Length)+HeaderLen == len(seg) {
			desc = fmt.Sprintf("Length %d | Key %v | %d octets of ULPDUs | CRC32c %08x",
				h.Length, h.Key, int(h.Length)-CRCLen, binary.LittleEndian.Uint32(seg[len(seg)-CRCLen:]))
			if int(h.Length)+HeaderLen != len(seg) {
				desc = fmt.Sprintf("Length %d | Key %v | the first %d octets of an FPDU longer than EMSS", h.Length, h.Key, len(seg))
			}
		}
		fmt.Fprintf(&b, "# segment %d/%d, %d octets: %s\n", i+1, len(segs), len(seg), desc)
		hexLines(&b, seg)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.file, func(t *testing.T) {
			got := renderGolden(t, c)
			golden.Check(t, filepath.Join("testdata", "golden", c.file+".hex"), got, *update)
		})
	}
}

// TestGoldenByHand checks the golden files against the draft's layout
// (4.1.1: Length, then the 48-bit Key, big-endian; Length counts what
// follows the header) and the trailer (CRC32c of header and ULPDUs, least
// significant octet first), with values worked out here rather than by
// the sender, so that a wrong sender cannot bless its own output with
// -update:
//
//   - header.hex: 05 b4 a1 b2 c3 d4 e5 f6.
//   - fpdu_empty.hex: 00 04 a1 b2 c3 d4 e5 f6 and the CRC32c of those 8.
//   - fpdu_send.hex: Length 34 + 4 = 0x0026, the key, 41 43 ..., 00 01
//     (MSN 1) at ULPDU octets 10..13, 00 .. 0f, the trailer.
//   - nopack.hex: three segments of 22, 32 and 42 octets, Lengths 14, 24
//     and 34 (0x0e, 0x18, 0x22).
//   - pack.hex: 10 + 20 = 30 <= 48: one FPDU of Length 34 (42 octets);
//     30 would make 60 > 48: a second FPDU of Length 34.
//   - oversized.hex: the FPDU is 8 + 40 + 4 = 52 octets, cut at EMSS 24:
//     24, 24 and 4 octets; the first starts 00 2c (Length 44).
func TestGoldenByHand(t *testing.T) {
	key := []byte{0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6}
	crcOf := func(b []byte) []byte {
		// CRC32c (Castagnoli), bit by bit: reflected polynomial
		// 0x82f63b78, initial value and final XOR all ones.
		c := ^uint32(0)
		for _, x := range b {
			c ^= uint32(x)
			for k := 0; k < 8; k++ {
				if c&1 != 0 {
					c = c>>1 ^ 0x82f63b78
				} else {
					c >>= 1
				}
			}
		}
		c = ^c
		return []byte{byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24)}
	}
	fpdu := func(length int, ulpdus []byte) []byte {
		f := append([]byte{byte(length >> 8), byte(length)}, key...)
		f = append(f, ulpdus...)
		return append(f, crcOf(f)...)
	}
	check := func(name string, want ...[]byte) {
		got := readGolden(t, name)
		if len(got) != len(want) {
			t.Fatalf("%s: %d segments, want %d", name, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("%s segment %d:\n got % x\nwant % x", name, i+1, got[i], want[i])
			}
		}
	}
	check("header", append([]byte{0x05, 0xb4}, key...))
	check("fpdu_empty", fpdu(4, nil))
	send := append([]byte{0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, pattern(16)...)
	check("fpdu_send", fpdu(0x26, send))
	check("nopack", fpdu(0x0e, pattern(10)), fpdu(0x18, pattern(20)), fpdu(0x22, pattern(30)))
	check("pack", fpdu(0x22, append(pattern(10), pattern(20)...)), fpdu(0x22, pattern(30)))
	big := fpdu(0x2c, pattern(40))
	check("oversized", big[:24], big[24:48], big[48:])
}

// readGolden returns the segments of testdata/golden/NAME.hex.
func readGolden(t testing.TB, name string) [][]byte {
	t.Helper()
	return golden.Segments(t, filepath.Join("testdata", "golden", name+".hex"))
}
