//go:build !purego

#include "textflag.h"

// JOIN3 joins the three stream registers AX (a), BX (b) and CX (c) of a
// round into AX: CRC32(0, clmul(a, k2) ^ clmul(b, k1)) ^ c. The registers
// were written as 32-bit values, so their upper halves are zero. Clobbers
// DX and X0-X3.
#define JOIN3(k1, k2) \
	MOVQ      AX, X0          \
	MOVQ      BX, X1          \
	MOVQ      k2, X2          \
	MOVQ      k1, X3          \
	PCLMULQDQ $0x00, X2, X0   \
	PCLMULQDQ $0x00, X3, X1   \
	PXOR      X1, X0          \
	MOVQ      X0, DX          \
	XORL      AX, AX          \
	CRC32Q    DX, AX          \
	XORL      CX, AX

// func crcCopy3(reg uint32, dst, src *byte, k int, k1, k2 uint64) uint32
//
// Three streams at src, src+k, src+2k; each step loads 32 bytes of every
// stream into vector registers for the copy and feeds the same 32 bytes to
// that stream's CRC register as four 8-byte words. Then
// result = CRC32(0, clmul(a, k2) ^ clmul(b, k1)) ^ c.
TEXT ·crcCopy3(SB), NOSPLIT, $0-52
	MOVL reg+0(FP), AX
	XORL BX, BX
	XORL CX, CX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ k+24(FP), DX
	LEAQ (SI)(DX*1), R8   // src of stream b
	LEAQ (R8)(DX*1), R9   // src of stream c
	LEAQ (DI)(DX*1), R10  // dst of stream b
	LEAQ (R10)(DX*1), R11 // dst of stream c
	XORQ R12, R12         // index into every stream

loop3:
	MOVOU (SI)(R12*1), X0
	MOVOU 16(SI)(R12*1), X1
	MOVOU (R8)(R12*1), X2
	MOVOU 16(R8)(R12*1), X3
	MOVOU (R9)(R12*1), X4
	MOVOU 16(R9)(R12*1), X5
	CRC32Q (SI)(R12*1), AX
	CRC32Q (R8)(R12*1), BX
	CRC32Q (R9)(R12*1), CX
	CRC32Q 8(SI)(R12*1), AX
	CRC32Q 8(R8)(R12*1), BX
	CRC32Q 8(R9)(R12*1), CX
	MOVOU X0, (DI)(R12*1)
	MOVOU X2, (R10)(R12*1)
	MOVOU X4, (R11)(R12*1)
	CRC32Q 16(SI)(R12*1), AX
	CRC32Q 16(R8)(R12*1), BX
	CRC32Q 16(R9)(R12*1), CX
	CRC32Q 24(SI)(R12*1), AX
	CRC32Q 24(R8)(R12*1), BX
	CRC32Q 24(R9)(R12*1), CX
	MOVOU X1, 16(DI)(R12*1)
	MOVOU X3, 16(R10)(R12*1)
	MOVOU X5, 16(R11)(R12*1)
	ADDQ $32, R12
	CMPQ R12, DX
	JB   loop3

	JOIN3(k1+32(FP), k2+40(FP))
	MOVL AX, ret+48(FP)
	RET

// func crc3(reg uint32, p *byte, k int, k1, k2 uint64) uint32
//
// crcCopy3 without the copy: three streams at p, p+k, p+2k, four 8-byte
// words of every stream a step, joined the same way.
TEXT ·crc3(SB), NOSPLIT, $0-44
	MOVL reg+0(FP), AX
	XORL BX, BX
	XORL CX, CX
	MOVQ p+8(FP), SI
	MOVQ k+16(FP), DX
	LEAQ (SI)(DX*1), R8 // stream b
	LEAQ (R8)(DX*1), R9 // stream c
	XORQ R12, R12       // index into every stream

loop3n:
	CRC32Q (SI)(R12*1), AX
	CRC32Q (R8)(R12*1), BX
	CRC32Q (R9)(R12*1), CX
	CRC32Q 8(SI)(R12*1), AX
	CRC32Q 8(R8)(R12*1), BX
	CRC32Q 8(R9)(R12*1), CX
	CRC32Q 16(SI)(R12*1), AX
	CRC32Q 16(R8)(R12*1), BX
	CRC32Q 16(R9)(R12*1), CX
	CRC32Q 24(SI)(R12*1), AX
	CRC32Q 24(R8)(R12*1), BX
	CRC32Q 24(R9)(R12*1), CX
	ADDQ $32, R12
	CMPQ R12, DX
	JB   loop3n

	JOIN3(k1+24(FP), k2+32(FP))
	MOVL AX, ret+40(FP)
	RET

// func crcCopy1(reg uint32, dst, src *byte, n int) uint32
TEXT ·crcCopy1(SB), NOSPLIT, $0-36
	MOVL reg+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	CMPQ CX, $8
	JB   bytes1

words1:
	MOVQ   (SI), DX
	CRC32Q (SI), AX
	MOVQ   DX, (DI)
	ADDQ   $8, SI
	ADDQ   $8, DI
	SUBQ   $8, CX
	CMPQ   CX, $8
	JAE    words1

bytes1:
	// Under 8 bytes left: one 4-, one 2- and one 1-byte step at most.
	TESTQ  $4, CX
	JZ     two1
	MOVL   (SI), DX
	CRC32L (SI), AX
	MOVL   DX, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DI

two1:
	TESTQ  $2, CX
	JZ     one1
	MOVW   (SI), DX
	CRC32W (SI), AX
	MOVW   DX, (DI)
	ADDQ   $2, SI
	ADDQ   $2, DI

one1:
	TESTQ  $1, CX
	JZ     done1
	MOVB   (SI), DX
	CRC32B (SI), AX
	MOVB   DX, (DI)

done1:
	MOVL AX, ret+32(FP)
	RET

// func patch8(crc uint32, delta uint64, c0, c1, c2, c3 uint32) uint32
TEXT ·patch8(SB), NOSPLIT, $0-36
	// BX = raw(0, delta)
	MOVQ   delta+8(FP), AX
	XORL   BX, BX
	CRC32Q AX, BX

	// X0 = c0·c1 (primed), X2 = c2·c3 (primed), in parallel
	MOVL      c0+16(FP), AX
	MOVL      c1+20(FP), CX
	MOVL      c2+24(FP), DX
	MOVL      c3+28(FP), SI
	MOVQ      AX, X0
	MOVQ      CX, X1
	MOVQ      DX, X2
	MOVQ      SI, X3
	PCLMULQDQ $0x00, X1, X0
	PCLMULQDQ $0x00, X3, X2
	MOVQ      X0, AX
	MOVQ      X2, DX
	XORL      CX, CX
	XORL      SI, SI
	CRC32Q    AX, CX
	CRC32Q    DX, SI

	// k = (c0·c1)·(c2·c3), primed
	MOVQ      CX, X0
	MOVQ      SI, X1
	PCLMULQDQ $0x00, X1, X0
	MOVQ      X0, AX
	XORL      CX, CX
	CRC32Q    AX, CX

	// zext = raw(0, delta)·k
	MOVQ      BX, X0
	MOVQ      CX, X1
	PCLMULQDQ $0x00, X1, X0
	MOVQ      X0, AX
	XORL      CX, CX
	CRC32Q    AX, CX
	XORL      crc+0(FP), CX
	MOVL      CX, ret+32(FP)
	RET
