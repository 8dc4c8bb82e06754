// Checks shared by the kernel tests: comparisons with tolerances or bit for
// bit, and matmul / get_rows against the scalar reference for any weight type
// (the quantized types with activations rounded to Q8 blocks, as the matmul reads
// them), with the numerics contract that a result never depends on the batch size, a
// token's place in the batch, or the number of threads.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/matmul.hpp"
#include "kernels/team.hpp"
#include "kernels/q8_activations.hpp"
#include "kernels/quant.hpp"
#include "kernels/reference.hpp"
#include "tests/support/reference_dequant.hpp"

namespace kiln::test {

inline constexpr double kUnitRoundoff = 0x1p-24;  // float's relative rounding error
inline constexpr int kMaxBatch = 17;

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Runs f on `threads` threads of one team, the way a model's forward pass
// calls the kernels.
template <class F>
void in_parallel(int threads, F&& f) {
  kernels::run_team(threads, f);
}

// Every element within its tolerance; reports the first one that is not.
inline void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                         const std::vector<double>& tolerance) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::fabs(static_cast<double>(actual[i]) - expected[i]) > tolerance[i]) {
      FAIL_CHECK("element " << i << ": " << actual[i] << " vs expected " << expected[i] << " (tolerance "
                            << tolerance[i] << ")");
      return;
    }
  }
}

inline void expect_same_bits(const float* actual, const float* expected, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (std::bit_cast<uint32_t>(actual[i]) != std::bit_cast<uint32_t>(expected[i])) {
      FAIL_CHECK("element " << i << " differs: " << actual[i] << " vs " << expected[i]);
      return;
    }
  }
}

inline void expect_same_bits(const std::vector<float>& actual, const std::vector<float>& expected) {
  REQUIRE(actual.size() == expected.size());
  expect_same_bits(actual.data(), expected.data(), actual.size());
}

// Decoded weights against the reference decoder's: the same bits for types
// whose value is a product (F32, F16, BF16, Q8_0, Q4_0, Q5_0, IQ4_NL,
// IQ4_XS, Q3_K); for those with an affine value (d * scale * q - dmin * min:
// Q4_K, Q5_K, Q2_K; d * q + m: Q5_1; and Q6_K) within 4 float epsilons of
// the largest value of their block, so that a decoder that fuses the
// multiply and add on some instruction set still passes and a wrong scale
// does not.
inline void expect_decoded(TensorType t, const std::vector<float>& actual, const std::vector<float>& expected) {
  REQUIRE(actual.size() == expected.size());
  if (t != TensorType::Q4_K && t != TensorType::Q5_K && t != TensorType::Q6_K && t != TensorType::Q2_K &&
      t != TensorType::Q5_1) {
    expect_same_bits(actual, expected);
    return;
  }
  const auto block_elems = static_cast<size_t>(traits_of(t).block_elems);
  for (size_t block = 0; block < actual.size(); block += block_elems) {
    float largest = 0;
    for (size_t i = block; i < block + block_elems; ++i) largest = std::max(largest, std::fabs(expected[i]));
    for (size_t i = block; i < block + block_elems; ++i)
      if (std::fabs(actual[i] - expected[i]) > 4 * FLT_EPSILON * largest) {
        FAIL_CHECK("element " << i << " differs: " << actual[i] << " vs " << expected[i]);
        return;
      }
  }
}

// Random weights of type t, as stored bytes.
inline std::vector<uint8_t> random_weights(TensorType t, int rows, int cols, uint32_t seed) {
  const std::vector<float> w = random_floats(static_cast<size_t>(rows) * cols, seed);
  std::vector<uint8_t> bytes(kiln::row_bytes(t, cols) * rows);
  for (int r = 0; r < rows; ++r)
    kernels::quantize_row(t, w.data() + r * cols, bytes.data() + r * kiln::row_bytes(t, cols), cols);
  return bytes;
}

// The bytes matmul reads for a GGUF matrix: the same, or repacked (kernels::pack_matrix).
inline std::vector<uint8_t> matmul_layout(TensorType t, const std::vector<uint8_t>& gguf, int rows, int cols) {
  if (!kernels::is_repacked(t, cols)) return gguf;
  std::vector<uint8_t> out(static_cast<size_t>(kernels::matmul_matrix_bytes(t, rows, cols)));
  kernels::pack_matrix(t, gguf.data(), out.data(), rows, cols);
  return out;
}

// Random activations as the matmul for weight type T reads them: floats,
// rounded to Q8 blocks (kernels::reads_q8) or to bfloat16
// (kernels::reads_bf16). `values` holds what the matmul effectively
// multiplies: the floats, or the rounded values.
template <TensorType T, int Cols>
struct TestInput {
  std::vector<float> values;
  std::vector<int8_t> qs;
  std::vector<float> d;
  std::vector<int32_t> sum;
  std::vector<float> scaled_sum;

  TestInput(int n_tokens, uint32_t seed) : values(random_floats(static_cast<size_t>(n_tokens) * Cols, seed)) {
    if constexpr (kernels::reads_q8(T)) {
      qs.resize(values.size());
      d.resize(values.size() / kernels::kQuantBlockElems);
      sum.resize(values.size() / kernels::kQ8HalfElems);
      scaled_sum.resize(d.size() * kernels::kQ8ScaledSums);
      kernels::quantize_q8<Cols>(values.data(), n_tokens, out());
      for (size_t i = 0; i < values.size(); ++i) values[i] = d[i / kernels::kQuantBlockElems] * qs[i];
    }
    if constexpr (kernels::reads_bf16(T))
      for (float& v : values) v = kernels::bf16_to_fp32(kernels::fp32_to_bf16(v));
  }

  // The input from token t on.
  kernels::MatmulInput at(int t) const {
    const size_t offset = static_cast<size_t>(t) * Cols;
    if constexpr (kernels::reads_q8(T))
      return {values.data() + offset, kernels::Q8In{qs.data(), d.data(), sum.data(), scaled_sum.data()}.at_block(
                                          offset / kernels::kQuantBlockElems)};
    else
      return {values.data() + offset, {nullptr, nullptr, nullptr, nullptr}};
  }
  kernels::Q8Out out() { return {qs.data(), d.data(), sum.data(), scaled_sum.data()}; }
};

template <TensorType T, int Rows, int Cols>
void check_matmul() {
  using kernels::matmul;
  CAPTURE(traits_of(T).name);
  CAPTURE(Rows);
  CAPTURE(Cols);
  const std::vector<uint8_t> gguf = random_weights(T, Rows, Cols, Rows * 1000 + Cols);
  const std::vector<uint8_t> w = matmul_layout(T, gguf, Rows, Cols);
  const TestInput<T, Cols> x(kMaxBatch, Cols);
  const std::vector<float>& xv = x.values;

  std::vector<float> y(kMaxBatch * Rows);
  matmul<T, Rows, Cols>(w.data(), x.at(0), y.data(), kMaxBatch);

  // Against the reference, within the worst-case error of summing Cols
  // products in float: (Cols + 8) roundings of at most the sum of |products|.
  std::vector<float> expected(y.size());
  kernels::ref_matmul(T, gguf.data(), Rows, Cols, xv.data(), expected.data(), kMaxBatch);
  std::vector<float> w_float(static_cast<size_t>(Rows) * Cols);
  kernels::dequantize_row(T, gguf.data(), w_float.data(), static_cast<int64_t>(Rows) * Cols);
  std::vector<double> tolerance(y.size());
  for (int t = 0; t < kMaxBatch; ++t) {
    for (int r = 0; r < Rows; ++r) {
      double magnitude = 0.0;
      for (int k = 0; k < Cols; ++k)
        magnitude += std::fabs(static_cast<double>(w_float[r * Cols + k]) * xv[t * Cols + k]);
      tolerance[t * Rows + r] = (Cols + 8) * kUnitRoundoff * magnitude;
    }
  }
  expect_close(y, expected, tolerance);

  if constexpr (kernels::reads_q8(T)) {
    // The portable integer code computes the same bits as the one in use.
    using Ops = kernels::PortableInt8Ops;
    std::vector<float> y_portable(y.size());
    for (int t = 0; t < kMaxBatch; ++t)
      for (int g = 0; g < kernels::interleaved_groups(Rows); ++g) {
        Ops::Acc out[1];
        const uint8_t* group = w.data() + g * kernels::interleaved_group_bytes(T, Cols);
        std::vector<int32_t> starts(Cols / kernels::kQuantBlockElems * kernels::starts_per_block(T));
        kernels::chain_starts<T>(x.at(t).q8, Cols / kernels::kQuantBlockElems, starts.data());
        kernels::dot_group_q8<Ops, T, Cols, 1>(group, x.at(t).q8, starts.data(), out);
        const int r0 = g * kernels::kInterleaveRows;
        Ops::store(out[0], y_portable.data() + t * Rows + r0, std::min(kernels::kInterleaveRows, Rows - r0));
      }
    expect_same_bits(y_portable, y);
  } else if constexpr (T != TensorType::F32 && !(kernels::reads_bf16(T) && kernels::kBf16Pairs) &&
                       !kernels::in_float_columns(TensorType::F32, Cols)) {
    // A float weight type computes exactly what F32 does on its dequantized
    // values (BF16's are rounded: `values` is; vdpbf16ps is another sum;
    // F32's column panels, another order).
    std::vector<float> y_f32(y.size());
    const auto* w_bytes = reinterpret_cast<const uint8_t*>(w_float.data());
    const std::vector<uint8_t> w_f32 =
        matmul_layout(TensorType::F32, {w_bytes, w_bytes + w_float.size() * sizeof(float)}, Rows, Cols);
    matmul<TensorType::F32, Rows, Cols>(w_f32.data(), x.at(0), y_f32.data(), kMaxBatch);
    expect_same_bits(y, y_f32);
  }

  // Same bits for every batch size, for a token alone, and on 1-3 threads.
  std::vector<float> y_n(y.size());
  for (int n = 1; n < kMaxBatch; ++n) {
    matmul<T, Rows, Cols>(w.data(), x.at(0), y_n.data(), n);
    expect_same_bits(y_n.data(), y.data(), static_cast<size_t>(n) * Rows);
  }
  for (int t = 0; t < kMaxBatch; ++t) {
    matmul<T, Rows, Cols>(w.data(), x.at(t), y_n.data(), 1);
    expect_same_bits(y_n.data(), y.data() + t * Rows, Rows);
  }
  for (int threads = 1; threads <= 3; ++threads) {
    for (int n : {1, kMaxBatch}) {
      std::fill(y_n.begin(), y_n.end(), 0.0f);
      in_parallel(threads, [&] {
        matmul<T, Rows, Cols, kernels::Store::Replace, kernels::Sync::NoWait>(w.data(), x.at(0), y_n.data(), n);
      });
      expect_same_bits(y_n.data(), y.data(), static_cast<size_t>(n) * Rows);
    }
  }

  // Store::Add adds each result to what y held.
  std::vector<float> sum = random_floats(y.size(), 99);
  std::vector<float> expected_sum(y.size());
  for (size_t i = 0; i < y.size(); ++i) expected_sum[i] = sum[i] + y[i];
  in_parallel(2, [&] { matmul<T, Rows, Cols, kernels::Store::Add>(w.data(), x.at(0), sum.data(), kMaxBatch); });
  expect_same_bits(sum, expected_sum);
}

// Row counts that leave a partial row group or tile alone (5: fewer than a
// quantized group of 8 or 16 rows and than a float generation tile of 4 or
// 16, one row past a prompt tile of 4, two past one of 2; float prompts'
// panel tile of 5 rows is whole there, and 2 rows past 13 of them at 67;
// quantized generation's unit of four groups takes 67's first 64 rows and
// leaves a partial group alone, as F32's column panels do with groups of
// kFloatLanes rows) and after several whole ones, unevenly
// shared by 2 and 3 threads (67). Each count is a compile of
// every kernel path of the type, in every instruction-set build, so a single
// row, which takes the partial paths 5 takes, is not a count of its own.
template <TensorType T, int Cols>
void check_matmul_all_rows() {
  check_matmul<T, 5, Cols>();
  check_matmul<T, 67, Cols>();
}

template <TensorType T, int Cols>
void check_get_rows() {
  CAPTURE(traits_of(T).name);
  constexpr int kRows = 6;
  const std::vector<uint8_t> w = random_weights(T, kRows, Cols, 7);
  const std::vector<int32_t> ids = {3, 0, 5, 3, 1};
  const int n = static_cast<int>(ids.size());

  // Expected: the rows as the reference forward pass decodes them (its own code, not kernels/).
  std::vector<float> expected;
  for (int t = 0; t < n; ++t) {
    const std::vector<float> row =
        reference_dequantize(static_cast<uint32_t>(T), w.data() + ids[t] * kiln::row_bytes(T, Cols), Cols);
    expected.insert(expected.end(), row.begin(), row.end());
  }
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> out(n * Cols);
    in_parallel(threads, [&] { kernels::get_rows<T, Cols>(w.data(), ids.data(), n, out.data()); });
    expect_decoded(T, out, expected);
  }
}

// Every row made of copies of `block` (built to hold a type's largest codes)
// times activations all at +127 or all at -127: the integer products are
// as large as they get, so an instruction set that sums them in 16 bits
// (AVX2) must widen in time.
template <TensorType T, class Block>
void check_largest_products(const Block& block) {
  CAPTURE(traits_of(T).name);
  constexpr int kRows = 19, kCols = 512;
  std::vector<Block> w(kRows * kCols / traits_of(T).block_elems, block);
  const std::vector<uint8_t> interleaved = matmul_layout(
      T, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(w.data()), reinterpret_cast<uint8_t*>(w.data() + w.size())),
      kRows, kCols);
  for (float sign : {1.0f, -1.0f}) {
    TestInput<T, kCols> extreme(2, 1);
    std::fill(extreme.qs.begin(), extreme.qs.end(), static_cast<int8_t>(127 * sign));
    std::fill(extreme.d.begin(), extreme.d.end(), 1.0f);
    std::fill(extreme.sum.begin(), extreme.sum.end(), static_cast<int32_t>(16 * 127 * sign));
    for (size_t b = 0; b < extreme.d.size(); ++b) {  // d times each half's sum, and the block's
      float* scaled = extreme.scaled_sum.data() + b * kernels::kQ8ScaledSums;
      scaled[0] = scaled[1] = 16 * 127 * sign;
      scaled[2] = 32 * 127 * sign;
    }
    std::fill(extreme.values.begin(), extreme.values.end(), 127 * sign);
    std::vector<float> y(2 * kRows), expected(2 * kRows);
    kernels::matmul<T, kRows, kCols>(interleaved.data(), extreme.at(0), y.data(), 2);
    kernels::ref_matmul(T, w.data(), kRows, kCols, extreme.values.data(), expected.data(), 2);
    for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

}  // namespace kiln::test
