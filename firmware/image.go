package firmware

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
)

// Image is a header and its payload; in a file the payload follows the
// header directly and the file is exactly HeaderSize+PayloadLen octets.
type Image struct {
	Header  Header
	Payload []byte
}

// MarshalBinary returns the image file's octets.
func (im *Image) MarshalBinary() ([]byte, error) {
	b, err := im.Header.AppendBinary(make([]byte, 0, HeaderSize+len(im.Payload)))
	if err != nil {
		return nil, err
	}
	return append(b, im.Payload...), nil
}

// ParseImage parses an image file: the header's fields, and a file length
// of exactly HeaderSize plus the payload length. It checks neither the
// signature nor the payload's hash (Verify does); Payload aliases b.
func ParseImage(b []byte) (*Image, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return nil, err
	}
	if err := checkLength(h, int64(len(b))); err != nil {
		return nil, err
	}
	return &Image{Header: *h, Payload: b[HeaderSize:]}, nil
}

// checkLength checks an image file's size against its header.
func checkLength(h *Header, size int64) error {
	want := int64(HeaderSize) + int64(h.PayloadLen)
	switch {
	case size < want:
		return refuse(Truncated, "payload", "the image is %d octets, the header says %d (%d header + %d payload): the last %d octets are missing (copy or download it again)",
			size, want, HeaderSize, h.PayloadLen, want-size)
	case size > want:
		return refuse(Oversized, "payload", "the image is %d octets, the header says %d (%d header + %d payload): %d octets follow the payload; an image carries nothing after it (something was appended, or the header's length was changed)",
			size, want, HeaderSize, h.PayloadLen, size-want)
	}
	return nil
}

// Sign builds a signed image of payload: h's version, security counter,
// board, part, PCI IDs and build hash as given, its payload length,
// SHA-256, key id and signature computed here. Ed25519 is deterministic:
// the same key, fields and payload give the same image.
func Sign(priv ed25519.PrivateKey, h Header, payload []byte) (*Image, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("signing key: %d octets, not an Ed25519 private key (%d)", len(priv), ed25519.PrivateKeySize)
	}
	if uint64(len(payload)) > MaxPayload {
		return nil, refuse(TooLarge, "payload", "%d octets, more than the %d the header's 32-bit length holds", len(payload), uint64(MaxPayload))
	}
	h.PayloadLen = uint32(len(payload))
	h.PayloadSHA256 = sha256.Sum256(payload)
	h.KeyID = KeyIDOf(priv.Public().(ed25519.PublicKey))
	h.Signature = [64]byte{}
	b, err := h.MarshalBinary()
	if err != nil {
		return nil, err
	}
	copy(h.Signature[:], ed25519.Sign(priv, b[:SignedSize]))
	return &Image{Header: h, Payload: payload}, nil
}

// TrustedKey is a public key the verifier trusts, with where it came from
// (a file name, for messages).
type TrustedKey struct {
	ID     KeyID
	Public ed25519.PublicKey
	Source string
}

// TrustSet is the verifier's own set of public keys, looked up by key id.
// An image names the key that signed it; it never brings the key.
type TrustSet struct {
	keys map[KeyID]TrustedKey
}

// NewTrustSet returns an empty trust set.
func NewTrustSet() *TrustSet { return &TrustSet{keys: map[KeyID]TrustedKey{}} }

// Add trusts pub; source says where it came from. Adding a key twice
// keeps the first source.
func (t *TrustSet) Add(pub ed25519.PublicKey, source string) (KeyID, error) {
	if len(pub) != ed25519.PublicKeySize {
		return KeyID{}, fmt.Errorf("%s: %d octets, not an Ed25519 public key (%d)", source, len(pub), ed25519.PublicKeySize)
	}
	id := KeyIDOf(pub)
	if _, ok := t.keys[id]; !ok {
		t.keys[id] = TrustedKey{ID: id, Public: slices.Clone(pub), Source: source}
	}
	return id, nil
}

// Lookup finds the trusted key with this id.
func (t *TrustSet) Lookup(id KeyID) (TrustedKey, bool) {
	if t == nil {
		return TrustedKey{}, false
	}
	k, ok := t.keys[id]
	return k, ok
}

// Len is the number of keys trusted.
func (t *TrustSet) Len() int {
	if t == nil {
		return 0
	}
	return len(t.keys)
}

// Keys lists the trusted keys in key id order.
func (t *TrustSet) Keys() []TrustedKey {
	if t == nil {
		return nil
	}
	out := make([]TrustedKey, 0, len(t.keys))
	for _, k := range t.keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b TrustedKey) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	return out
}

// Verified is an image that passed Verify, and the trusted key that
// signed it.
type Verified struct {
	Image
	Key TrustedKey
}

// Verify checks an image file b against the trust set: the header's
// fields, its signature against the trusted key its key id names, the
// file's length against the payload length, and the payload's SHA-256.
// It refuses with an *Error. Nothing in b is trusted before its check:
// the signature is checked with a key of trust, and the length and hash
// only after the signature has shown the header is the signer's.
func Verify(b []byte, trust *TrustSet) (*Verified, error) {
	h, key, err := VerifyHeader(b, trust)
	if err != nil {
		return nil, err
	}
	if err := CheckPayload(h, b[HeaderSize:]); err != nil {
		return nil, err
	}
	return &Verified{Image: Image{Header: *h, Payload: b[HeaderSize:]}, Key: key}, nil
}

// VerifyHeader checks the header at the start of b (what follows is not
// looked at): its fields, and its signature against the trusted key its
// key id names. The payload is checked apart (CheckPayload): in flash the
// header and the payload live in different sectors.
func VerifyHeader(b []byte, trust *TrustSet) (*Header, TrustedKey, error) {
	if trust.Len() == 0 {
		return nil, TrustedKey{}, refuse(NoTrustedKeys, "trust set", "no trusted keys: nothing can verify; add the signer's public key (KEY.pub from rnic-loader keygen)")
	}
	h, err := ParseHeader(b)
	if err != nil {
		return nil, TrustedKey{}, err
	}
	key, ok := trust.Lookup(h.KeyID)
	if !ok {
		return nil, TrustedKey{}, refuse(UnknownKey, "key id", "%s is not a key of the trust set (%s): the image was signed by a key this host does not trust; sign it with a trusted key, or add the signer's public key to the trust set if you trust it",
			h.KeyID, trustSummary(trust))
	}
	if !ed25519.Verify(key.Public, b[:SignedSize], b[offSignature:HeaderSize]) {
		return nil, TrustedKey{}, refuse(BadSignature, "signature", "does not verify with the trusted key %s (%s): the header was changed after signing or the image is damaged; do not flash it, sign it again",
			key.ID, key.Source)
	}
	return h, key, nil
}

// CheckPayload checks a payload against its header: its length, then its
// SHA-256. Only a header that VerifyHeader accepted vouches for anything.
func CheckPayload(h *Header, payload []byte) error {
	if err := checkLength(h, HeaderSize+int64(len(payload))); err != nil {
		return err
	}
	if sum := sha256.Sum256(payload); sum != h.PayloadSHA256 {
		return refuse(HashMismatch, "payload SHA-256", "the payload hashes to %x, the signed header says %x: the payload was changed or damaged after signing; do not flash it, copy it again or sign it again",
			sum, h.PayloadSHA256)
	}
	return nil
}

// VerifyTarget is Verify followed by Check against the device the image
// is about to go to: the one call a flash updater makes before it erases
// anything.
func VerifyTarget(b []byte, trust *TrustSet, t Target) (*Verified, error) {
	v, err := Verify(b, trust)
	if err != nil {
		return nil, err
	}
	if err := Check(&v.Header, t); err != nil {
		return nil, err
	}
	return v, nil
}

// trustSummary names a trust set's keys for a message.
func trustSummary(t *TrustSet) string {
	keys := t.Keys()
	const show = 3
	var parts []string
	for i, k := range keys {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("%s from %s", k.ID.String()[:16], k.Source))
	}
	return fmt.Sprintf("%d trusted: %s", len(keys), strings.Join(parts, ", "))
}
