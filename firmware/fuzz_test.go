package firmware

import (
	"bytes"
	"testing"
)

// FuzzParseImage: no input makes the parser or Verify panic; whatever
// parses marshals back to the same octets (nothing in an accepted header
// goes unread); and nothing verifies unless the vector's key signed
// exactly these header octets. The seed corpus (testdata/fuzz) holds the
// golden image and broken variants of it.
func FuzzParseImage(f *testing.F) {
	good := vectorImage(f)
	f.Add(good)
	f.Add(good[:HeaderSize])
	trust := vectorTrust(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := ParseImage(b)
		if err != nil {
			if KindOf(err) == 0 {
				t.Fatalf("refused without a kind: %v", err)
			}
			if _, verr := Verify(b, trust); verr == nil {
				t.Fatalf("Verify accepts what ParseImage refuses (%v)", err)
			}
			return
		}
		again, err := im.MarshalBinary()
		if err != nil {
			t.Fatalf("a parsed image does not marshal: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("parse and marshal change the image:\n in % x\nout % x", b, again)
		}
		if _, err := Verify(b, trust); err == nil && !bytes.Equal(b[:HeaderSize], good[:HeaderSize]) {
			// The vector key signs nothing else in this test: a second header
			// that verifies would be a forgery or a signature check gone.
			t.Fatalf("a header other than the vector's verifies: % x", b[:HeaderSize])
		}
	})
}
