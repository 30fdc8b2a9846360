//go:build !purego

package crc32c

import (
	"hash/crc32"

	"golang.org/x/sys/cpu"
)

// updateAVX2CLMUL is in crc32c_amd64.s: p is a folded part of
// len(p)-128*rounds octets (a multiple of 32, at least 128 and at least
// 128*rounds) followed by four streams of 32*rounds octets for the CRC32
// instruction. rounds is at most hybridMax.
//
//go:noescape
func updateAVX2CLMUL(crc uint32, p []byte, rounds int) uint32

// cpuid is in crc32c_amd64.s.
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

// hasVPCLMULQDQ reports CPUID.(EAX=7,ECX=0):ECX bit 10, the VEX/EVEX
// VPCLMULQDQ on YMM/ZMM registers. golang.org/x/sys/cpu reports it only as
// HasAVX512VPCLMULQDQ, and only on CPUs with AVX-512, but AMD Zen 3 and
// Intel's AVX2-only cores since Alder Lake have it without AVX-512.
func hasVPCLMULQDQ() bool {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 7 {
		return false
	}
	_, _, ecx, _ := cpuid(7, 0)
	return ecx&(1<<10) != 0
}

// hasCLMUL reports whether this CPU can run updateAVX2CLMUL: AVX2 (which
// x/sys/cpu sets only when the OS saves the YMM registers), PCLMULQDQ, the
// 256-bit VPCLMULQDQ, and SSE4.2 for the CRC32 instruction.
var hasCLMUL = cpu.X86.HasAVX2 && cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE42 && hasVPCLMULQDQ()

// useCLMUL selects the folding path for long buffers. Tests clear it to
// force hash/crc32 everywhere; building with the purego tag removes the
// assembly altogether.
var useCLMUL = hasCLMUL

// clmulThreshold is the shortest buffer that goes to the folding path (see
// BenchmarkThreshold). On an AMD Zen 3 (EPYC) the two paths take the same
// time at 128 octets, the folding path is about 9% faster at 160, 15% at
// 192 and 1.4x-1.6x at 256: its fixed cost is the final reduction, a chain
// of about ten dependent instructions. 192 leaves a margin for CPUs where
// that chain costs relatively more.
const clmulThreshold = 192

func update(crc uint32, p []byte) uint32 {
	if useCLMUL && len(p) >= clmulThreshold {
		return updateCLMUL(crc, p)
	}
	return crc32.Update(crc, Table, p)
}

// updateCLMUL is the folding path for any length: hash/crc32 below 128
// octets and for the last few octets (fewer than 32). The CPU must have
// hasCLMUL.
//
// Each call of the assembly covers up to hybridMax rounds of 256 octets:
// 128 folded and 32 in each of four CRC32 streams. The last call also
// folds what is left beyond whole rounds.
func updateCLMUL(crc uint32, p []byte) uint32 {
	for len(p) >= 128 {
		rounds := len(p) / 256
		n := len(p) &^ 31
		if rounds > hybridMax {
			rounds = hybridMax
			n = 256 * hybridMax
		}
		crc = updateAVX2CLMUL(crc, p[:n], rounds)
		p = p[n:]
	}
	if len(p) == 0 {
		return crc
	}
	return crc32.Update(crc, Table, p)
}
