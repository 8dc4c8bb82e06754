// The integer block product (kernels/int8_dot.hpp) in plain C++: runs
// anywhere, for any number of interleaved rows. It is the reference the
// instruction-set versions are tested against, bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/arch/code_span.hpp"
#include "kernels/fp16.hpp"
#include "kernels/quant.hpp"

namespace kiln::kernels::arch {

template <int NRows>
struct PortableInt8Ops {
  static constexpr int kRows = NRows;

  struct Quants {  // the rows' 32 values, as stored (signed) or as unsigned codes (Q4_0, K-quants)
    int32_t v[kRows][kQuantBlockElems];
  };
  struct Rows {
    int32_t v[kRows];
  };
  struct Acc {
    float v[kRows];
  };

  // block: the interleaved quant bytes of one block (vector v holds bytes
  // 4v .. 4v + 3 of every row, row after row).
  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    constexpr int kQuantBytes = traits_of(T).block_bytes - 2;
    Quants q;
    for (int r = 0; r < kRows; ++r)
      for (int j = 0; j < kQuantBytes; ++j) {
        const uint8_t byte = block[(j / 4) * 4 * kRows + r * 4 + j % 4];
        if constexpr (T == TensorType::Q4_0) {
          q.v[r][j] = byte & 0x0f;
          q.v[r][j + 16] = byte >> 4;
        } else {
          q.v[r][j] = static_cast<int8_t>(byte);
        }
      }
    return q;
  }

  // A K-quant unit (kernels/interleave_k.hpp): its 32 codes per row, the
  // nibbles as Q4_0's with the high bits above them.
  template <TensorType T>
  static Quants decode_k(const uint8_t* unit) {
    Quants q = decode<TensorType::Q4_0>(unit);
    const uint8_t* high = unit + 16 * kRows;
    for (int r = 0; r < kRows; ++r)
      for (int e = 0; e < kQuantBlockElems; ++e) {
        const int half = e / 16, v = e % 16 / 4, k = e % 4;
        if constexpr (T == TensorType::Q5_K)
          q.v[r][e] |= (high[r * 4 + k] >> (4 * half + v) & 1) << 4;
        else if constexpr (T == TensorType::Q6_K)
          q.v[r][e] |= (high[half * 4 * kRows + r * 4 + k] >> (2 * v) & 3) << 4;
      }
    return q;
  }

  // The exact integer block products; `offset` is subtracted from each (the
  // Q4_0 nibbles' 8 * sum(x), 0 for Q8_0).
  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    return dot_codes<CodeSpan::Both, 127>(w, x, offset);
  }

  // The same over the span S of unsigned codes of at most MaxCode (the
  // bound matters to instruction sets that sum products in 16 bits).
  template <CodeSpan S, int MaxCode>
  static Rows dot_codes(const Quants& w, const int8_t* x, int32_t offset) {
    Rows out;
    for (int r = 0; r < kRows; ++r) {
      int32_t sum = 0;
      for (int j = span_begin(S); j < span_end(S); ++j) sum += w.v[r][j] * int32_t{x[j]};
      out.v[r] = sum - offset;
    }
    return out;
  }

  static Acc zero() { return {}; }

  // The rows' fp16 scales, as floats.
  static Acc weight_scales(const uint16_t* d) {
    Acc s;
    for (int r = 0; r < kRows; ++r) s.v[r] = fp16_to_fp32(d[r]);
    return s;
  }
  // Those times the activation block's scale.
  static Acc scales(const Acc& w, float x_scale) {
    Acc s;
    for (int r = 0; r < kRows; ++r) s.v[r] = w.v[r] * x_scale;
    return s;
  }

  // The rows' byte scales (K-quant sub-blocks), as floats.
  template <bool Signed>
  static Acc byte_scales(const uint8_t* s) {
    Acc out;
    for (int r = 0; r < kRows; ++r) out.v[r] = Signed ? static_cast<int8_t>(s[r]) : s[r];
    return out;
  }
  static Acc mul(const Acc& a, const Acc& b) {
    Acc out;
    for (int r = 0; r < kRows; ++r) out.v[r] = a.v[r] * b.v[r];
    return out;
  }
  // acc - m * x, rounded once.
  static Acc fnma(const Acc& m, float x, Acc acc) {
    for (int r = 0; r < kRows; ++r) acc.v[r] = std::fma(-m.v[r], x, acc.v[r]);
    return acc;
  }

  static Acc fma(const Rows& dots, const Acc& scale, Acc acc) {
    for (int r = 0; r < kRows; ++r) acc.v[r] = std::fma(static_cast<float>(dots.v[r]), scale.v[r], acc.v[r]);
    return acc;
  }

  static void store(const Acc& a, float* y, int n_rows) { std::memcpy(y, a.v, sizeof(float) * n_rows); }
  static void add(const Acc& a, float* y, int n_rows) {
    for (int r = 0; r < n_rows; ++r) y[r] += a.v[r];
  }
};

}  // namespace kiln::kernels::arch
