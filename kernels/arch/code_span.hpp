// Which of a 32-column block's codes an integer product covers: the first 16,
// the last 16, or all (Q2_K, Q3_K and Q6_K scale each half of the block on
// its own; see kernels/dot_kquant.hpp).
#pragma once

namespace kiln::kernels::arch {

enum class CodeSpan { Low, High, Both };

constexpr int span_begin(CodeSpan s) { return s == CodeSpan::High ? 16 : 0; }
constexpr int span_end(CodeSpan s) { return s == CodeSpan::Low ? 16 : 32; }

}  // namespace kiln::kernels::arch
