// Float panel products (matmul_float.hpp) written by hand for the tile
// shapes where the compiler's own register plan falls short.
//
// FloatPanelPairs<NRows, NTokens>::run<RowBytes>(panel, tokens, pairs, acc,
// step) adds `pairs` pairs of k-vectors' products to a tile's accumulators,
// exactly as twice as many steps of panel_products' C++ loop would (the same
// FMAs in the same order), calling step() before each pair; kExists says
// whether the instruction set has one for that shape. The primary template
// has none: the C++ loop serves.
#pragma once

namespace kiln::kernels::arch {

template <int NRows, int NTokens>
struct FloatPanelPairs {
  static constexpr bool kExists = false;
};

}  // namespace kiln::kernels::arch

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#include "kernels/arch/float_panel_avx2.hpp"
#endif
