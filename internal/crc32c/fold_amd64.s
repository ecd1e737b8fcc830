//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// Design note: CRC-32C by carry-less-multiply folding.
//
// Notation as in mul.go: a reflected polynomial stores the coefficient of
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
// high one). fold_test.go recomputes every entry of foldK<> from the
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
// Mixed rounds (fold512mix, fold.go). A round of m steps (1 ≤ m ≤
// mixIters) is four streams S1..S4 of s = 40m bytes, then V, v = 256m bytes,
// folded by the four accumulators; the streams run through the CRC32
// instruction in the same loop as V's folds, five 8-byte words of each a
// step, S1 from the running register, the others from zero. The first fold
// of a round reaches over the streams as well as the 256 bytes before it:
// D = 8·(256 + 4s) bits. (Before the first round the accumulators are zero,
// so that fold only loads.) At the end of the round the streams' registers
// r1..r4 stand for Sj·x^32 mod P, and Σ Sj·x^(8((4-j)s + v)) must join the
// accumulators. A register t XORed into the first four bytes of the last
// 256-byte window (Z0's low 32 bits) adds t·x^(2048-32), so
//
//	t = Σ rj·x^(8·Lj),  Lj = (4-j)·s + v - 256
//
// which is one CRC32 of the XOR of four carry-less products by the primed
// constants (x^(8·Lj))' of mul.go: CRC32(0, clmul(r, c')) = r·c. The
// round's folds do not wait for t: it joins Z0 once the round is done, and
// the next round's streams start again from zero. Rounds take mixIters
// steps while they fit, then one round takes as many as fit; the bytes left
// (under one step) go through the kernel's other loops. The copying kernel
// stores V's blocks as it loads them and copies the streams' bytes in
// 64-byte blocks, two a step and the rest (32m bytes) after the steps, at
// most 63 bytes of V twice: eight-byte stores would take eight times the
// store buffer's entries. It runs mixed rounds up to mixCopyMax bytes only.
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

// mixK<>: for a mixed round of m steps, at 64·(m-1): k(8·(256 + 160m)),
// then the join constants (x^(8·Lj))', j = 1..4, then zero.
DATA mixK<>+0(SB)/8, $0x0000000096638b34 // 1 step: k(3328)
DATA mixK<>+8(SB)/8, $0x000000002b3cac5d
DATA mixK<>+16(SB)/8, $0x000000002ad91c30 // join
DATA mixK<>+24(SB)/8, $0x0000000039d3b296
DATA mixK<>+32(SB)/8, $0x000000003da6d0cb
DATA mixK<>+40(SB)/8, $0x00000000a9cdda0d
DATA mixK<>+48(SB)/8, $0x0000000000000000
DATA mixK<>+56(SB)/8, $0x0000000000000000
DATA mixK<>+64(SB)/8, $0x0000000052148f02 // 2 steps: k(4608)
DATA mixK<>+72(SB)/8, $0x00000000271d9844
DATA mixK<>+80(SB)/8, $0x00000000064f7f26 // join
DATA mixK<>+88(SB)/8, $0x000000002b3cac5d
DATA mixK<>+96(SB)/8, $0x00000000a60ce07b
DATA mixK<>+104(SB)/8, $0x00000000b9e02b86
DATA mixK<>+112(SB)/8, $0x0000000000000000
DATA mixK<>+120(SB)/8, $0x0000000000000000
DATA mixK<>+128(SB)/8, $0x00000000e78eb416 // 3 steps: k(5888)
DATA mixK<>+136(SB)/8, $0x00000000b0cd4768
DATA mixK<>+144(SB)/8, $0x0000000014338754 // join
DATA mixK<>+152(SB)/8, $0x0000000039c7ff35
DATA mixK<>+160(SB)/8, $0x0000000063ded06a
DATA mixK<>+168(SB)/8, $0x00000000dd7e3b0c
DATA mixK<>+176(SB)/8, $0x0000000000000000
DATA mixK<>+184(SB)/8, $0x0000000000000000
DATA mixK<>+192(SB)/8, $0x00000000dd07448e // 4 steps: k(7168)
DATA mixK<>+200(SB)/8, $0x0000000068bce87a
DATA mixK<>+208(SB)/8, $0x00000000ca6ef3ac // join
DATA mixK<>+216(SB)/8, $0x00000000ff0dba97
DATA mixK<>+224(SB)/8, $0x000000006956fc3b
DATA mixK<>+232(SB)/8, $0x00000000d7a4825c
DATA mixK<>+240(SB)/8, $0x0000000000000000
DATA mixK<>+248(SB)/8, $0x0000000000000000
DATA mixK<>+256(SB)/8, $0x0000000019e3635e // 5 steps: k(8448)
DATA mixK<>+264(SB)/8, $0x000000006f345e45
DATA mixK<>+272(SB)/8, $0x00000000dc1a160c // join
DATA mixK<>+280(SB)/8, $0x000000000df04680
DATA mixK<>+288(SB)/8, $0x0000000093781dc7
DATA mixK<>+296(SB)/8, $0x00000000170076fa
DATA mixK<>+304(SB)/8, $0x0000000000000000
DATA mixK<>+312(SB)/8, $0x0000000000000000
DATA mixK<>+320(SB)/8, $0x0000000093781dc7 // 6 steps: k(9728)
DATA mixK<>+328(SB)/8, $0x00000000b3af077a
DATA mixK<>+336(SB)/8, $0x00000000a563905d // join
DATA mixK<>+344(SB)/8, $0x0000000017f27698
DATA mixK<>+352(SB)/8, $0x00000000995a5724
DATA mixK<>+360(SB)/8, $0x00000000dd66cbbb
DATA mixK<>+368(SB)/8, $0x0000000000000000
DATA mixK<>+376(SB)/8, $0x0000000000000000
DATA mixK<>+384(SB)/8, $0x00000000bc817803 // 7 steps: k(11008)
DATA mixK<>+392(SB)/8, $0x0000000093e106a4
DATA mixK<>+400(SB)/8, $0x000000000fa0277f // join
DATA mixK<>+408(SB)/8, $0x0000000067969a6a
DATA mixK<>+416(SB)/8, $0x0000000088f61445
DATA mixK<>+424(SB)/8, $0x000000009ef68d35
DATA mixK<>+432(SB)/8, $0x0000000000000000
DATA mixK<>+440(SB)/8, $0x0000000000000000
DATA mixK<>+448(SB)/8, $0x000000001dfa0a15 // 8 steps: k(12288)
DATA mixK<>+456(SB)/8, $0x000000009ef68d35
DATA mixK<>+464(SB)/8, $0x0000000033bc58b3 // join
DATA mixK<>+472(SB)/8, $0x0000000063d097e9
DATA mixK<>+480(SB)/8, $0x00000000021ac5ef
DATA mixK<>+488(SB)/8, $0x00000000aa7c7ad5
DATA mixK<>+496(SB)/8, $0x0000000000000000
DATA mixK<>+504(SB)/8, $0x0000000000000000
GLOBL mixK<>(SB), RODATA|NOPTR, $512

// func foldTable() *[14]uint64
TEXT ·foldTable(SB), NOSPLIT, $0-8
	LEAQ foldK<>(SB), AX
	MOVQ AX, ret+0(FP)
	RET

// func mixTable() *[64]uint64
TEXT ·mixTable(SB), NOSPLIT, $0-8
	LEAQ mixK<>(SB), AX
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

// MIXFOLD512 is one step of a mixed round without its pointers' advance:
// four 64-byte blocks at DI folded into Z0..Z3 with the constants in k, and
// five 8-byte words of each stream, at SI, SI+R9, SI+2·R9 and SI+R11 (R9 = s,
// R11 = 3s), into AX, BX, DX and R8.
#define MIXFOLD512(k) \
	VMOVDQU64 (DI), Z4           \
	VMOVDQU64 64(DI), Z5         \
	VMOVDQU64 128(DI), Z6        \
	VMOVDQU64 192(DI), Z7        \
	FOLD512(k, Z4, Z0, Z9)       \
	CRC32Q    (SI), AX           \
	CRC32Q    (SI)(R9*1), BX     \
	CRC32Q    (SI)(R9*2), DX     \
	CRC32Q    (SI)(R11*1), R8    \
	FOLD512(k, Z5, Z1, Z10)      \
	CRC32Q    8(SI), AX          \
	CRC32Q    8(SI)(R9*1), BX    \
	CRC32Q    8(SI)(R9*2), DX    \
	CRC32Q    8(SI)(R11*1), R8   \
	FOLD512(k, Z6, Z2, Z11)      \
	CRC32Q    16(SI), AX         \
	CRC32Q    16(SI)(R9*1), BX   \
	CRC32Q    16(SI)(R9*2), DX   \
	CRC32Q    16(SI)(R11*1), R8  \
	FOLD512(k, Z7, Z3, Z12)      \
	CRC32Q    24(SI), AX         \
	CRC32Q    24(SI)(R9*1), BX   \
	CRC32Q    24(SI)(R9*2), DX   \
	CRC32Q    24(SI)(R11*1), R8  \
	CRC32Q    32(SI), AX         \
	CRC32Q    32(SI)(R9*1), BX   \
	CRC32Q    32(SI)(R9*2), DX   \
	CRC32Q    32(SI)(R11*1), R8

// MIXSTEP512 is a step of crcFold512's mixed rounds.
#define MIXSTEP512(k) \
	MIXFOLD512(k) \
	ADDQ $256, DI \
	ADDQ $40, SI

// MIXCOPYSTEP512 is a step of crcFoldCopy512's: the blocks are stored R10
// bytes further on (R10 = dst - src) as well, and so are the two 64-byte
// blocks of the streams' bytes at R12.
#define MIXCOPYSTEP512(k) \
	MIXFOLD512(k)                \
	VMOVDQU64 Z4, (DI)(R10*1)    \
	VMOVDQU64 Z5, 64(DI)(R10*1)  \
	VMOVDQU64 Z6, 128(DI)(R10*1) \
	VMOVDQU64 Z7, 192(DI)(R10*1) \
	VMOVDQU64 (R12), Z14         \
	VMOVDQU64 64(R12), Z15       \
	VMOVDQU64 Z14, (R12)(R10*1)  \
	VMOVDQU64 Z15, 64(R12)(R10*1) \
	ADDQ      $128, R12          \
	ADDQ      $256, DI           \
	ADDQ      $40, SI

// MIXINIT readies the mixed rounds: streams S2..S4's registers BX, DX and
// R8 at zero (S1's, AX, holds the running register), the accumulators at
// zero, Z8 the plain steps' fold constant k(2048).
#define MIXINIT \
	XORL            BX, BX                     \
	XORL            DX, DX                     \
	XORL            R8, R8                     \
	VPXORQ          Z0, Z0, Z0                 \
	VPXORQ          Z1, Z1, Z1                 \
	VPXORQ          Z2, Z2, Z2                 \
	VPXORQ          Z3, Z3, Z3                 \
	VBROADCASTI32X4 foldK<>+0(SB), Z8

// MIXBEGIN starts a round at SI with CX ≥ 416 bytes left: R13 = m, the
// steps that fit (at most mixIters; CX/416 is ((CX>>5)·79)>>10 below 3328),
// R9 = s = 40m, R11 = 3s, R12 = &mixK<>[m], Z13 = its fold constant, DI =
// SI + 4s (V). BX is zero on entry and on exit.
#define MIXBEGIN \
	MOVQ            $const_mixIters, R13       \
	CMPQ            CX, $const_mixRound        \
	JAE             5(PC)                      \
	MOVQ            CX, R13                    \
	SHRQ            $5, R13                    \
	IMUL3Q          $79, R13, R13              \
	SHRQ            $10, R13                   \
	IMUL3Q          $40, R13, R9               \
	LEAQ            (R9)(R9*2), R11            \
	MOVQ            R13, R12                   \
	SHLQ            $6, R12                    \
	LEAQ            mixK<>-64(SB), BX          \
	ADDQ            BX, R12                    \
	XORL            BX, BX                     \
	VBROADCASTI32X4 (R12), Z13                 \
	LEAQ            (SI)(R11*1), DI            \
	ADDQ            R9, DI

// MIXENDK joins the round's stream registers into Z0 (the design note's t)
// with the join constants k12 (j = 1, 2) and k34, zeroes them for the next
// round and takes the round's bytes off CX: SI is then s past the round's
// start and DI at its end. Clobbers X10-X12. MIXEND takes the constants
// from mixK<> at R12.
#define MIXEND MIXENDK(16(R12), 32(R12))

#define MIXENDK(k12, k34) \
	VMOVQ      AX, X10                  \
	VPINSRQ    $1, BX, X10, X10         \
	VMOVQ      DX, X11                  \
	VPINSRQ    $1, R8, X11, X11         \
	VPCLMULQDQ $0x00, k12, X10, X12     \
	VPCLMULQDQ $0x11, k12, X10, X10     \
	VPXOR      X12, X10, X10            \
	VPCLMULQDQ $0x00, k34, X11, X12     \
	VPCLMULQDQ $0x11, k34, X11, X11     \
	VPXOR      X12, X10, X10            \
	VPXOR      X11, X10, X10            \
	VMOVQ      X10, BX                  \
	XORL       AX, AX                   \
	CRC32Q     BX, AX                   \
	VMOVD      AX, X12                  \
	VPXORQ     Z12, Z0, Z0              \
	MOVQ       SI, AX                   \
	SUBQ       R9, AX                   \
	SUBQ       DI, AX                   \
	ADDQ       AX, CX                   \
	XORL       AX, AX                   \
	XORL       BX, BX                   \
	XORL       DX, DX                   \
	XORL       R8, R8

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
	CMPQ      CX, $const_mixMin
	JB        p512plain
	CMPB      ·foldKernel(SB), $const_fold512mix
	JEQ       p512mix

p512plain:
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
	JMP       p512block

p512mix:
	// Mixed rounds while a step fits (design note): AX is stream S1's
	// register, from reg; the accumulators start at zero.
	MIXINIT

p512mixround:
	MIXBEGIN
	MIXSTEP512(Z13)
	DECQ      R13
	JZ        p512mixend

p512mixstep:
	MIXSTEP512(Z8)
	DECQ      R13
	JNZ       p512mixstep

p512mixend:
	MIXEND
	MOVQ      DI, SI
	CMPQ      CX, $const_mixStep
	JAE       p512mixround
	CMPQ      CX, $256
	JAE       p512loop
	JMP       p512fold4

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
	CMPQ      CX, $const_mixMin
	JB        c512plain
	CMPQ      CX, $const_mixCopyMax
	JA        c512plain
	CMPB      ·foldKernel(SB), $const_fold512mix
	JEQ       c512mix

c512plain:
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
	JMP       c512block

c512mix:
	// crcFold512's mixed rounds, copying: R10 = dst - src. The streams'
	// bytes are copied in 64-byte blocks from the round's start, R12, two
	// a step and then up to V at R13; the join constants wait in X16 and
	// X17. No prefetching: the CPUs that run these rounds gain nothing by
	// it (results/codec.md).
	MOVQ      DI, R10
	SUBQ      SI, R10
	MIXINIT

c512mixround:
	MIXBEGIN
	VMOVDQU64 16(R12), X16
	VMOVDQU64 32(R12), X17
	MOVQ      SI, R12
	MIXCOPYSTEP512(Z13)
	DECQ      R13
	JZ        c512mixend

c512mixstep:
	MIXCOPYSTEP512(Z8)
	DECQ      R13
	JNZ       c512mixstep

c512mixend:
	MIXENDK(X16, X17)
	LEAQ      (SI)(R11*1), R13

c512mixcopy:
	VMOVDQU64 (R12), Z14
	VMOVDQU64 Z14, (R12)(R10*1)
	ADDQ      $64, R12
	CMPQ      R12, R13
	JB        c512mixcopy
	MOVQ      DI, SI
	CMPQ      CX, $const_mixStep
	JAE       c512mixround
	LEAQ      (SI)(R10*1), DI
	CMPQ      CX, $256
	JAE       c512loop
	JMP       c512fold4

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
	JAE  big512
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

// func cpuid(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET
