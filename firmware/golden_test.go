package firmware

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden-v1.img from the test vector")

// The test vector of docs/firmware.md ("Test vector"): a fixed key, fixed
// fields, a fixed payload. Ed25519 is deterministic (RFC 8032 5.1.6), so
// the signed image is too.
func vectorKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i) // 00 01 .. 1f
	}
	return ed25519.NewKeyFromSeed(seed)
}

func vectorPayload() []byte {
	p := make([]byte, 64)
	for i := range p {
		p[i] = byte(i) // 00 01 .. 3f
	}
	return p
}

func vectorHeader() Header {
	h := Header{
		Version:         Version{Major: 1, Minor: 2, Patch: 0x0304, Build: 0x05060708},
		SecurityCounter: 0x090a0b0c,
		Board:           "sim",
		Part:            "verilator",
		PCI:             PCIIDs{Vendor: 0x1234, Device: 0x5678, SubVendor: 0x9abc, SubDevice: 0xdef0},
	}
	copy(h.BuildHash[:], mustHex("0123456789abcdef0123456789abcdef01234567"))
	return h
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func vectorImage(t testing.TB) []byte {
	t.Helper()
	return signedImage(t, vectorKey(), vectorHeader(), vectorPayload())
}

// signedImage is the image file of h and payload signed with priv.
func signedImage(t testing.TB, priv ed25519.PrivateKey, h Header, payload []byte) []byte {
	t.Helper()
	im, err := Sign(priv, h, payload)
	if err != nil {
		t.Fatal(err)
	}
	b, err := im.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const goldenFile = "testdata/golden-v1.img"

// TestGolden: Sign's image of the test vector equals the committed golden
// file octet for octet.
func TestGolden(t *testing.T) {
	got := vectorImage(t)
	if *update {
		if err := os.WriteFile(goldenFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (go test ./firmware -run TestGolden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("octet %#03x: got %#02x, golden %#02x (lengths %d and %d)", i, got[i], want[i], len(got), len(want))
			}
		}
		t.Fatalf("length %d, golden %d", len(got), len(want))
	}
}

// TestGoldenIndependent reads the golden file by the format table's
// offsets, without the package's parser, and checks its signature with
// crypto/ed25519 directly: the file is the format, not whatever the code
// happens to write.
func TestGoldenIndependent(t *testing.T) {
	b, err := os.ReadFile(filepath.FromSlash(goldenFile))
	if err != nil {
		t.Fatal(err)
	}
	payload := vectorPayload()
	if len(b) != 320+len(payload) {
		t.Fatalf("golden file is %d octets, want 320 + %d", len(b), len(payload))
	}
	le := binary.LittleEndian
	pub := vectorKey().Public().(ed25519.PublicKey)
	keyID := sha256.Sum256(pub)
	sum := sha256.Sum256(payload)
	u16 := func(off int) uint64 { return uint64(le.Uint16(b[off:])) }
	u32 := func(off int) uint64 { return uint64(le.Uint32(b[off:])) }
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"format version @0x004", u16(0x004), 1},
		{"signed header length @0x006", u16(0x006), 256},
		{"flags @0x008", u32(0x008), 0},
		{"major @0x00c", uint64(b[0x00c]), 1},
		{"minor @0x00d", uint64(b[0x00d]), 2},
		{"patch @0x00e", u16(0x00e), 0x0304},
		{"build @0x010", u32(0x010), 0x05060708},
		{"security counter @0x014", u32(0x014), 0x090a0b0c},
		{"payload length @0x018", u32(0x018), 64},
		{"reserved @0x01c", u32(0x01c), 0},
		{"PCI vendor @0x090", u16(0x090), 0x1234},
		{"PCI device @0x092", u16(0x092), 0x5678},
		{"subsystem vendor @0x094", u16(0x094), 0x9abc},
		{"subsystem device @0x096", u16(0x096), 0xdef0},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		name      string
		got, want []byte
	}{
		{"magic @0x000", b[0x000:0x004], []byte{0x52, 0x49, 0x4d, 0x47}},
		{"payload SHA-256 @0x020", b[0x020:0x040], sum[:]},
		{"key id @0x040", b[0x040:0x060], keyID[:]},
		{"board @0x060", b[0x060:0x070], append([]byte("sim"), make([]byte, 13)...)},
		{"part @0x070", b[0x070:0x090], append([]byte("verilator"), make([]byte, 23)...)},
		{"build hash @0x098", b[0x098:0x0ac], mustHex("0123456789abcdef0123456789abcdef01234567")},
		{"reserved @0x0ac", b[0x0ac:0x100], make([]byte, 84)},
		{"payload @0x140", b[0x140:], payload},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s = % x, want % x", c.name, c.got, c.want)
		}
	}
	if !ed25519.Verify(pub, b[:256], b[256:320]) {
		t.Error("crypto/ed25519 does not verify the golden signature over octets 0..255")
	}
	// Nothing but octets 0..255 is signed: the same signature over 0..319
	// (signature included) or over header and payload does not verify.
	if ed25519.Verify(pub, b[:320], b[256:320]) || ed25519.Verify(pub, append(slices.Clone(b[:256]), payload...), b[256:320]) {
		t.Error("the golden signature verifies over other octets than 0..255")
	}
}

// TestGoldenRoundTrip: the golden file parses, verifies with the vector's
// key, and marshals back to the same octets.
func TestGoldenRoundTrip(t *testing.T) {
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	ts := NewTrustSet()
	if _, err := ts.Add(vectorKey().Public().(ed25519.PublicKey), "vector"); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(b, ts)
	if err != nil {
		t.Fatal(err)
	}
	want := vectorHeader()
	got := v.Header
	if got.Version != want.Version || got.SecurityCounter != want.SecurityCounter || got.Board != want.Board ||
		got.Part != want.Part || got.PCI != want.PCI || got.BuildHash != want.BuildHash || got.PayloadLen != 64 {
		t.Errorf("parsed header %+v, want the vector's fields %+v", got, want)
	}
	if v.Key.Source != "vector" {
		t.Errorf("verified by %q", v.Key.Source)
	}
	again, err := v.Image.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Error("marshalling the parsed golden image does not give its octets back")
	}
}
