package firmware

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// TestParseRefusals: each field the format fixes, broken in an otherwise
// good header, is refused by the parser (before any signature check) with
// its own kind and a message naming the field.
func TestParseRefusals(t *testing.T) {
	good := vectorImage(t)
	cases := []struct {
		name string
		edit func(b []byte)
		kind Kind
		want string
	}{
		{"magic", func(b []byte) { copy(b, "RIMH") }, BadMagic, `magic: 52 49 4d 48, not "RIMG"`},
		{"format version 2", func(b []byte) { binary.LittleEndian.PutUint16(b[offFormat:], 2) }, BadFormatVersion, "format version: 2: this rnic-loader reads format version 1 only"},
		{"format version 0", func(b []byte) { binary.LittleEndian.PutUint16(b[offFormat:], 0) }, BadFormatVersion, "format version: 0"},
		{"signed length 320", func(b []byte) { binary.LittleEndian.PutUint16(b[offSignedLen:], 320) }, BadHeaderLength, "signed header length: 320"},
		{"a flag", func(b []byte) { b[offFlags+3] = 0x80 }, BadFlags, "flags: 0x80000000"},
		{"reserved at 0x01c", func(b []byte) { b[offReserved1+2] = 1 }, Reserved, "reserved (0x01c): octet 2 is 0x01"},
		{"reserved at 0x0ac", func(b []byte) { b[offSignature-1] = 0x40 }, Reserved, "reserved (0x0ac): octet 83 is 0x40"},
		{"payload length 0", func(b []byte) { binary.LittleEndian.PutUint32(b[offPayloadLen:], 0) }, EmptyPayload, "payload length: 0"},
		{"board empty", func(b []byte) { clear(b[offBoard : offBoard+BoardSize]) }, BadString, "board: empty"},
		{"board not printable", func(b []byte) { b[offBoard+1] = 0x07 }, BadString, `board: "s\am": octet 1 is 0x07`},
		{"board with a space", func(b []byte) { b[offBoard+1] = ' ' }, BadString, "octet 1 is 0x20"},
		{"board high bit", func(b []byte) { b[offBoard] |= 0x80 }, BadString, "octet 0 is 0xf3"},
		{"octets after the board's NUL", func(b []byte) { b[offBoard+BoardSize-1] = 'x' }, BadString, "board: octet 15 is 0x78 after the name's NUL padding began at octet 3"},
		{"octets after the part's NUL", func(b []byte) { b[offPart+10] = 'x' }, BadString, "part: octet 10 is 0x78 after the name's NUL padding began at octet 9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := slices.Clone(good)
			c.edit(b)
			_, err := ParseHeader(b)
			if KindOf(err) != c.kind {
				t.Fatalf("%v, want kind %v", err, c.kind)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("message %q does not say %q", err, c.want)
			}
			// Verify refuses it the same way, before looking at the key.
			if _, err := Verify(b, vectorTrust(t)); KindOf(err) != c.kind {
				t.Errorf("Verify: %v, want kind %v", err, c.kind)
			}
		})
	}
}

// TestFullNames: a board of 16 and a part of 32 octets fill their fields
// with no NUL at all, and parse back.
func TestFullNames(t *testing.T) {
	h := vectorHeader()
	h.Board = strings.Repeat("b", BoardSize)
	h.Part = strings.Repeat("p", PartSize)
	im, err := Sign(vectorKey(), h, []byte{1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := im.MarshalBinary()
	if !bytes.Equal(b[offBoard:offPart], []byte(h.Board)) || !bytes.Equal(b[offPart:offVendor], []byte(h.Part)) {
		t.Fatal("names not where the table puts them")
	}
	v, err := Verify(b, vectorTrust(t))
	if err != nil {
		t.Fatal(err)
	}
	if v.Header.Board != h.Board || v.Header.Part != h.Part {
		t.Errorf("names parsed as %q, %q", v.Header.Board, v.Header.Part)
	}
}

func TestSignRefuses(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*Header)
		payload []byte
		kind    Kind
		want    string
	}{
		{"board too long", func(h *Header) { h.Board = strings.Repeat("b", 17) }, []byte{1}, BadString, "is 17 octets, more than the 16 the header holds"},
		{"part too long", func(h *Header) { h.Part = strings.Repeat("p", 33) }, []byte{1}, BadString, "more than the 32 the header holds"},
		{"no board", func(h *Header) { h.Board = "" }, []byte{1}, BadString, "board: empty"},
		{"no part", func(h *Header) { h.Part = "" }, []byte{1}, BadString, "part: empty"},
		{"non-ASCII part", func(h *Header) { h.Part = "xcü250" }, []byte{1}, BadString, "printable ASCII"},
		{"empty payload", func(*Header) {}, nil, EmptyPayload, "at least one octet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := vectorHeader()
			c.edit(&h)
			_, err := Sign(vectorKey(), h, c.payload)
			if KindOf(err) != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want kind %v saying %q", err, c.kind, c.want)
			}
		})
	}
	if _, err := Sign(vectorKey()[:32], vectorHeader(), []byte{1}); err == nil {
		t.Error("a 32-octet private key signs")
	}
}

// TestSignIgnoresComputedFields: whatever the caller puts in the fields
// Sign computes, the image is the same.
func TestSignIgnoresComputedFields(t *testing.T) {
	h := vectorHeader()
	h.PayloadLen, h.PayloadSHA256[0], h.KeyID[5], h.Signature[9] = 7, 1, 2, 3
	im, err := Sign(vectorKey(), h, vectorPayload())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := im.MarshalBinary()
	if !bytes.Equal(b, vectorImage(t)) {
		t.Error("Sign's image depends on the fields it computes")
	}
}

func TestUnmarshalLength(t *testing.T) {
	good := vectorImage(t)
	var h Header
	if err := h.UnmarshalBinary(good); KindOf(err) != Oversized {
		t.Errorf("UnmarshalBinary of header and payload: %v", err)
	}
	if err := h.UnmarshalBinary(good[:HeaderSize-1]); KindOf(err) != Truncated {
		t.Errorf("UnmarshalBinary of 319 octets: %v", err)
	}
	if err := h.UnmarshalBinary(good[:HeaderSize]); err != nil {
		t.Fatal(err)
	}
	if h.Board != "sim" {
		t.Errorf("board %q", h.Board)
	}
}

func TestParseVersion(t *testing.T) {
	good := map[string]Version{
		"1.2.3":                    {1, 2, 3, 0},
		"1.2.3+45":                 {1, 2, 3, 45},
		"255.255.65535+4294967295": {255, 255, 65535, 4294967295},
		"0.0.0":                    {},
	}
	for s, want := range good {
		v, err := ParseVersion(s)
		if err != nil || v != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", s, v, err, want)
		}
	}
	if got := (Version{1, 2, 3, 45}).String(); got != "1.2.3+45" {
		t.Errorf("String: %s", got)
	}
	bad := map[string]string{
		"1.2":              "want MAJOR.MINOR.PATCH",
		"1.2.3.4":          "want MAJOR.MINOR.PATCH",
		"256.0.0":          `major "256": want 0 to 255`,
		"0.256.0":          `minor "256": want 0 to 255`,
		"0.0.65536":        `patch "65536": want 0 to 65535`,
		"1.2.3+":           `build number "": want 0 to 4294967295`,
		"1.2.3+4294967296": "build number",
		"1.2.x":            `patch "x"`,
		"-1.2.3":           `major "-1"`,
		"v1.2.3":           `major "v1"`,
	}
	for s, want := range bad {
		if _, err := ParseVersion(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseVersion(%q): %v, want %q", s, err, want)
		}
	}
}

func TestParsePCIIDs(t *testing.T) {
	p, err := ParsePCIIDs("10ee:903F:10EE:0007")
	if err != nil || p != (PCIIDs{0x10ee, 0x903f, 0x10ee, 0x0007}) {
		t.Errorf("four IDs: %v %v", p, err)
	}
	p, err = ParsePCIIDs("10ee:903f")
	if err != nil || p != (PCIIDs{0x10ee, 0x903f, 0x10ee, 0x903f}) {
		t.Errorf("two IDs stand for the subsystem IDs too: %v %v", p, err)
	}
	if p.String() != "10ee:903f:10ee:903f" {
		t.Errorf("String: %s", p)
	}
	for _, s := range []string{"", "10ee", "10ee:903f:10ee", "10ee:903f:10ee:0007:1", "10e:903f", "10ee:90g3", "10ee:-903"} {
		if _, err := ParsePCIIDs(s); err == nil {
			t.Errorf("ParsePCIIDs(%q) accepted", s)
		}
	}
}
