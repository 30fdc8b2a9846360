//go:build ignore

// gen_consts writes consts.go: the folding and Barrett constants that the
// carry-less-multiply CRC32c path (crc32c_amd64.s) uses. Run it with
//
//	go run gen_consts.go
//
// from this directory (go generate does it; see crc32c.go). The constants
// are derived here in the ordinary, non-reflected polynomial domain and then
// bit-reflected into the form the assembly wants; TestConstants derives them
// again another way (with a reflected shift register) and compares.
//
// # Conventions
//
// P(x) = x^32 + 0x1EDC6F41, the Castagnoli polynomial (RFC 3720 12.1). The
// message is a polynomial whose first bit on the wire (bit 0 of the first
// octet, as the reflected CRC reads it) is the highest power. A 16-octet
// block that a little-endian load puts into a 128-bit register therefore
// has register bit k standing for x^(127-k): qword 0 (octets 0..7) is the
// high half A, qword 1 (octets 8..15) the low half B.
//
// A constant K of degree at most 32 is stored "reflected in 33 bits": bit j
// of its 64-bit word stands for x^(32-j). PCLMULQDQ of a data qword (bit i
// for x^(63-i)) with such a word gives a product whose bit k stands for
// x^(95-k). Read in the 128-bit block convention that bit stands for
// x^(127-k), so the product is A*K*x^32.
//
// # Folding a block forward by d bits
//
// The block V = A*x^64 + B, followed by d more bits of message, contributes
// V*x^d = A*x^(64+d) + B*x^d. With KA = x^(d+32) mod P and KB = x^(d-32)
// mod P the two products A*KA*x^32 and B*KB*x^32 are congruent to those
// two terms mod P and have degree < 128, so their XOR is a 128-bit block
// that can be XORed into the block d bits later. Each distance d has its
// pair {KA, KB}, KA in qword 0 and KB in qword 1, so one PCLMULQDQ with
// immediate 0x00 and one with 0x11 do both halves.
//
// # Reducing the last block to 32 bits
//
// The CRC register is V*x^32 mod P for the last block V (everything before
// it has been folded into it, the initial register XORed into its first 32
// bits).
//
//  1. T = clmul(A, x^96 mod P) XOR B: a 96-bit value, bit k for x^(95-k),
//     congruent to A*x^96 + B*x^32 = V*x^32.
//  2. With C = T's bits 0..31 (the coefficients of x^95..x^64) and E = T>>32,
//     U = clmul(C, x^64 mod P) XOR E: 64 bits, bit k for x^(63-k).
//  3. Barrett: mu = floor(x^64 / P) (degree 32). q = bits 0..31 of
//     clmul(U mod 2^32, mu), which is floor(floor(U/x^32)*mu / x^32) =
//     floor(U/P); the remainder U + q*P has degree < 32 and sits in bits
//     32..63 of clmul(q, P) XOR U, bit k for x^(63-k): that is exactly the
//     hash/crc32 register (bit i for x^(31-i)).
//
// # Folding side by side with the CRC32 instruction
//
// On AMD Zen 3 the 256-bit VPCLMULQDQ folds 8 octets a cycle, no faster
// than the CRC32 instruction, but the two run on different units. So a
// "round" folds 128 octets and feeds 32 octets to each of four CRC32
// streams. For n rounds the buffer is F || S1 || S2 || S3 || S4: F is
// folded (its first 128n octets side by side with the streams, then any
// rest alone) and each Si is 32n octets that the CRC32 instruction reads
// from a zero register, giving ri = Si*x^32 mod P. With V the last folded
// block of F, the register for the whole buffer is
//
//	V*x^32*x^(1024n) + r1*x^(768n) + r2*x^(512n) + r3*x^(256n) + r4.
//
// So V is folded by d = 1024n bits as above (x^(1024n+32), x^(1024n-32)).
// A register r in the low 32 bits of a qword is r*x^32 in data form, and
// PCLMULQDQ with the constant x^(e-96) mod P gives a block Z = r*K*x^64
// with Z*x^32 = r*x^e mod P: so r1, r2, r3 take x^(768n-96), x^(512n-96)
// and x^(256n-96). r4 is XORed into the reduced register. These
// constants depend on n, hence a row of hybridConsts for each n up to
// hybridMax; longer buffers take several calls.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
)

const poly = 0x1EDC6F41 // x^32 + this, not reflected

// xnmod returns x^n mod P in the normal domain (bit i for x^i).
func xnmod(n int) uint32 {
	r := uint32(1) // x^0
	for ; n > 0; n-- {
		top := r & 0x80000000
		r <<= 1
		if top != 0 {
			r ^= poly
		}
	}
	return r
}

// mu returns floor(x^64 / P), degree 32, in the normal domain.
func mu() uint64 {
	// Long division of x^64 by P (33 bits: 1<<32 | poly).
	const p33 = 1<<32 | poly
	var q uint64
	rem := [2]uint64{0, 1} // rem[1] bit 0 is x^64
	// Work on a 65-bit remainder: hi bit (x^64) in rem[1], the rest in rem[0].
	for deg := 64; deg >= 32; deg-- {
		var set bool
		if deg == 64 {
			set = rem[1]&1 != 0
		} else {
			set = rem[0]>>uint(deg)&1 != 0
		}
		if !set {
			continue
		}
		q |= 1 << uint(deg-32)
		// rem ^= P << (deg-32)
		sh := uint(deg - 32)
		lo := uint64(p33) << sh
		rem[0] ^= lo
		if sh > 31 { // bits of p33<<sh past bit 63
			rem[1] ^= uint64(p33) >> (64 - sh)
		}
	}
	if rem[1] != 0 || rem[0]>>32 != 0 {
		log.Fatalf("mu: remainder %#x %#x has degree >= 32", rem[1], rem[0])
	}
	return q
}

// refl33 reflects a polynomial of degree <= 32 (normal domain) into the
// 33-bit form: bit j for x^(32-j).
func refl33(v uint64) uint64 {
	var r uint64
	for i := 0; i <= 32; i++ {
		if v>>uint(i)&1 != 0 {
			r |= 1 << uint(32-i)
		}
	}
	return r
}

func main() {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gen_consts.go; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package crc32c\n\n")
	fmt.Fprintf(&b, "// clmulConsts holds the constants of the carry-less-multiply path, each\n")
	fmt.Fprintf(&b, "// reflected in 33 bits (bit j for x^(32-j)); see gen_consts.go for the\n")
	fmt.Fprintf(&b, "// derivation. crc32c_amd64.s reads it at the byte offsets in the comments.\n")
	fmt.Fprintf(&b, "var clmulConsts = [...]uint64{\n")
	off := 0
	for _, d := range foldDistances {
		fmt.Fprintf(&b, "\t0x%09x, 0x%09x, // %3d: fold by %d bits: x^%d, x^%d mod P\n",
			refl33(uint64(xnmod(d+32))), refl33(uint64(xnmod(d-32))), off, d, d+32, d-32)
		off += 16
	}
	fmt.Fprintf(&b, "\t0x%09x, 0x%09x, // %3d: reduce: x^96, x^64 mod P\n",
		refl33(uint64(xnmod(96))), refl33(uint64(xnmod(64))), off)
	off += 16
	fmt.Fprintf(&b, "\t0x%09x, 0x%09x, // %3d: Barrett: floor(x^64/P), P\n",
		refl33(mu()), refl33(1<<32|poly), off)
	off += 16
	fmt.Fprintf(&b, "\t0x%09x, 0x%09x, // %3d: mask of the low 32 bits\n", 0xffffffff, 0, off)
	fmt.Fprintf(&b, "}\n\n")

	fmt.Fprintf(&b, "// hybridMax is the most 256-octet rounds one call of the hybrid path\n")
	fmt.Fprintf(&b, "// (CRC32 instruction and folding side by side) makes.\n")
	fmt.Fprintf(&b, "const hybridMax = %d\n\n", hybridMax)
	fmt.Fprintf(&b, "// hybridConsts[n] joins the five parts of n hybrid rounds (see\n")
	fmt.Fprintf(&b, "// gen_consts.go): x^(1024n+32), x^(1024n-32) fold the folded part over\n")
	fmt.Fprintf(&b, "// the four CRC32 streams; x^(768n-96), x^(512n-96), x^(256n-96) place\n")
	fmt.Fprintf(&b, "// the first three streams' registers. Row 0 is unused; each row is padded\n")
	fmt.Fprintf(&b, "// to 48 octets.\n")
	fmt.Fprintf(&b, "var hybridConsts = [hybridMax + 1][6]uint64{\n")
	fmt.Fprintf(&b, "\t{},\n")
	for n := 1; n <= hybridMax; n++ {
		fmt.Fprintf(&b, "\t{0x%09x, 0x%09x, 0x%09x, 0x%09x, 0x%09x, 0}, // %d\n",
			refl33(uint64(xnmod(1024*n+32))), refl33(uint64(xnmod(1024*n-32))),
			refl33(uint64(xnmod(768*n-96))), refl33(uint64(xnmod(512*n-96))),
			refl33(uint64(xnmod(256*n-96))), n)
	}
	fmt.Fprintf(&b, "}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("consts.go", src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// hybridMax bounds the rounds of one hybrid call: hybridConsts has a row
// for each round count up to it. With 64 rounds (streams 2 KiB apart) or
// 128 or 256 the hybrid loop ran 15-45% slower on Zen 3, apparently a
// cache-aliasing effect of the five power-of-two-spaced read streams; 32
// to 63 ran at full speed, and 48 leaves a margin.
const hybridMax = 48

// foldDistances are the distances in bits that the assembly folds by, in
// table order: the main loop (4 YMM accumulators, 128 octets apart), the
// reduction of those four to one (96, 64 and 32 octets), the 32-octet loop
// (256 bits again), and the two 128-bit halves of a YMM register.
var foldDistances = []int{1024, 768, 512, 256, 128}
