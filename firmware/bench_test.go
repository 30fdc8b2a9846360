package firmware

import "testing"

// The cost of checking an image before flashing it: one Ed25519
// verification and a SHA-256 over the payload (an xcu250 bitstream is
// about 90 MiB).
func BenchmarkVerify(b *testing.B) {
	payload := make([]byte, 16<<20)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	img := signedImage(b, vectorKey(), vectorHeader(), payload)
	trust := vectorTrust(b)
	b.SetBytes(int64(len(img)))
	for b.Loop() {
		if _, err := VerifyTarget(img, trust, Target{Board: "sim", Part: "verilator", PCIIDs: vectorHeader().PCI}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyHeader is the signature check alone (the header sector).
func BenchmarkVerifyHeader(b *testing.B) {
	img := vectorImage(b)
	trust := vectorTrust(b)
	for b.Loop() {
		if _, _, err := VerifyHeader(img, trust); err != nil {
			b.Fatal(err)
		}
	}
}
