//go:build !purego

package crc32c

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCLMULRounds calls the assembly directly for every round count with
// folded parts of several lengths, and checks special data: all zeros,
// all ones, and an initial CRC of 0 and 0xFFFFFFFF.
func TestCLMULRounds(t *testing.T) {
	needCLMUL(t)
	r := rand.New(rand.NewPCG(9, 10))
	rnd := randBytes(r, 256*hybridMax+256)
	zeros := make([]byte, len(rnd))
	ones := bytes.Repeat([]byte{0xff}, len(rnd))
	for rounds := 0; rounds <= hybridMax; rounds++ {
		for _, extra := range []int{0, 32, 64, 96, 128, 224} {
			l0 := max(128, 128*rounds) + extra
			for _, buf := range [][]byte{rnd, zeros, ones} {
				p := buf[:l0+128*rounds]
				for _, crc := range []uint32{0, 0xffffffff, r.Uint32()} {
					if got, want := updateAVX2CLMUL(crc, p, rounds), crc32Ref(crc, p); got != want {
						t.Fatalf("rounds %d len %d crc %#x: %#08x, want %#08x", rounds, len(p), crc, got, want)
					}
				}
			}
		}
	}
}
