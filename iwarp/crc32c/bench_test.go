package crc32c

import (
	"fmt"
	"hash/crc32"
	"testing"
)

// benchSizes are the lengths BenchmarkUpdate reports: a short message, the
// threshold region, a 1460-octet FPDU (Ethernet MSS), a page, a jumbo
// frame's FPDU and a whole 64 KiB ULPDU.
var benchSizes = []int{64, 256, 1460, 4096, 9000, 65536}

// BenchmarkUpdate compares the folding path (impl=clmul, updateCLMUL
// regardless of the threshold; below 128 octets it is hash/crc32 itself)
// with hash/crc32 (impl=crc32), and Update as dispatched (impl=Update).
// Compare with
//
//	go test -run '^$' -bench '^BenchmarkUpdate$' -count 10 ./iwarp/crc32c | benchstat -col /impl -
func BenchmarkUpdate(b *testing.B) {
	benchImpls(b, benchSizes)
}

// BenchmarkThreshold is the same around the threshold.
func BenchmarkThreshold(b *testing.B) {
	benchImpls(b, []int{128, 160, 192, 224, 256, 320, 384, 512, 768, 1024})
}

func benchImpls(b *testing.B, sizes []int) {
	impls := []struct {
		name string
		f    func(uint32, []byte) uint32
	}{
		{"clmul", updateCLMUL},
		{"crc32", func(crc uint32, p []byte) uint32 { return crc32.Update(crc, Table, p) }},
		{"Update", Update},
	}
	for _, im := range impls {
		if im.name == "clmul" && !hasCLMUL {
			continue
		}
		for _, n := range sizes {
			b.Run(fmt.Sprintf("impl=%s/size=%d", im.name, n), func(b *testing.B) {
				buf := make([]byte, n)
				for i := range buf {
					buf[i] = byte(i * 131)
				}
				b.SetBytes(int64(n))
				crc := uint32(0)
				for b.Loop() {
					crc = im.f(crc, buf)
				}
				sink = crc
			})
		}
	}
}

var sink uint32
