//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// Design note: CRC-32C by carry-less-multiply folding.
//
// Notation as in crcmul.go: a reflected polynomial stores the coefficient of
// the highest power in the lowest bit. Sixteen message bytes loaded
// little-endian into a 128-bit lane are the polynomial A = L·x^64 + H, where
// L (the low quadword, the earlier bytes) and H (the high quadword) are
// reflected 64-bit polynomials. The raw CRC of a message M is M·x^32 mod P,
// so any value congruent to M modulo P may stand in for it.
//
// Folding. If lane A lies D bits before lane B (D counted between the ends of
// the two lanes), the message holds A·x^D + B, and
//
//	A·x^D = L·x^(D+64) + H·x^D ≡ L·(x^(D+64) mod P) + H·(x^D mod P)
//
// which is 96 bits wide at most: it fits in a lane and is XORed into B. One
// VPCLMULQDQ of two reflected 64-bit operands, read back as a reflected
// 128-bit lane, is their product times x; a 32-bit register r zero-extended
// to 64 bits, read as a reflected 64-bit operand, is r·x^32. The constant of
// a fold over D bits is therefore the pair of registers
//
//	k(D) = (x^(D+31) mod P, x^(D-33) mod P)     (low quadword, high quadword)
//
// used as VPCLMULQDQ $0x00 (L times the low constant) and $0x11 (H times the
// high one). crcfold_test.go recomputes every entry of foldK<> from the
// polynomial with pure-Go carry-less arithmetic (xPowMod) and compares.
//
// The 512-bit kernel keeps four ZMM accumulators, 16 lanes, 256 bytes a
// round: every lane folds over D = 2048 bits onto the lane 256 bytes later;
// the rounds are independent multiply chains, so the multiplier's latency is
// hidden. At the end the four accumulators fold into one (D = 512, serially),
// single 64-byte blocks fold in the same way, and the four lanes of the last
// accumulator fold into its last lane with per-lane constants k(384), k(256),
// k(128) and zero (the last lane stays as it is). Under four blocks (64 to
// 255 bytes, Checksum only) crcFold512 starts with one accumulator and goes
// straight to the single blocks. The 256-bit kernel is the
// same with four YMM accumulators: 128 bytes a round (D = 1024), 32-byte
// blocks (D = 256), two lanes (k(128), zero). It uses VEX encodings only.
//
// No Barrett reduction: the remaining 128-bit lane X stands for the message
// so far, so the CRC32 instruction over X's 16 bytes from register 0, then
// over the last bytes (fewer than one block), is the raw CRC of the whole.
// The caller's register enters XORed into the first four message bytes.
//
// Alignment: from foldAlignMin bytes on, the 512-bit kernels first run the
// CRC32 instruction over the bytes up to the next 64-byte boundary of the
// source (crcFold512) or destination (crcFoldCopy512), at most 63, and fold
// from there with the register that leaves: every vector load, or store, is
// then aligned, and a split one costs two. The constants do not change: the
// fold distances are counted from the first folded byte.
//
// foldK<>: k(2048) at 0, k(512) at 16, the lane constants of the 512-bit
// reduction [k(384), k(256), k(128), 0] at 32; the 256-bit kernel takes
// k(256) from 48 and its lane constants [k(128), 0] from 64; k(1024) at 96.
DATA foldK<>+0(SB)/8, $0x00000000dcb17aa4   // k(2048)
DATA foldK<>+8(SB)/8, $0x00000000b9e02b86
DATA foldK<>+16(SB)/8, $0x00000000740eef02  // k(512)
DATA foldK<>+24(SB)/8, $0x000000009e4addf8
DATA foldK<>+32(SB)/8, $0x000000001c291d04  // k(384)
DATA foldK<>+40(SB)/8, $0x00000000ddc0152b
DATA foldK<>+48(SB)/8, $0x000000003da6d0cb  // k(256)
DATA foldK<>+56(SB)/8, $0x00000000ba4fc28e
DATA foldK<>+64(SB)/8, $0x00000000f20c0dfe  // k(128)
DATA foldK<>+72(SB)/8, $0x00000000493c7d27
DATA foldK<>+80(SB)/8, $0
DATA foldK<>+88(SB)/8, $0
DATA foldK<>+96(SB)/8, $0x000000006992cea2  // k(1024)
DATA foldK<>+104(SB)/8, $0x000000000d3b6092
GLOBL foldK<>(SB), RODATA|NOPTR, $112

// func foldTable() *[14]uint64
TEXT ·foldTable(SB), NOSPLIT, $0-8
	LEAQ foldK<>(SB), AX
	MOVQ AX, ret+0(FP)
	RET

// FOLD512 folds accumulator acc over the distance of constant k onto data:
// acc = clmul_lo(acc, k) ^ clmul_hi(acc, k) ^ data, t is scratch.
#define FOLD512(k, data, acc, t) \
	VPCLMULQDQ $0x00, k, acc, t   \
	VPCLMULQDQ $0x11, k, acc, acc \
	VPTERNLOGD $0x96, t, data, acc

// COPYROUND512 is one 256-byte round of crcFoldCopy512's main loop: four
// 64-byte blocks loaded from SI, folded into Z0..Z3 with the constants in
// Z8, stored to DI; both pointers advance, CX counts down, and the flags
// are those of CX against 256 for the loop's branch.
#define COPYROUND512 \
	VMOVDQU64 (SI), Z4       \
	VMOVDQU64 64(SI), Z5     \
	VMOVDQU64 128(SI), Z6    \
	VMOVDQU64 192(SI), Z7    \
	FOLD512(Z8, Z4, Z0, Z9)  \
	FOLD512(Z8, Z5, Z1, Z10) \
	FOLD512(Z8, Z6, Z2, Z11) \
	FOLD512(Z8, Z7, Z3, Z12) \
	VMOVDQU64 Z4, (DI)       \
	VMOVDQU64 Z5, 64(DI)     \
	VMOVDQU64 Z6, 128(DI)    \
	VMOVDQU64 Z7, 192(DI)    \
	ADDQ      $256, DI       \
	ADDQ      $256, SI       \
	SUBQ      $256, CX       \
	CMPQ      CX, $256

// FOLD256 is FOLD512 on YMM registers in VEX encodings.
#define FOLD256(k, data, acc, t) \
	VPCLMULQDQ $0x00, k, acc, t   \
	VPCLMULQDQ $0x11, k, acc, acc \
	VPXOR      t, acc, acc        \
	VPXOR      data, acc, acc

// func crcFold512(reg uint32, p *byte, n int) uint32
//
// The raw CRC-32C register after the n ≥ 64 bytes at p, started from reg.
TEXT ·crcFold512(SB), NOSPLIT, $0-28
	MOVL reg+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX

	// From foldAlignMin bytes on, the bytes up to the next 64-byte boundary
	// go through the CRC32 instruction first, so that every vector load is
	// aligned: a load that splits two cache lines costs two.
	CMPQ    CX, $const_foldAlignMin
	JB      p512start
	MOVQ    SI, DX
	NEGQ    DX
	ANDQ    $63, DX
	SUBQ    DX, CX

p512h1:
	TESTQ   $1, SI
	JZ      p512h2
	CRC32B  (SI), AX
	ADDQ    $1, SI

p512h2:
	TESTQ   $2, SI
	JZ      p512h4
	CRC32W  (SI), AX
	ADDQ    $2, SI

p512h4:
	TESTQ   $4, SI
	JZ      p512h8
	CRC32L  (SI), AX
	ADDQ    $4, SI

p512h8:
	TESTQ   $63, SI
	JZ      p512start
	CRC32Q  (SI), AX
	ADDQ    $8, SI
	JMP     p512h8

p512start:
	CMPQ      CX, $256
	JAE       p512four

	// Fewer than four blocks: one accumulator, block by block.
	VMOVD     AX, X4
	VMOVDQU64 (SI), Z0
	VPXORQ    Z4, Z0, Z0
	ADDQ      $64, SI
	SUBQ      $64, CX
	VBROADCASTI32X4 foldK<>+16(SB), Z8
	JMP       p512block

p512four:
	VMOVD     AX, X4
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPXORQ    Z4, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX
	VBROADCASTI32X4 foldK<>+0(SB), Z8
	CMPQ      CX, $256
	JB        p512fold4

p512loop:
	VMOVDQU64 (SI), Z4
	VMOVDQU64 64(SI), Z5
	VMOVDQU64 128(SI), Z6
	VMOVDQU64 192(SI), Z7
	FOLD512(Z8, Z4, Z0, Z9)
	FOLD512(Z8, Z5, Z1, Z10)
	FOLD512(Z8, Z6, Z2, Z11)
	FOLD512(Z8, Z7, Z3, Z12)
	ADDQ      $256, SI
	SUBQ      $256, CX
	CMPQ      CX, $256
	JAE       p512loop

p512fold4:
	// Four accumulators into Z0, each 64 bytes before the next.
	VBROADCASTI32X4 foldK<>+16(SB), Z8
	FOLD512(Z8, Z1, Z0, Z9)
	FOLD512(Z8, Z2, Z0, Z9)
	FOLD512(Z8, Z3, Z0, Z9)

p512block:
	CMPQ      CX, $64
	JB        p512reduce
	VMOVDQU64 (SI), Z4
	FOLD512(Z8, Z4, Z0, Z9)
	ADDQ      $64, SI
	SUBQ      $64, CX
	JMP       p512block

p512reduce:
	// Lanes 0..2 over 384, 256 and 128 bits onto lane 3, then the CRC32
	// instruction over the 16 bytes left.
	VMOVDQU64     foldK<>+32(SB), Z8
	VPCLMULQDQ    $0x00, Z8, Z0, Z9
	VPCLMULQDQ    $0x11, Z8, Z0, Z10
	VEXTRACTI32X4 $3, Z0, X11
	VPTERNLOGD    $0x96, Z11, Z10, Z9
	VEXTRACTI64X4 $1, Z9, Y10
	VPXOR         Y10, Y9, Y9
	VEXTRACTI128  $1, Y9, X10
	VPXOR         X10, X9, X9
	VMOVQ         X9, DX
	VPEXTRQ       $1, X9, BX
	VZEROUPPER
	XORL          AX, AX
	CRC32Q        DX, AX
	CRC32Q        BX, AX

	// The last CX < block bytes: 8 at a time, then 4, 2, 1.
p512t8:
	CMPQ    CX, $8
	JB      p512t4
	MOVQ    (SI), DX
	CRC32Q  DX, AX
	ADDQ    $8, SI
	SUBQ    $8, CX
	JMP     p512t8

p512t4:
	TESTQ   $4, CX
	JZ      p512t2
	MOVL    (SI), DX
	CRC32L  DX, AX
	ADDQ    $4, SI

p512t2:
	TESTQ   $2, CX
	JZ      p512t1
	MOVWLZX (SI), DX
	CRC32W  DX, AX
	ADDQ    $2, SI

p512t1:
	TESTQ   $1, CX
	JZ      p512tdone
	MOVBLZX (SI), DX
	CRC32B  DX, AX

p512tdone:
	MOVL    AX, ret+24(FP)
	RET

// func crcFoldCopy512(reg uint32, dst, src *byte, n int, own bool) uint32
//
// crcFold512 over the n ≥ 256 bytes at src that also copies them to dst:
// every vector is stored as it is loaded. With own, each 256-byte round
// first asks for the four destination lines 1 KiB ahead (PREFETCHW, which
// the assembler does not know: 0F 0D /1 with a 32-bit displacement from
// DI), so that their reads for ownership overlap the folding instead of
// stalling the stores; for a destination not in L1, such as a log's next
// bytes. A prefetch never faults, so the last rounds' reach past dst is
// harmless.
TEXT ·crcFoldCopy512(SB), NOSPLIT, $0-44
	MOVL reg+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX

	// From foldAlignMin bytes on, the bytes up to the next 64-byte boundary
	// of dst go through the CRC32 instruction first, so that every vector
	// store is aligned: a store that splits two cache lines costs two.
	CMPQ    CX, $const_foldAlignMin
	JB      c512start
	MOVQ    DI, DX
	NEGQ    DX
	ANDQ    $63, DX
	SUBQ    DX, CX

c512h1:
	TESTQ   $1, DI
	JZ      c512h2
	MOVBLZX (SI), DX
	CRC32B  DX, AX
	MOVB    DX, (DI)
	ADDQ    $1, SI
	ADDQ    $1, DI

c512h2:
	TESTQ   $2, DI
	JZ      c512h4
	MOVWLZX (SI), DX
	CRC32W  DX, AX
	MOVW    DX, (DI)
	ADDQ    $2, SI
	ADDQ    $2, DI

c512h4:
	TESTQ   $4, DI
	JZ      c512h8
	MOVL    (SI), DX
	CRC32L  DX, AX
	MOVL    DX, (DI)
	ADDQ    $4, SI
	ADDQ    $4, DI

c512h8:
	TESTQ   $63, DI
	JZ      c512start
	MOVQ    (SI), DX
	CRC32Q  DX, AX
	MOVQ    DX, (DI)
	ADDQ    $8, SI
	ADDQ    $8, DI
	JMP     c512h8

c512start:
	VMOVD     AX, X4
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	ADDQ      $256, DI
	VPXORQ    Z4, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX
	VBROADCASTI32X4 foldK<>+0(SB), Z8
	CMPQ      CX, $256
	JB        c512fold4
	CMPB      own+32(FP), $0
	JNE       c512loopw

c512loop:
	COPYROUND512
	JAE       c512loop
	JMP       c512fold4

c512loopw:
	BYTE $0x0F; BYTE $0x0D; BYTE $0x8F; LONG $1024 // PREFETCHW 1024(DI)
	BYTE $0x0F; BYTE $0x0D; BYTE $0x8F; LONG $1088 // PREFETCHW 1088(DI)
	BYTE $0x0F; BYTE $0x0D; BYTE $0x8F; LONG $1152 // PREFETCHW 1152(DI)
	BYTE $0x0F; BYTE $0x0D; BYTE $0x8F; LONG $1216 // PREFETCHW 1216(DI)
	COPYROUND512
	JAE       c512loopw

c512fold4:
	// Four accumulators into Z0, each 64 bytes before the next.
	VBROADCASTI32X4 foldK<>+16(SB), Z8
	FOLD512(Z8, Z1, Z0, Z9)
	FOLD512(Z8, Z2, Z0, Z9)
	FOLD512(Z8, Z3, Z0, Z9)

c512block:
	CMPQ      CX, $64
	JB        c512reduce
	VMOVDQU64 (SI), Z4
	VMOVDQU64 Z4, (DI)
	ADDQ      $64, DI
	FOLD512(Z8, Z4, Z0, Z9)
	ADDQ      $64, SI
	SUBQ      $64, CX
	JMP       c512block

c512reduce:
	// Lanes 0..2 over 384, 256 and 128 bits onto lane 3, then the CRC32
	// instruction over the 16 bytes left.
	VMOVDQU64     foldK<>+32(SB), Z8
	VPCLMULQDQ    $0x00, Z8, Z0, Z9
	VPCLMULQDQ    $0x11, Z8, Z0, Z10
	VEXTRACTI32X4 $3, Z0, X11
	VPTERNLOGD    $0x96, Z11, Z10, Z9
	VEXTRACTI64X4 $1, Z9, Y10
	VPXOR         Y10, Y9, Y9
	VEXTRACTI128  $1, Y9, X10
	VPXOR         X10, X9, X9
	VMOVQ         X9, DX
	VPEXTRQ       $1, X9, BX
	VZEROUPPER
	XORL          AX, AX
	CRC32Q        DX, AX
	CRC32Q        BX, AX

	// The last CX < block bytes: 8 at a time, then 4, 2, 1.
c512t8:
	CMPQ    CX, $8
	JB      c512t4
	MOVQ    (SI), DX
	CRC32Q  DX, AX
	MOVQ    DX, (DI)
	ADDQ    $8, DI
	ADDQ    $8, SI
	SUBQ    $8, CX
	JMP     c512t8

c512t4:
	TESTQ   $4, CX
	JZ      c512t2
	MOVL    (SI), DX
	CRC32L  DX, AX
	MOVL    DX, (DI)
	ADDQ    $4, DI
	ADDQ    $4, SI

c512t2:
	TESTQ   $2, CX
	JZ      c512t1
	MOVWLZX (SI), DX
	CRC32W  DX, AX
	MOVW    DX, (DI)
	ADDQ    $2, DI
	ADDQ    $2, SI

c512t1:
	TESTQ   $1, CX
	JZ      c512tdone
	MOVBLZX (SI), DX
	CRC32B  DX, AX
	MOVB    DX, (DI)

c512tdone:
	MOVL    AX, ret+40(FP)
	RET

// func crcFold256(reg uint32, p *byte, n int) uint32
//
// crcFold512 with YMM registers: the n ≥ 128 bytes at p.
TEXT ·crcFold256(SB), NOSPLIT, $0-28
	MOVL reg+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVD      AX, X4
	VMOVDQU    (SI), Y0
	VMOVDQU    32(SI), Y1
	VMOVDQU    64(SI), Y2
	VMOVDQU    96(SI), Y3
	VPXOR      Y4, Y0, Y0
	ADDQ       $128, SI
	SUBQ       $128, CX
	VBROADCASTI128 foldK<>+96(SB), Y8
	CMPQ       CX, $128
	JB         p256fold4

p256loop:
	VMOVDQU    (SI), Y4
	VMOVDQU    32(SI), Y5
	VMOVDQU    64(SI), Y6
	VMOVDQU    96(SI), Y7
	FOLD256(Y8, Y4, Y0, Y9)
	FOLD256(Y8, Y5, Y1, Y10)
	FOLD256(Y8, Y6, Y2, Y11)
	FOLD256(Y8, Y7, Y3, Y12)
	ADDQ       $128, SI
	SUBQ       $128, CX
	CMPQ       CX, $128
	JAE        p256loop

p256fold4:
	VBROADCASTI128 foldK<>+48(SB), Y8
	FOLD256(Y8, Y1, Y0, Y9)
	FOLD256(Y8, Y2, Y0, Y9)
	FOLD256(Y8, Y3, Y0, Y9)

p256block:
	CMPQ       CX, $32
	JB         p256reduce
	VMOVDQU    (SI), Y4
	FOLD256(Y8, Y4, Y0, Y9)
	ADDQ       $32, SI
	SUBQ       $32, CX
	JMP        p256block

p256reduce:
	// Lane 0 over 128 bits onto lane 1.
	VMOVDQU      foldK<>+64(SB), Y8
	VPCLMULQDQ   $0x00, Y8, Y0, Y9
	VPCLMULQDQ   $0x11, Y8, Y0, Y10
	VPXOR        Y10, Y9, Y9
	VEXTRACTI128 $1, Y0, X11
	VPXOR        X11, X9, X9
	VMOVQ        X9, DX
	VPEXTRQ      $1, X9, BX
	VZEROUPPER
	XORL         AX, AX
	CRC32Q       DX, AX
	CRC32Q       BX, AX

	// The last CX < block bytes: 8 at a time, then 4, 2, 1.
p256t8:
	CMPQ    CX, $8
	JB      p256t4
	MOVQ    (SI), DX
	CRC32Q  DX, AX
	ADDQ    $8, SI
	SUBQ    $8, CX
	JMP     p256t8

p256t4:
	TESTQ   $4, CX
	JZ      p256t2
	MOVL    (SI), DX
	CRC32L  DX, AX
	ADDQ    $4, SI

p256t2:
	TESTQ   $2, CX
	JZ      p256t1
	MOVWLZX (SI), DX
	CRC32W  DX, AX
	ADDQ    $2, SI

p256t1:
	TESTQ   $1, CX
	JZ      p256tdone
	MOVBLZX (SI), DX
	CRC32B  DX, AX

p256tdone:
	MOVL    AX, ret+24(FP)
	RET

// func crcFoldCopy256(reg uint32, dst, src *byte, n int) uint32
//
// crcFold256 that also copies the n ≥ 128 bytes at src to dst.
TEXT ·crcFoldCopy256(SB), NOSPLIT, $0-36
	MOVL reg+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	VMOVD      AX, X4
	VMOVDQU    (SI), Y0
	VMOVDQU    32(SI), Y1
	VMOVDQU    64(SI), Y2
	VMOVDQU    96(SI), Y3
	VMOVDQU    Y0, (DI)
	VMOVDQU    Y1, 32(DI)
	VMOVDQU    Y2, 64(DI)
	VMOVDQU    Y3, 96(DI)
	ADDQ       $128, DI
	VPXOR      Y4, Y0, Y0
	ADDQ       $128, SI
	SUBQ       $128, CX
	VBROADCASTI128 foldK<>+96(SB), Y8
	CMPQ       CX, $128
	JB         c256fold4

c256loop:
	VMOVDQU    (SI), Y4
	VMOVDQU    32(SI), Y5
	VMOVDQU    64(SI), Y6
	VMOVDQU    96(SI), Y7
	FOLD256(Y8, Y4, Y0, Y9)
	FOLD256(Y8, Y5, Y1, Y10)
	FOLD256(Y8, Y6, Y2, Y11)
	FOLD256(Y8, Y7, Y3, Y12)
	VMOVDQU    Y4, (DI)
	VMOVDQU    Y5, 32(DI)
	VMOVDQU    Y6, 64(DI)
	VMOVDQU    Y7, 96(DI)
	ADDQ       $128, DI
	ADDQ       $128, SI
	SUBQ       $128, CX
	CMPQ       CX, $128
	JAE        c256loop

c256fold4:
	VBROADCASTI128 foldK<>+48(SB), Y8
	FOLD256(Y8, Y1, Y0, Y9)
	FOLD256(Y8, Y2, Y0, Y9)
	FOLD256(Y8, Y3, Y0, Y9)

c256block:
	CMPQ       CX, $32
	JB         c256reduce
	VMOVDQU    (SI), Y4
	VMOVDQU    Y4, (DI)
	ADDQ       $32, DI
	FOLD256(Y8, Y4, Y0, Y9)
	ADDQ       $32, SI
	SUBQ       $32, CX
	JMP        c256block

c256reduce:
	// Lane 0 over 128 bits onto lane 1.
	VMOVDQU      foldK<>+64(SB), Y8
	VPCLMULQDQ   $0x00, Y8, Y0, Y9
	VPCLMULQDQ   $0x11, Y8, Y0, Y10
	VPXOR        Y10, Y9, Y9
	VEXTRACTI128 $1, Y0, X11
	VPXOR        X11, X9, X9
	VMOVQ        X9, DX
	VPEXTRQ      $1, X9, BX
	VZEROUPPER
	XORL         AX, AX
	CRC32Q       DX, AX
	CRC32Q       BX, AX

	// The last CX < block bytes: 8 at a time, then 4, 2, 1.
c256t8:
	CMPQ    CX, $8
	JB      c256t4
	MOVQ    (SI), DX
	CRC32Q  DX, AX
	MOVQ    DX, (DI)
	ADDQ    $8, DI
	ADDQ    $8, SI
	SUBQ    $8, CX
	JMP     c256t8

c256t4:
	TESTQ   $4, CX
	JZ      c256t2
	MOVL    (SI), DX
	CRC32L  DX, AX
	MOVL    DX, (DI)
	ADDQ    $4, DI
	ADDQ    $4, SI

c256t2:
	TESTQ   $2, CX
	JZ      c256t1
	MOVWLZX (SI), DX
	CRC32W  DX, AX
	MOVW    DX, (DI)
	ADDQ    $2, DI
	ADDQ    $2, SI

c256t1:
	TESTQ   $1, CX
	JZ      c256tdone
	MOVBLZX (SI), DX
	CRC32B  DX, AX
	MOVB    DX, (DI)

c256tdone:
	MOVL    AX, ret+32(FP)
	RET

// func crc32cUpdate(reg uint32, p *byte, n int) uint32
//
// Checksum's body: the raw CRC-32C register after the n bytes at p, from reg.
// From foldMin bytes on, the selected folding kernel (a tail call: the same
// arguments; fold256 only from foldMin256); below, the CRC32 instruction eight bytes at a time, as
// hash/crc32 does at these lengths but without its dispatch. Without a
// kernel at these lengths, or without SSE4.2, crc32cStd (three streams of
// the CRC32 instruction, or hash/crc32).
TEXT ·crc32cUpdate(SB), NOSPLIT, $0-28
	MOVQ n+16(FP), CX
	CMPQ CX, $const_foldMin
	JB   small
	CMPB ·foldKernel(SB), $const_fold512
	JEQ  big512
	CMPQ CX, $const_foldMin256
	JB   small
	CMPB ·foldKernel(SB), $const_fold256
	JNE  std
	JMP  ·crcFold256(SB)

big512:
	JMP ·crcFold512(SB)

std:
	JMP ·crc32cStd(SB)

small:
	CMPB ·crcAsm(SB), $0
	JEQ  std
	MOVL reg+0(FP), AX
	MOVQ p+8(FP), SI

small8:
	CMPQ   CX, $8
	JB     small4
	CRC32Q (SI), AX
	ADDQ   $8, SI
	SUBQ   $8, CX
	JMP    small8

small4:
	TESTQ  $4, CX
	JZ     small2
	CRC32L (SI), AX
	ADDQ   $4, SI

small2:
	TESTQ  $2, CX
	JZ     small1
	CRC32W (SI), AX
	ADDQ   $2, SI

small1:
	TESTQ  $1, CX
	JZ     smalldone
	CRC32B (SI), AX

smalldone:
	MOVL AX, ret+24(FP)
	RET
