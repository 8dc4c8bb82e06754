// The 6 x 2 float panel tile of 16-register AVX2, two k-vectors at a time.
//
// The tile needs 15 of the 16 ymm registers: 12 accumulators, the two
// tokens' vectors and one weight vector that both tokens multiply. Taking
// one k-vector per loop pass, a scratch loop of this tile ran well below the
// FMAs' rate; taking two in C++, GCC folds each weight load into both of its
// FMAs or spills accumulators (docs/benchmarks.md, "float prompt tiles").
// Written out in assembly, each operand is loaded once, the accumulators
// never leave their registers, and the loop runs at the FMAs' rate.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <xsimd/xsimd.hpp>

namespace kiln::kernels::arch {

// The assembly's own registers: ymm13 and ymm14 the two tokens' vectors of
// a k-vector, ymm15 a row's weight vector; the compiler places the
// accumulators in the other thirteen. (Naming them spares three of the 30
// operands an asm statement may have: each accumulator counts twice.)
//
// One panel row's weight vector (at address ADDR) times both tokens'
// vectors, into that row's two accumulators.
#define KILN_PANEL_ROW(ADDR, A0, A1)              \
  "vmovaps " ADDR ", %%ymm15\n\t"                  \
  "vfmadd231ps %%ymm15, %%ymm13, %[" A0 "]\n\t"    \
  "vfmadd231ps %%ymm15, %%ymm14, %[" A1 "]\n\t"
// One k-vector: the two tokens' vectors (at byte offset TOK from `tokens`),
// then the six rows' (at byte offset K in each row: rows 0-2 from `panel`,
// 3-5 from `panel3`, `stride` apart).
#define KILN_PANEL_STEP(TOK, K)                                                        \
  "vmovaps " TOK "(%[tokens]), %%ymm13\n\t"                                            \
  "vmovaps " TOK "+32(%[tokens]), %%ymm14\n\t"                                         \
  KILN_PANEL_ROW(K "(%[panel])", "a00", "a01")                                        \
  KILN_PANEL_ROW(K "(%[panel],%[stride],1)", "a10", "a11")                            \
  KILN_PANEL_ROW(K "(%[panel],%[stride],2)", "a20", "a21")                            \
  KILN_PANEL_ROW(K "(%[panel3])", "a30", "a31")                                       \
  KILN_PANEL_ROW(K "(%[panel3],%[stride],1)", "a40", "a41")                           \
  KILN_PANEL_ROW(K "(%[panel3],%[stride],2)", "a50", "a51")

template <>
struct FloatPanelPairs<6, 2> {
  static constexpr bool kExists = true;

  // acc[r][t] += panel row r (rows RowBytes apart) times token t for 2 x
  // `pairs` k-vectors from `panel` on; `tokens` holds the two tokens'
  // vectors of each k-vector in turn (pack_tokens' order). step() runs
  // before each pair.
  template <int64_t RowBytes, class Step>
  static void run(const float* panel, const float* tokens, int pairs, xsimd::batch<float> (&acc)[6][2], Step step) {
    // The accumulators as scalars of this function: in an array (acc's, or
    // a local one), which the assembly's reads might alias, the compiler
    // stores them before every pair.
    __m256 a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1], a20 = acc[2][0], a21 = acc[2][1],
           a30 = acc[3][0], a31 = acc[3][1], a40 = acc[4][0], a41 = acc[4][1], a50 = acc[5][0], a51 = acc[5][1];
    // What the assembly reads, so the compiler orders the panel's and the
    // tokens' stores before it.
    using PanelFloats = const float[(5 * RowBytes + 64) / sizeof(float)];
    using TokenFloats = const float[32];
    for (int p = 0; p < pairs; ++p, panel += 16, tokens += 32) {
      step();
      const float* panel3 = panel + 3 * RowBytes / sizeof(float);
      asm(KILN_PANEL_STEP("0", "0") KILN_PANEL_STEP("64", "32")
          : [a00] "+x"(a00), [a01] "+x"(a01), [a10] "+x"(a10), [a11] "+x"(a11), [a20] "+x"(a20), [a21] "+x"(a21),
            [a30] "+x"(a30), [a31] "+x"(a31), [a40] "+x"(a40), [a41] "+x"(a41), [a50] "+x"(a50), [a51] "+x"(a51)
          : [panel] "r"(panel), [panel3] "r"(panel3), [stride] "r"(RowBytes), [tokens] "r"(tokens),
            "m"(*reinterpret_cast<PanelFloats*>(panel)), "m"(*reinterpret_cast<TokenFloats*>(tokens))
          : "ymm13", "ymm14", "ymm15");
    }
    acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11, acc[2][0] = a20, acc[2][1] = a21;
    acc[3][0] = a30, acc[3][1] = a31, acc[4][0] = a40, acc[4][1] = a41, acc[5][0] = a50, acc[5][1] = a51;
  }
};

#undef KILN_PANEL_STEP
#undef KILN_PANEL_ROW

}  // namespace kiln::kernels::arch
