//go:build !purego

package crc32c

import (
	"bytes"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestCLMULDetected checks the dispatch against what the kernel says the
// CPU has (/proc/cpuinfo's flags): the folding path is on exactly when
// avx2, pclmulqdq, vpclmulqdq and sse4_2 are all there. So the tests that
// skip without the folding path (needCLMUL) cannot hide a detection bug on
// a machine that has the instructions.
func TestCLMULDetected(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/cpuinfo")
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	if flags == nil {
		t.Fatal("no flags line in /proc/cpuinfo")
	}
	want := true
	for _, f := range []string{"avx2", "pclmulqdq", "vpclmulqdq", "sse4_2"} {
		want = want && slices.Contains(flags, f)
	}
	if hasCLMUL != want {
		t.Fatalf("folding path detected %v, /proc/cpuinfo says %v", hasCLMUL, want)
	}
}

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
