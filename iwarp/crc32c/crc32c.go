// Package crc32c computes the CRC32c (Castagnoli) check value that MPA
// carries at the end of every FPDU (RFC 5044 4.4), the same CRC as iSCSI's
// header and data digests (RFC 3720 12.1 and appendix B.4).
//
// The value is the usual reflected CRC: polynomial 0x1EDC6F41 (reflected
// 0x82F63B78), initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF. On the wire
// MPA sends it least significant octet first (see AppendWire).
//
// Besides the plain checksum the package combines the CRCs of two adjacent
// pieces without touching their bytes again (Combine), which lets a sender
// compute the CRC of header, payload and markers separately and lets a
// receiver resume a CRC across TCP segments.
package crc32c

import (
	"encoding/binary"
	"hash/crc32"
)

//go:generate go run gen_consts.go

// Table is the Castagnoli table; hash/crc32 uses the CPU's CRC32
// instruction for it where there is one.
//
// On amd64 CPUs with AVX2 and VPCLMULQDQ, Update and Checksum take buffers
// of clmulThreshold octets and more down a faster path instead: carry-less
// multiply folding side by side with the CRC32 instruction
// (crc32c_amd64.s). It gives the same values; build with the purego tag to
// leave it out.
var Table = crc32.MakeTable(crc32.Castagnoli)

// Size is the length of a CRC32c value on the wire.
const Size = 4

// Checksum returns the CRC32c of b.
func Checksum(b []byte) uint32 { return update(0, b) }

// Update returns the CRC32c of the concatenation of the bytes that gave crc
// and b. Update(0, b) == Checksum(b).
func Update(crc uint32, b []byte) uint32 { return update(crc, b) }

// AppendWire appends crc in MPA wire order: least significant octet first
// (RFC 5044 4.4 through RFC 3720 12.1; see ../shared/spec/NOTES.md).
func AppendWire(dst []byte, crc uint32) []byte { return binary.LittleEndian.AppendUint32(dst, crc) }

// PutWire writes crc into b[:4] in MPA wire order.
func PutWire(b []byte, crc uint32) { binary.LittleEndian.PutUint32(b, crc) }

// Wire reads a CRC written in MPA wire order from b[:4].
func Wire(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// Combine returns the CRC32c of A||B given crcA = Checksum(A),
// crcB = Checksum(B) and lenB = len(B). It costs O(log lenB) 32x32 GF(2)
// matrix operations and no data access.
//
// The pre- and post-conditioning (init and final XOR of 0xFFFFFFFF) cancel
// out in this form: with raw register states, crc(A||B) = shift(crcA, lenB)
// XOR crcB, where shift advances a register over lenB zero octets.
func Combine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	return ShiftZeros(crcA, lenB) ^ crcB
}

// ShiftZeros returns the register obtained by running the raw CRC32c
// register crc over n zero octets, with no conditioning. This is the
// linear map that Combine and the hardware's resumable CRC use.
func ShiftZeros(crc uint32, n int64) uint32 {
	// odd is the operator for one zero bit; square it up to one octet
	// (8 bits), then apply the binary powers of n.
	var odd, even [32]uint32
	odd[0] = 0x82F63B78 // reflected polynomial
	row := uint32(1)
	for i := 1; i < 32; i++ {
		odd[i] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // 2 zero bits
	gf2Square(&odd, &even) // 4 zero bits
	for {
		gf2Square(&even, &odd) // 8, 32, 128, ... bits
		if n&1 != 0 {
			crc = gf2Times(&even, crc)
		}
		n >>= 1
		if n == 0 {
			break
		}
		gf2Square(&odd, &even)
		if n&1 != 0 {
			crc = gf2Times(&odd, crc)
		}
		n >>= 1
		if n == 0 {
			break
		}
	}
	return crc
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i++ {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
		vec >>= 1
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := 0; n < 32; n++ {
		square[n] = gf2Times(mat, mat[n])
	}
}
