//go:build !purego

#include "textflag.h"

// CRC32c by carry-less-multiply folding with VEX-encoded VPCLMULQDQ on YMM
// registers (AVX2 + VPCLMULQDQ), optionally side by side with four streams
// of the SSE4.2 CRC32 instruction, which runs on other execution units.
// The method and the constants are in gen_consts.go; modelUpdate in
// consts_test.go is a software model of this function, block for block.
//
// clmulConsts (consts.go) is read at these byte offsets:
//
//	  0: fold by 1024 bits    16: by 768    32: by 512    48: by 256
//	 64: fold by 128 bits     80: x^96, x^64 (128 -> 64 bits)
//	 96: Barrett mu, P       112: low-32-bit mask
//
// Each 128-bit pair is {K for qword 0, K for qword 1} of a data block, so
// PCLMULQDQ $0x00 and $0x11 with the same pair fold both halves.

#define FOLD(k, acc, tmp) \
	VPCLMULQDQ $0x00, k, acc, tmp \
	VPCLMULQDQ $0x11, k, acc, acc \
	VPXOR      tmp, acc, acc

// func updateAVX2CLMUL(crc uint32, p []byte, rounds int) uint32
//
// p is a folded part F of len(p)-128*rounds octets, a multiple of 32 and
// at least max(128, 128*rounds), followed by four streams S1..S4 of
// 32*rounds octets each, which the CRC32 instruction reads while the first
// 128*rounds octets of F are folded. crc and the result are in
// hash/crc32.Update's convention.
TEXT ·updateAVX2CLMUL(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ rounds+32(FP), R8
	LEAQ ·clmulConsts(SB), DX
	NOTL AX                      // the raw register

	MOVQ R8, BX
	SHLQ $5, BX                  // BX = 32*rounds, the stream stride
	LEAQ (BX)(BX*2), R9          // R9 = 3*stride
	MOVQ BX, R10
	SHLQ $2, R10
	SUBQ R10, CX                 // CX = len(F)
	LEAQ (SI)(CX*1), DI          // DI = S1
	XORL R10, R10                // the streams' raw registers
	XORL R11, R11
	XORL R12, R12
	XORL R13, R13

	// Four accumulators of 32 octets; the raw register goes into the first
	// 32 bits of the message.
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVD   AX, X4               // zeroes the rest of Y4
	VPXOR   Y4, Y0, Y0
	ADDQ    $128, SI
	SUBQ    $128, CX
	VBROADCASTI128 0(DX), Y8     // fold by 1024 bits

	TESTQ R8, R8
	JZ    plain

	// Hybrid round 0: the streams' first 32 octets.
	CRC32Q 0(DI), R10
	CRC32Q 0(DI)(BX*1), R11
	CRC32Q 0(DI)(BX*2), R12
	CRC32Q 0(DI)(R9*1), R13
	CRC32Q 8(DI), R10
	CRC32Q 8(DI)(BX*1), R11
	CRC32Q 8(DI)(BX*2), R12
	CRC32Q 8(DI)(R9*1), R13
	CRC32Q 16(DI), R10
	CRC32Q 16(DI)(BX*1), R11
	CRC32Q 16(DI)(BX*2), R12
	CRC32Q 16(DI)(R9*1), R13
	CRC32Q 24(DI), R10
	CRC32Q 24(DI)(BX*1), R11
	CRC32Q 24(DI)(BX*2), R12
	CRC32Q 24(DI)(R9*1), R13
	ADDQ   $32, DI
	DECQ   R8
	JZ     plain

hybrid:
	// 128 octets of F and 32 of each stream.
	VPCLMULQDQ $0x00, Y8, Y0, Y4
	CRC32Q     0(DI), R10
	VPCLMULQDQ $0x11, Y8, Y0, Y0
	CRC32Q     0(DI)(BX*1), R11
	VPCLMULQDQ $0x00, Y8, Y1, Y5
	CRC32Q     0(DI)(BX*2), R12
	VPCLMULQDQ $0x11, Y8, Y1, Y1
	CRC32Q     0(DI)(R9*1), R13
	VPCLMULQDQ $0x00, Y8, Y2, Y6
	CRC32Q     8(DI), R10
	VPCLMULQDQ $0x11, Y8, Y2, Y2
	CRC32Q     8(DI)(BX*1), R11
	VPCLMULQDQ $0x00, Y8, Y3, Y7
	CRC32Q     8(DI)(BX*2), R12
	VPCLMULQDQ $0x11, Y8, Y3, Y3
	CRC32Q     8(DI)(R9*1), R13
	VPXOR      0(SI), Y4, Y4
	CRC32Q     16(DI), R10
	VPXOR      32(SI), Y5, Y5
	CRC32Q     16(DI)(BX*1), R11
	VPXOR      64(SI), Y6, Y6
	CRC32Q     16(DI)(BX*2), R12
	VPXOR      96(SI), Y7, Y7
	CRC32Q     16(DI)(R9*1), R13
	VPXOR      Y4, Y0, Y0
	CRC32Q     24(DI), R10
	VPXOR      Y5, Y1, Y1
	CRC32Q     24(DI)(BX*1), R11
	VPXOR      Y6, Y2, Y2
	CRC32Q     24(DI)(BX*2), R12
	VPXOR      Y7, Y3, Y3
	CRC32Q     24(DI)(R9*1), R13
	ADDQ       $128, SI
	SUBQ       $128, CX
	ADDQ       $32, DI
	DECQ       R8
	JNZ        hybrid

plain:
	// The rest of F: 128 octets at a time, then 32.
	CMPQ CX, $128
	JB   fold4

loop128:
	VPCLMULQDQ $0x00, Y8, Y0, Y4
	VPCLMULQDQ $0x11, Y8, Y0, Y0
	VPCLMULQDQ $0x00, Y8, Y1, Y5
	VPCLMULQDQ $0x11, Y8, Y1, Y1
	VPCLMULQDQ $0x00, Y8, Y2, Y6
	VPCLMULQDQ $0x11, Y8, Y2, Y2
	VPCLMULQDQ $0x00, Y8, Y3, Y7
	VPCLMULQDQ $0x11, Y8, Y3, Y3
	VPXOR      0(SI), Y4, Y4
	VPXOR      32(SI), Y5, Y5
	VPXOR      64(SI), Y6, Y6
	VPXOR      96(SI), Y7, Y7
	VPXOR      Y4, Y0, Y0
	VPXOR      Y5, Y1, Y1
	VPXOR      Y6, Y2, Y2
	VPXOR      Y7, Y3, Y3
	ADDQ       $128, SI
	SUBQ       $128, CX
	CMPQ       CX, $128
	JAE        loop128

fold4:
	// Y0 is 96 octets before Y3, Y1 64, Y2 32: fold all three onto Y3.
	VBROADCASTI128 16(DX), Y8    // 768 bits
	VBROADCASTI128 32(DX), Y9    // 512 bits
	VBROADCASTI128 48(DX), Y10   // 256 bits
	FOLD(Y8, Y0, Y4)
	FOLD(Y9, Y1, Y5)
	FOLD(Y10, Y2, Y6)
	VPXOR Y1, Y0, Y0
	VPXOR Y2, Y3, Y3
	VPXOR Y3, Y0, Y0

	// What is left of F is a multiple of 32 octets, less than 128.
	TESTQ CX, CX
	JZ    fold2

loop32:
	FOLD(Y10, Y0, Y4)
	VPXOR 0(SI), Y0, Y0
	ADDQ  $32, SI
	SUBQ  $32, CX
	JNZ   loop32

fold2:
	// The low lane is 128 bits before the high lane.
	VEXTRACTI128 $1, Y0, X1
	VMOVDQU      64(DX), X8
	FOLD(X8, X0, X4)
	VPXOR        X1, X0, X0

	// X0 is now the last block of F. With streams, fold it over them by
	// 1024*rounds bits and add the first three streams' registers where
	// they stand; the fourth is added after the reduction.
	MOVQ  rounds+32(FP), R8
	TESTQ R8, R8
	JZ    reduce
	LEAQ  (R8)(R8*2), R8
	SHLQ  $4, R8                 // 48*rounds
	LEAQ  ·hybridConsts(SB), AX
	ADDQ  R8, AX
	VMOVDQU    0(AX), X8         // x^(1024n+32), x^(1024n-32)
	FOLD(X8, X0, X4)
	VMOVQ      R10, X1
	VPINSRQ    $1, R11, X1, X1
	VMOVDQU    16(AX), X8        // x^(768n-96), x^(512n-96)
	VPCLMULQDQ $0x00, X8, X1, X4
	VPCLMULQDQ $0x11, X8, X1, X1
	VPXOR      X4, X0, X0
	VPXOR      X1, X0, X0
	VMOVQ      R12, X1
	VMOVDQU    32(AX), X8        // x^(256n-96), 0
	VPCLMULQDQ $0x00, X8, X1, X1
	VPXOR      X1, X0, X0

reduce:
	// 128 -> 32 bits; the steps are numbered as in gen_consts.go.
	VMOVDQU 80(DX), X8           // x^96, x^64
	VMOVDQU 96(DX), X9           // mu, P
	VMOVDQU 112(DX), X10         // low-32-bit mask

	// 1. T = A*(x^96 mod P) ^ B
	VPCLMULQDQ $0x00, X8, X0, X1
	VPSRLDQ    $8, X0, X0
	VPXOR      X1, X0, X0

	// 2. U = C*(x^64 mod P) ^ T>>32, C = T's low 32 bits
	VPAND      X10, X0, X1
	VPSRLDQ    $4, X0, X0
	VPCLMULQDQ $0x10, X8, X1, X1 // qword 0 of X1, qword 1 of X8
	VPXOR      X1, X0, X0

	// 3. Barrett: q = low 32 bits of (U's low 32 bits)*mu; R = (q*P ^ U)>>32
	VPAND      X10, X0, X1
	VPCLMULQDQ $0x00, X9, X1, X1
	VPAND      X10, X1, X1
	VPCLMULQDQ $0x10, X9, X1, X1 // qword 0 of X1, qword 1 of X9
	VPXOR      X1, X0, X0
	VPEXTRD    $1, X0, AX

	XORL       R13, AX           // the fourth stream (0 without streams)
	NOTL       AX
	VZEROUPPER
	MOVL       AX, ret+40(FP)
	RET

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
