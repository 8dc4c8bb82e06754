// The integer block product (kernels/int8_dot.hpp) in plain C++: runs
// anywhere, for any number of interleaved rows. It is the reference the
// instruction-set versions are tested against, bit for bit.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/arch/code_span.hpp"
#include "kernels/fp16.hpp"
#include "kernels/codebook.hpp"

namespace kiln::kernels::arch {

template <int NRows>
struct PortableInt8Ops {
  static constexpr int kRows = NRows;

  // The rows' 32 values: signed weights (Q8_0, the codebook types' values) or
  // unsigned codes (the other types).
  struct Quants {
    int32_t v[kRows][kQuantBlockElems];
  };
  struct Rows {
    int32_t v[kRows];
  };
  struct Acc {
    float v[kRows];
  };

  // The parts of kernels/interleave_unit.hpp, read for row r and element e
  // (0..31) in vectors of 4 bytes per row.
  static constexpr int kVector = 4 * kRows;
  // A prompt's tile of tokens (kernels/matmul.hpp), token by token; the
  // tokens left after whole tiles go one by one.
  static constexpr int kTokenTile = 6;
  static constexpr int kRestTile = kTokenTile;
  static int nibble(const uint8_t* nibbles, int r, int e) {
    return nibbles[e % 16 / 4 * kVector + r * 4 + e % 4] >> (4 * (e / 16)) & 0x0f;
  }
  static int crumb(const uint8_t* crumbs, int r, int e) {
    return crumbs[e / 16 * kVector + r * 4 + e % 4] >> (2 * (e % 16 / 4)) & 3;
  }
  static int bit(const uint8_t* bits, int r, int e) { return bits[r * 4 + e % 4] >> (4 * (e / 16) + e % 16 / 4) & 1; }

  // block: the interleaved quant bytes of one 32-element block (kernels/interleave.hpp).
  template <TensorType T>
  static Quants decode(const uint8_t* block) {
    Quants q;
    for (int r = 0; r < kRows; ++r)
      for (int e = 0; e < kQuantBlockElems; ++e) {
        if constexpr (T == TensorType::Q8_0)
          q.v[r][e] = static_cast<int8_t>(block[e / 4 * kVector + r * 4 + e % 4]);
        else if constexpr (is_codebook_type(T))
          q.v[r][e] = codebook_values<T>()[nibble(block, r, e)];
        else if constexpr (T == TensorType::Q5_0 || T == TensorType::Q5_1)
          q.v[r][e] = nibble(block, r, e) | bit(block + 4 * kVector, r, e) << 4;
        else
          q.v[r][e] = nibble(block, r, e);
      }
    return q;
  }

  // A super-block type's unit (kernels/interleave_k.hpp): its 32 codes per
  // row (IQ4_XS's as their codebook values).
  template <TensorType T>
  static Quants decode_k(const uint8_t* unit) {
    Quants q;
    for (int r = 0; r < kRows; ++r)
      for (int e = 0; e < kQuantBlockElems; ++e) {
        if constexpr (T == TensorType::Q2_K)
          q.v[r][e] = crumb(unit, r, e);
        else if constexpr (T == TensorType::Q3_K)
          q.v[r][e] = crumb(unit, r, e) | bit(unit + 2 * kVector, r, e) << 2;
        else if constexpr (T == TensorType::Q5_K)
          q.v[r][e] = nibble(unit, r, e) | bit(unit + 4 * kVector, r, e) << 4;
        else if constexpr (T == TensorType::Q6_K)
          q.v[r][e] = nibble(unit, r, e) | crumb(unit + 4 * kVector, r, e) << 4;
        else if constexpr (T == TensorType::IQ4_XS)
          q.v[r][e] = kIq4Values[nibble(unit, r, e)];
        else
          q.v[r][e] = nibble(unit, r, e);
      }
    return q;
  }

  // The exact integer block products. `offset` is subtracted from those of
  // unsigned codes (the bias times the activations' sum: Q4_0's 8 * sum(x),
  // Q5_0's 16 * sum(x), 0 for Q5_1); signed weights (Q8_0, the codebook
  // types) need none.
  template <TensorType T>
  static Rows dot(const Quants& w, const int8_t* x, int32_t offset) {
    return dot_codes<CodeSpan::Both, 127>(w, x, has_signed_weights(T) ? 0 : offset);
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
  // The rows' MXFP4 scales 2^(e - 127), from their E8M0 bytes.
  static Acc e8m0_scales(const uint8_t* e) {
    Acc s;
    for (int r = 0; r < kRows; ++r) s.v[r] = std::bit_cast<float>(e8m0_bits(e[r]));
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
  // The low or high nibbles of the rows' bytes (Q2_K's scales and mins), as floats.
  template <bool High>
  static Acc nibble_scales(const uint8_t* s) {
    Acc out;
    for (int r = 0; r < kRows; ++r) out.v[r] = static_cast<float>(High ? s[r] >> 4 : s[r] & 0x0f);
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
