package firmware

import (
	"crypto/ed25519"
	"slices"
	"strings"
	"testing"
)

// The tamper matrix of issue 31: every way an image can be wrong for its
// device is refused, with the reason's Kind and a message that names the
// field. (The flash half, "not one byte of flash changed", is the flash
// updater's test: it calls VerifyTarget before any flash access.)

func vectorTrust(t testing.TB) *TrustSet {
	t.Helper()
	ts := NewTrustSet()
	if _, err := ts.Add(vectorKey().Public().(ed25519.PublicKey), "vector.pub"); err != nil {
		t.Fatal(err)
	}
	return ts
}

// vectorTarget is the device the test vector was built for.
func vectorTarget() Target {
	h := vectorHeader()
	return Target{Board: h.Board, Part: h.Part, PCIIDs: h.PCI, MinSecurityCounter: h.SecurityCounter, MaxPayload: 64}
}

func otherKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 0xff
	return ed25519.NewKeyFromSeed(seed)
}

func TestVectorAccepted(t *testing.T) {
	if _, err := VerifyTarget(vectorImage(t), vectorTrust(t), vectorTarget()); err != nil {
		t.Fatalf("the test vector is refused for its own target: %v", err)
	}
}

func TestTamperMatrix(t *testing.T) {
	good := vectorImage(t)
	trust := vectorTrust(t)
	target := vectorTarget()
	signed := func(edit func(*Header), payload []byte) []byte {
		h := vectorHeader()
		edit(&h)
		return signedImage(t, vectorKey(), h, payload)
	}
	otherBytes := signedImage(t, otherKey(), vectorHeader(), vectorPayload())
	// A signature by the other key with the trusted key's id in the header:
	// the key id is right, the signature is not the trusted key's.
	forged := slices.Clone(good)
	hdr, _ := ParseHeader(forged)
	hdr.Signature = [64]byte{}
	hb, _ := hdr.MarshalBinary()
	copy(forged[offSignature:], ed25519.Sign(otherKey(), hb[:SignedSize]))

	cases := []struct {
		name   string
		image  []byte
		target Target
		kind   Kind
		want   string // in the message
	}{
		{"wrong signature", forged, target, BadSignature, "signature: does not verify with the trusted key"},
		{"unknown key", otherBytes, target, UnknownKey, "is not a key of the trust set (1 trusted:"},
		{"wrong board", signed(func(h *Header) { h.Board = "au250" }, vectorPayload()), target, WrongBoard, `board: the image is for board "au250", not "sim"`},
		{"wrong part", signed(func(h *Header) { h.Part = "xcu250-figd2104-2l-e" }, vectorPayload()), target, WrongPart, `part: the image is for FPGA part "xcu250-figd2104-2l-e", not "verilator"`},
		{"wrong vendor", signed(func(h *Header) { h.PCI.Vendor = 0x10ee }, vectorPayload()), target, WrongPCI, "the image is for 10ee:5678:9abc:def0, the device is 1234:5678:9abc:def0"},
		{"wrong device", signed(func(h *Header) { h.PCI.Device++ }, vectorPayload()), target, WrongPCI, "PCI IDs:"},
		{"wrong subsystem vendor", signed(func(h *Header) { h.PCI.SubVendor++ }, vectorPayload()), target, WrongPCI, "PCI IDs:"},
		{"wrong subsystem device", signed(func(h *Header) { h.PCI.SubDevice++ }, vectorPayload()), target, WrongPCI, "PCI IDs:"},
		{"security counter rollback", signed(func(h *Header) { h.SecurityCounter-- }, vectorPayload()), target, Rollback, "security counter: the image has 151653131, the device takes 151653132 or higher only"},
		{"truncated payload", good[:len(good)-1], target, Truncated, "the last 1 octets are missing"},
		{"payload cut off", good[:HeaderSize], target, Truncated, "the last 64 octets are missing"},
		{"truncated header", good[:HeaderSize-1], target, Truncated, "short of the 320-octet header"},
		{"empty file", nil, target, Truncated, "the file is 0 octets"},
		{"oversized payload", append(slices.Clone(good), 0), target, Oversized, "1 octets follow the payload"},
		{"payload larger than the slot", signed(func(*Header) {}, make([]byte, 65)), target, TooLarge, "more than the 64 the device's update slot holds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := VerifyTarget(c.image, trust, c.target)
			if err == nil {
				t.Fatal("accepted")
			}
			if KindOf(err) != c.kind {
				t.Fatalf("refused as %v, want %v: %v", KindOf(err), c.kind, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("message %q does not say %q", err, c.want)
			}
		})
	}
}

// headerFlipKinds is what a flip of one bit at header offset off may be
// refused as: the field's own check where the parser has one, else the
// signature (the field is signed) or, in the key id, the key lookup.
func headerFlipKinds(off int) []Kind {
	switch {
	case off < offFormat:
		return []Kind{BadMagic}
	case off < offSignedLen:
		return []Kind{BadFormatVersion}
	case off < offFlags:
		return []Kind{BadHeaderLength}
	case off < offMajor:
		return []Kind{BadFlags}
	case off >= offPayloadLen && off < offReserved1:
		// A length with one bit set would become 0.
		return []Kind{BadSignature, EmptyPayload}
	case off >= offReserved1 && off < offPayloadHash, off >= offReserved2 && off < offSignature:
		return []Kind{Reserved}
	case off >= offKeyID && off < offBoard:
		return []Kind{UnknownKey}
	case off >= offBoard && off < offVendor:
		// A name may stay printable (then the signature fails) or not.
		return []Kind{BadSignature, BadString}
	}
	return []Kind{BadSignature}
}

// TestHeaderBitFlips flips every bit of the 320-octet header, one at a
// time: every one of the 2560 images is refused, each for its field's
// reason.
func TestHeaderBitFlips(t *testing.T) {
	good := vectorImage(t)
	trust := vectorTrust(t)
	b := slices.Clone(good)
	for off := range HeaderSize {
		for bit := range 8 {
			b[off] ^= 1 << bit
			_, err := VerifyTarget(b, trust, vectorTarget())
			b[off] ^= 1 << bit
			if err == nil {
				t.Fatalf("header octet %#03x bit %d flipped: accepted", off, bit)
			}
			if k := KindOf(err); !slices.Contains(headerFlipKinds(off), k) {
				t.Errorf("header octet %#03x bit %d flipped: refused as %v (%v), want one of %v", off, bit, k, err, headerFlipKinds(off))
			}
		}
	}
}

// TestPayloadBitFlips flips single bits of the payload, the first and last
// octet's every bit among them: each is a hash mismatch.
func TestPayloadBitFlips(t *testing.T) {
	good := vectorImage(t)
	trust := vectorTrust(t)
	b := slices.Clone(good)
	n := len(good) - HeaderSize
	var offs []int
	for off := 0; off < n; off += 7 {
		offs = append(offs, off)
	}
	offs = append(offs, n-1)
	for _, off := range offs {
		bits := []int{off % 8}
		if off == 0 || off == n-1 {
			bits = []int{0, 1, 2, 3, 4, 5, 6, 7}
		}
		for _, bit := range bits {
			b[HeaderSize+off] ^= 1 << bit
			_, err := VerifyTarget(b, trust, vectorTarget())
			b[HeaderSize+off] ^= 1 << bit
			if KindOf(err) != HashMismatch {
				t.Errorf("payload octet %d bit %d flipped: %v, want a hash mismatch", off, bit, err)
			}
		}
	}
}

// TestEmptyTrustSet: with no trusted key nothing verifies, and the message
// says what to add.
func TestEmptyTrustSet(t *testing.T) {
	for _, ts := range []*TrustSet{nil, NewTrustSet()} {
		_, err := Verify(vectorImage(t), ts)
		if KindOf(err) != NoTrustedKeys || !strings.Contains(err.Error(), "add the signer's public key") {
			t.Errorf("empty trust set: %v", err)
		}
	}
}

// TestKeyFromTrustSetOnly: the trust set decides, never the image: an
// image signed by a key the set does not hold is an unknown key until that
// key is added. (With the trusted key's id in its header instead, it fails
// its signature: "wrong signature" in TestTamperMatrix.)
func TestKeyFromTrustSetOnly(t *testing.T) {
	trust := vectorTrust(t)
	b := signedImage(t, otherKey(), vectorHeader(), vectorPayload())
	if _, err := Verify(b, trust); KindOf(err) != UnknownKey {
		t.Fatalf("image signed by an untrusted key: %v", err)
	}
	trust.Add(otherKey().Public().(ed25519.PublicKey), "other.pub")
	v, err := Verify(b, trust)
	if err != nil {
		t.Fatalf("once its key is trusted: %v", err)
	}
	if v.Key.Source != "other.pub" {
		t.Errorf("verified with %s, want other.pub", v.Key.Source)
	}
}
