// Kernels against their scalar references, plus the numerics contract: a
// result never depends on the batch size, a token's place in the batch, or
// the number of threads. Matmul is in test_kernels_matmul.cpp, the Q8
// activation rounding in test_kernels_q8.cpp, BF16 and the K-quants in
// test_kernels_kquant.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/activation.hpp"
#include "kernels/argmax.hpp"
#include "kernels/attention.hpp"
#include "kernels/fp16.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/norm.hpp"
#include "kernels/quant.hpp"
#include "kernels/reference.hpp"
#include "kernels/rope.hpp"
#include "tests/support/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::kernels;
using namespace kiln::test;

namespace {

// ---------------------------------------------------------------------------
// fp16

TEST_CASE("fp16: known values and edge cases") {
  struct Case {
    float value;
    uint16_t half;
  };
  const Case exact[] = {
      {0.0f, 0x0000},      {-0.0f, 0x8000},           {1.0f, 0x3c00},     {-2.0f, 0xc000},     {0.5f, 0x3800},
      {65504.0f, 0x7bff},  {0x1p-14f, 0x0400},        {0x1p-24f, 0x0001}, {0x3p-24f, 0x0003},  {0x3ffp-24f, 0x03ff},
      {-0x1p-24f, 0x8001}, {1.0f + 0x1p-10f, 0x3c01}, {INFINITY, 0x7c00}, {-INFINITY, 0xfc00},
  };
  for (const Case& c : exact) {
    CAPTURE(c.value);
    CHECK(fp32_to_fp16(c.value) == c.half);
    CHECK(fp16_to_fp32(c.half) == c.value);
    CHECK(std::signbit(fp16_to_fp32(c.half)) == std::signbit(c.value));
  }

  const Case rounded[] = {
      {1.0f + 0x1p-11f, 0x3c00},             // tie: rounds to the even mantissa 0
      {1.0f + 0x3p-11f, 0x3c02},             // tie: rounds to the even mantissa 2
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},  // just above the tie
      {65519.0f, 0x7bff},                    // below the midpoint to 2^16
      {65520.0f, 0x7c00},                    // the midpoint rounds (to even) to inf
      {1e10f, 0x7c00},
      {0x1p-25f, 0x0000},  // half the smallest subnormal: tie to 0
      {0x1.000002p-25f, 0x0001},
      {0x3p-25f, 0x0002},  // 1.5 units: tie to 2
      {0x1p-30f, 0x0000},
      {0x1p-140f, 0x0000},  // a float subnormal
      {-0x1p-140f, 0x8000},
      {0x1.ffcp-15f, 0x0400},  // rounds up into the smallest normal
  };
  for (const Case& c : rounded) {
    CAPTURE(c.value);
    CHECK(fp32_to_fp16(c.value) == c.half);
    CHECK(fp32_to_fp16_portable(c.value) == c.half);
  }

  CHECK(std::isnan(fp16_to_fp32(0x7e00)));
  CHECK(std::isnan(fp16_to_fp32(0x7c01)));
  CHECK((fp32_to_fp16(NAN) & 0x7c00) == 0x7c00);
  CHECK((fp32_to_fp16(NAN) & 0x03ff) != 0);
}

TEST_CASE("fp16: portable conversions match the ones in use on every input") {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto half = static_cast<uint16_t>(h);
    const float f = fp16_to_fp32(half);
    if (std::bit_cast<uint32_t>(fp16_to_fp32_portable(half)) != std::bit_cast<uint32_t>(f))
      FAIL("fp16_to_fp32 differs for half bits " << h);
    if (!std::isnan(f) && fp32_to_fp16(f) != half) FAIL("round trip changes half bits " << h);
  }

  // Floats around every finite half: the half itself, the midpoint to the
  // next one (a tie) and the floats just either side of it; then a sweep of
  // bit patterns. Floats between two neighbouring halves are evenly spaced,
  // so the midpoint's bits are the average of theirs.
  std::vector<float> probes;
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const float lo = fp16_to_fp32(static_cast<uint16_t>(h));
    const float hi = fp16_to_fp32(static_cast<uint16_t>(h + 1));
    const float mid = std::bit_cast<float>((std::bit_cast<uint32_t>(lo) + std::bit_cast<uint32_t>(hi)) / 2);
    for (float f : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      probes.push_back(f);
      probes.push_back(-f);
    }
  }
  for (uint64_t bits = 0; bits <= 0xffffffff; bits += 65521)
    probes.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));

  for (float f : probes) {
    if (fp32_to_fp16_portable(f) != fp32_to_fp16(f))
      FAIL("fp32_to_fp16 differs for float bits " << std::bit_cast<uint32_t>(f));
  }
}

// ---------------------------------------------------------------------------
// quantization

TEST_CASE("quant: Q8_0 known blocks") {
  // d = 1/127 rounds to fp16 0x2008 = 2^-7 * (1 + 8/1024) = 0.00787353515625.
  std::vector<float> x(32, 0.25f);
  x[0] = 1.0f;
  BlockQ8_0 block;
  quantize_row(TensorType::Q8_0, x.data(), &block, 32);
  CHECK(block.d == 0x2008);
  CHECK(block.qs[0] == 127);
  for (int j = 1; j < 32; ++j) CHECK(block.qs[j] == 32);  // round(0.25 * 127 = 31.75)

  std::vector<float> back(32);
  dequantize_row(TensorType::Q8_0, &block, back.data(), 32);
  CHECK(back[0] == 0.99993896484375f);  // 127 * d
  CHECK(back[1] == 0.251953125f);       // 32 * d

  // Integers up to 127 in magnitude are stored exactly with d = 1.
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j * 8 - 127);
  quantize_row(TensorType::Q8_0, x.data(), &block, 32);
  CHECK(block.d == 0x3c00);
  for (int j = 0; j < 32; ++j) CHECK(block.qs[j] == j * 8 - 127);
}

TEST_CASE("quant: Q4_0 known blocks") {
  // Largest magnitude -8 gives d = 1; value v is stored as nibble v + 8.
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j % 16 - 8);
  BlockQ4_0 block;
  quantize_row(TensorType::Q4_0, x.data(), &block, 32);
  CHECK(block.d == 0x3c00);
  for (int j = 0; j < 16; ++j) CHECK(block.qs[j] == j * 0x11);  // element j low nibble, j + 16 high

  // Largest magnitude +4 gives d = -0.5 (0xb800): 4 -> nibble 0, 1 -> nibble 6.
  x.assign(32, 1.0f);
  x[3] = 4.0f;
  quantize_row(TensorType::Q4_0, x.data(), &block, 32);
  CHECK(block.d == 0xb800);
  for (int j = 0; j < 16; ++j) CHECK(block.qs[j] == (j == 3 ? 0x60 : 0x66));

  std::vector<float> back(32);
  dequantize_row(TensorType::Q4_0, &block, back.data(), 32);
  expect_same_bits(back, x);  // these values are exactly representable
}

TEST_CASE("quant: round trips") {
  const int n = 32 * 9;
  std::vector<float> x = random_floats(n, 1, -3.0f, 3.0f);
  for (int j = 32; j < 64; ++j) x[j] = 0.0f;  // an all-zero block must stay zero
  std::vector<float> back(n);

  for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_0}) {
    CAPTURE(traits_of(t).name);
    std::vector<uint8_t> q(row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    dequantize_row(t, q.data(), back.data(), n);

    for (int b = 0; b < n / 32; ++b) {
      float amax = 0.0f;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
      for (int j = 0; j < 32; ++j) {
        const int i = b * 32 + j;
        // Allowed error: rounding to the grid, plus d's own fp16 rounding
        // (relative 2^-11) times the largest grid index; Q4_0 may also clamp
        // the element opposite the maximum from 8 to 7 steps (one full step).
        double tol = 0.0;
        if (t == TensorType::F16) tol = std::fabs(x[i]) * 0x1p-11;
        if (t == TensorType::Q8_0) tol = amax / 127.0 * (0.5 + 127 * 0x1p-11);
        if (t == TensorType::Q4_0) tol = amax / 8.0 * (1.0 + 8 * 0x1p-11);
        if (std::fabs(back[i] - x[i]) > tol) FAIL_CHECK("element " << i << ": " << back[i] << " vs " << x[i]);
      }
    }

    // Quantizing dequantized values reproduces the same bytes.
    std::vector<uint8_t> again(q.size());
    quantize_row(t, back.data(), again.data(), n);
    CHECK(again == q);
  }
}

// ---------------------------------------------------------------------------
// rmsnorm

template <int N>
void check_rmsnorm() {
  CAPTURE(N);
  const std::vector<float> x = random_floats(kMaxBatch * N, N, -4.0f, 4.0f);
  const std::vector<float> weight = random_floats(N, N + 1, 0.5f, 1.5f);
  const float eps = 1e-5f;

  std::vector<float> out(x.size());
  rmsnorm<N>(x.data(), weight.data(), out.data(), kMaxBatch, eps);

  // A float sum of N squares is off by at most N roundings; a few more come
  // from the division, square root and products.
  std::vector<float> expected(x.size());
  ref_rmsnorm(x.data(), weight.data(), expected.data(), N, kMaxBatch, eps);
  std::vector<double> tolerance(x.size());
  for (size_t i = 0; i < x.size(); ++i) tolerance[i] = (N + 8) * kUnitRoundoff * std::fabs(expected[i]);
  expect_close(out, expected, tolerance);

  // In place, batched differently, on 1-3 threads: same bits.
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> in_place = x;
    in_parallel(threads, [&] { rmsnorm<N>(in_place.data(), weight.data(), in_place.data(), kMaxBatch, eps); });
    expect_same_bits(in_place, out);
  }
  std::vector<float> single(N);
  rmsnorm<N>(x.data() + 5 * N, weight.data(), single.data(), 1, eps);
  expect_same_bits(single.data(), out.data() + 5 * N, N);
}

TEST_CASE("rmsnorm") {
  check_rmsnorm<7>();
  check_rmsnorm<64>();
  check_rmsnorm<288>();
}

// ---------------------------------------------------------------------------
// rope

TEST_CASE("rope_inv_freq") {
  std::vector<float> inv_freq(4);
  rope_inv_freq(10000.0f, 8, inv_freq.data());
  CHECK(inv_freq[0] == 1.0f);
  CHECK(inv_freq[1] == doctest::Approx(0.1).epsilon(1e-6));
  CHECK(inv_freq[2] == doctest::Approx(0.01).epsilon(1e-6));
  CHECK(inv_freq[3] == doctest::Approx(0.001).epsilon(1e-6));
}

// The queries' or the keys' tolerance: cosf/sinf are within an ulp or so and
// each rotated output adds two products; unrotated dimensions stay exact.
std::vector<double> rope_tolerance(RopeStyle style, const std::vector<float>& x, int n_heads, int head_dim,
                                   int rot_dim, float mscale) {
  std::vector<double> tolerance(x.size(), 0.0);
  const int dim = n_heads * head_dim;
  for (int t = 0; t < kMaxBatch; ++t)
    for (int h = 0; h < n_heads; ++h)
      for (int i = 0; i < rot_dim / 2; ++i) {
        const int a = t * dim + h * head_dim + rope_first(style, i);
        const int b = t * dim + h * head_dim + rope_second(style, i, rot_dim / 2);
        const double magnitude = (std::fabs(x[a]) + std::fabs(x[b])) * mscale;
        tolerance[a] = tolerance[b] = 6 * kUnitRoundoff * magnitude;
      }
  return tolerance;
}

template <RopeStyle Style, int QHeads, int KHeads, int HeadDim, int RotDim>
void check_rope(int pos0, float mscale) {
  CAPTURE(Style == RopeStyle::Neox);
  CAPTURE(QHeads);
  CAPTURE(KHeads);
  CAPTURE(HeadDim);
  CAPTURE(RotDim);
  CAPTURE(pos0);
  CAPTURE(mscale);
  constexpr int kQDim = QHeads * HeadDim;
  constexpr int kKDim = KHeads * HeadDim;
  std::vector<float> inv_freq(RotDim / 2);
  rope_inv_freq(10000.0f, RotDim, inv_freq.data());
  const std::vector<float> q = random_floats(kMaxBatch * kQDim, kQDim + pos0);
  const std::vector<float> k = random_floats(kMaxBatch * kKDim, kKDim + pos0 + 1);

  std::vector<float> q_out = q;
  std::vector<float> k_out = k;
  rope<Style, QHeads, KHeads, HeadDim, RotDim>(q_out.data(), k_out.data(), kMaxBatch, pos0, inv_freq.data(), mscale);

  std::vector<float> q_expected = q;
  std::vector<float> k_expected = k;
  ref_rope(Style, q_expected.data(), kMaxBatch, QHeads, HeadDim, RotDim, pos0, inv_freq.data(), mscale);
  ref_rope(Style, k_expected.data(), kMaxBatch, KHeads, HeadDim, RotDim, pos0, inv_freq.data(), mscale);
  expect_close(q_out, q_expected, rope_tolerance(Style, q, QHeads, HeadDim, RotDim, mscale));
  expect_close(k_out, k_expected, rope_tolerance(Style, k, KHeads, HeadDim, RotDim, mscale));

  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> q_again = q;
    std::vector<float> k_again = k;
    in_parallel(threads, [&] {
      rope<Style, QHeads, KHeads, HeadDim, RotDim, Sync::NoWait>(q_again.data(), k_again.data(), kMaxBatch, pos0,
                                                                 inv_freq.data(), mscale);
    });
    expect_same_bits(q_again, q_out);
    expect_same_bits(k_again, k_out);
  }
  for (int t = 0; t < kMaxBatch; ++t) {
    std::vector<float> q_single(q.begin() + t * kQDim, q.begin() + (t + 1) * kQDim);
    std::vector<float> k_single(k.begin() + t * kKDim, k.begin() + (t + 1) * kKDim);
    rope<Style, QHeads, KHeads, HeadDim, RotDim>(q_single.data(), k_single.data(), 1, pos0 + t, inv_freq.data(),
                                                 mscale);
    expect_same_bits(q_single.data(), q_out.data() + t * kQDim, kQDim);
    expect_same_bits(k_single.data(), k_out.data() + t * kKDim, kKDim);
  }
}

TEST_CASE("rope, adjacent pairs and halves") {
  for (int pos0 : {0, 1000}) {
    check_rope<RopeStyle::Adjacent, 3, 1, 16, 16>(pos0, 1.0f);
    check_rope<RopeStyle::Adjacent, 2, 2, 12, 6>(pos0, 1.0f);  // partial rotation: dims 6..11 untouched
    check_rope<RopeStyle::Neox, 3, 1, 16, 16>(pos0, 1.0f);
    check_rope<RopeStyle::Neox, 4, 2, 12, 6>(pos0, 1.0f);
  }
}

TEST_CASE("rope scaled by LongRoPE's attention factor: partial halves, as Phi-4-mini turns them") {
  for (int pos0 : {0, 1000}) {
    check_rope<RopeStyle::Neox, 2, 1, 16, 12>(pos0, 1.19024f);
    check_rope<RopeStyle::Adjacent, 3, 3, 16, 16>(pos0, 0.5f);
  }
}

// ---------------------------------------------------------------------------
// attention

// A random cache of n elements of type T, and its elements as floats.
template <TensorType T>
std::vector<CacheValue<T>> random_cache(size_t n, uint32_t seed, float lo, float hi) {
  const std::vector<float> values = random_floats(n, seed, lo, hi);
  std::vector<CacheValue<T>> cache(n);
  quantize_row(T, values.data(), cache.data(), static_cast<int64_t>(n));
  return cache;
}

// A cache of `rows` rows of Dim values as the attention kernel reads it
// (kv_cache.hpp's layout: keys blocked, values blocked for narrow heads). A
// blocked cache's rows past `rows`, in its last block, hold NaN, which no
// result may see.
template <bool Blocked, int Dim, class Value>
std::vector<Value> kernel_layout(const std::vector<Value>& by_row, int64_t rows) {
  const Value nan = std::is_same_v<Value, float> ? Value(NAN) : Value(0x7e00);
  std::vector<Value> cache(kv_rows_allocated<Blocked>(rows) * Dim, nan);
  for (int64_t r = 0; r < rows; ++r) write_kv_row<Blocked, Dim>(by_row.data() + r * Dim, cache.data(), r);
  return cache;
}

// A sliding-window layer's cache as a ring of kRing rows (position j in row
// j % kRing, written in order, so a row holds the last position that maps to
// it) gives the same bits as the cache indexed by position: k and v hold
// every position up to the last query's (sinks: null, or each head's).
template <int NHead, int NHeadKV, int HeadDim, TensorType KvType>
void check_ring_attention(const std::vector<float>& q, const std::vector<CacheValue<KvType>>& k,
                          const std::vector<CacheValue<KvType>>& v, const std::vector<float>& expected, int pos0,
                          int window, float scale, const float* sinks) {
  constexpr int kRing = 64;
  REQUIRE(window + kMaxBatch - 1 <= kRing);
  constexpr int kKVDim = NHeadKV * HeadDim;
  const int n_pos = pos0 + kMaxBatch;
  std::vector<CacheValue<KvType>> k_ring(kRing * kKVDim), v_ring(kRing * kKVDim);
  for (int j = 0; j < n_pos; ++j) {
    std::copy_n(k.begin() + j * kKVDim, kKVDim, k_ring.begin() + j % kRing * kKVDim);
    std::copy_n(v.begin() + j * kKVDim, kKVDim, v_ring.begin() + j % kRing * kKVDim);
  }
  k_ring = kernel_layout<true, kKVDim>(k_ring, kRing);
  v_ring = kernel_layout<kv_values_blocked<HeadDim>, kKVDim>(v_ring, kRing);
  std::vector<float> scores(2 * kAttentionScratchRows<NHead, NHeadKV, HeadDim> * n_pos);
  for (int threads = 1; threads <= 2; ++threads) {
    std::vector<float> out(q.size());
    in_parallel(threads, [&] {
      attention<NHead, NHeadKV, HeadDim, KvType, Sync::Barrier, kRing>(q.data(), k_ring.data(), v_ring.data(),
                                                                         out.data(), kMaxBatch, pos0, scores.data(),
                                                                         n_pos, scale, window, sinks);
    });
    expect_same_bits(out, expected);
  }
}

// With sinks, each head's own logit (gpt-oss's attention sinks) in the
// range of the scores, so that it takes a visible share of the softmax.
template <int NHead, int NHeadKV, int HeadDim, TensorType KvType>
void check_attention(int pos0, int window = 0, bool with_sinks = false) {
  CAPTURE(window);
  CAPTURE(with_sinks);
  CAPTURE(NHead);
  CAPTURE(NHeadKV);
  CAPTURE(HeadDim);
  CAPTURE(KvType == TensorType::F16);
  CAPTURE(pos0);
  constexpr int kQDim = NHead * HeadDim;
  constexpr int kKVDim = NHeadKV * HeadDim;
  const int n_pos = pos0 + kMaxBatch;
  const std::vector<float> q = random_floats(kMaxBatch * kQDim, 1, -2.0f, 2.0f);
  const auto k = random_cache<KvType>(n_pos * kKVDim, 2, -2.0f, 2.0f);
  const auto v = random_cache<KvType>(n_pos * kKVDim, 3, -1.0f, 1.0f);
  const int stride = n_pos;
  std::vector<float> scores(3 * kAttentionScratchRows<NHead, NHeadKV, HeadDim> * stride);  // up to 3 threads
  // Gemma's scale where there is a window, the usual one elsewhere.
  const float scale = window > 0 ? 0.75f / std::sqrt(float(HeadDim)) : 1.0f / std::sqrt(float(HeadDim));
  const std::vector<float> sink_logits = random_floats(NHead, 4, -2.0f, 3.0f);
  const float* sinks = with_sinks ? sink_logits.data() : nullptr;
  const auto k_kernel = kernel_layout<true, kKVDim>(k, n_pos);
  const auto v_kernel = kernel_layout<kv_values_blocked<HeadDim>, kKVDim>(v, n_pos);
  auto run = [&](int first, int n, float* out) {
    attention<NHead, NHeadKV, HeadDim, KvType>(q.data() + first * kQDim, k_kernel.data(), v_kernel.data(), out, n,
                                               pos0 + first, scores.data(), stride, scale, window, sinks);
  };

  std::vector<float> out(q.size());
  run(0, kMaxBatch, out.data());

  // A score's error (about HeadDim roundings of |q|.|k| <= 4 * HeadDim) is an
  // absolute error of the exponent, i.e. a relative error of its softmax
  // weight; the weights' normalisation and the weighted sum of values
  // (|v| <= 1) add about n_pos more roundings. The reference reads the same
  // cache elements, so an F16 cache adds no error of its own here.
  std::vector<float> expected(q.size());
  ref_attention(KvType, q.data(), k.data(), v.data(), expected.data(), kMaxBatch, pos0, NHead, NHeadKV, HeadDim, scale,
                window, sinks);
  const double score_error = (HeadDim + 4) * kUnitRoundoff * 4 * HeadDim / std::sqrt(HeadDim);
  std::vector<double> tolerance(q.size());
  for (int t = 0; t < kMaxBatch; ++t)
    for (int i = 0; i < kQDim; ++i) tolerance[t * kQDim + i] = 2 * score_error + (pos0 + t + 16) * kUnitRoundoff;
  expect_close(out, expected, tolerance);

  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> again(q.size());
    in_parallel(threads, [&] { run(0, kMaxBatch, again.data()); });
    expect_same_bits(again, out);
    // One token at a time: fewer queries per work item than the kernel
    // groups when it has enough of them.
    std::vector<float> token_by_token(q.size());
    in_parallel(threads, [&] {
      for (int t = 0; t < kMaxBatch; ++t) run(t, 1, token_by_token.data() + t * kQDim);
    });
    expect_same_bits(token_by_token, out);
  }
  // The same queries in batches of any size give the same bits.
  for (int batch = 1; batch < kMaxBatch; ++batch) {
    CAPTURE(batch);
    std::vector<float> chunked(q.size());
    for (int first = 0; first < kMaxBatch; first += batch)
      run(first, std::min(batch, kMaxBatch - first), chunked.data() + first * kQDim);
    expect_same_bits(chunked, out);
  }
  if (window > 0) check_ring_attention<NHead, NHeadKV, HeadDim, KvType>(q, k, v, out, pos0, window, scale, sinks);
}

template <TensorType KvType>
void check_attention_shapes() {
  // 150: past the end of the sliding-window checks' ring (check_ring_attention).
  for (int pos0 : {0, 5, 38, 150}) {
    check_attention<4, 2, 16, KvType>(pos0);  // grouped-query: 2 query heads per kv head
    check_attention<8, 1, 32, KvType>(pos0);  // 8 query heads per kv head, as tinyllama's
    check_attention<2, 2, 32, KvType>(pos0);  // one head per kv head: several tokens per work item
    check_attention<3, 3, 8, KvType>(pos0);
    check_attention<2, 1, 12, KvType>(pos0);  // head size not a multiple of the SIMD width
    check_attention<3, 1, 13, KvType>(pos0);  // odd head size
    // Heads of 8 (stories260K's shape: 2 query heads per kv head) and 4,
    // narrower than a vector with AVX-512 or AVX2: a blocked cache.
    check_attention<8, 4, 8, KvType>(pos0);
    check_attention<2, 1, 4, KvType>(pos0);
    check_attention<6, 2, 8, KvType>(pos0);  // 3 heads per kv head: a pair taken together, and one alone
    check_attention<8, 4, 8, KvType>(pos0, 13);
    check_attention<8, 4, 8, KvType>(pos0, 0, true);
    // A sliding window shorter than the positions (Gemma 3): 1 (each query
    // sees only itself), and a window that ends inside a block of keys.
    check_attention<4, 2, 16, KvType>(pos0, 1);
    check_attention<8, 1, 32, KvType>(pos0, 13);
    check_attention<3, 1, 13, KvType>(pos0, 21);
    // Attention sinks, over the whole context and in a window (gpt-oss).
    check_attention<4, 2, 16, KvType>(pos0, 0, true);
    check_attention<3, 1, 13, KvType>(pos0, 13, true);
  }
}

TEST_CASE("attention, F32 cache") { check_attention_shapes<TensorType::F32>(); }
TEST_CASE("attention, F16 cache") { check_attention_shapes<TensorType::F16>(); }

// The rows of a cache (laid out as Blocked says) from row0 on, as a row cache holds them.
template <bool Blocked, int Dim, class Value>
std::vector<Value> rows_of(const std::vector<Value>& cache, int row0, int rows) {
  std::vector<Value> by_row(size_t(rows) * Dim);
  for (int r = 0; r < rows; ++r) read_kv_row<Blocked, Dim>(cache.data(), row0 + r, by_row.data() + r * Dim);
  return by_row;
}

// Keys are always blocked; values as ValuesBlocked says.
template <bool ValuesBlocked>
void check_store_kv() {
  CAPTURE(ValuesBlocked);
  constexpr int kDim = 37;   // not a multiple of the SIMD width
  constexpr int kRow0 = 5;   // inside a block
  constexpr int64_t kKeyRows = kv_rows_allocated<true>(kRow0 + kMaxBatch);
  constexpr int64_t kValueRows = kv_rows_allocated<ValuesBlocked>(kRow0 + kMaxBatch);
  const std::vector<float> k = random_floats(kMaxBatch * kDim, 21, -70000.0f, 70000.0f);  // beyond F16's range too
  const std::vector<float> v = random_floats(kMaxBatch * kDim, 22, -1e-6f, 1e-6f);        // F16 subnormals
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<uint16_t> k16(kKeyRows * kDim), v16(kValueRows * kDim);
    std::vector<float> k32(kKeyRows * kDim), v32(kValueRows * kDim);
    in_parallel(threads, [&] {
      store_kv<TensorType::F16, kDim, ValuesBlocked>(k.data(), v.data(), k16.data(), v16.data(), kRow0, kMaxBatch);
      store_kv<TensorType::F32, kDim, ValuesBlocked>(k.data(), v.data(), k32.data(), v32.data(), kRow0, kMaxBatch);
    });
    const auto k16_rows = rows_of<true, kDim>(k16, kRow0, kMaxBatch);
    const auto v16_rows = rows_of<ValuesBlocked, kDim>(v16, kRow0, kMaxBatch);
    for (size_t i = 0; i < k.size(); ++i) {
      CHECK(k16_rows[i] == fp32_to_fp16_portable(k[i]));
      CHECK(v16_rows[i] == fp32_to_fp16_portable(v[i]));
    }
    expect_same_bits(rows_of<true, kDim>(k32, kRow0, kMaxBatch), k);
    expect_same_bits(rows_of<ValuesBlocked, kDim>(v32, kRow0, kMaxBatch), v);
  }
}

TEST_CASE("store_kv copies F32 and rounds F16 like fp32_to_fp16, whatever the batch or threads") {
  check_store_kv<false>();
  check_store_kv<true>();
}

TEST_CASE("kv_index: a blocked cache holds each element of each row once, blocks where rows do") {
  constexpr int kDim = 5;
  constexpr int kRows = 3 * kKvBlock;
  std::vector<int> seen(kRows * kDim, 0);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kDim; ++c) ++seen[kv_index<true, kDim>(r, c)];
  CHECK(std::count(seen.begin(), seen.end(), 1) == kRows * kDim);
  CHECK(kv_index<true, kDim>(2 * kKvBlock, 0) == kv_index<false, kDim>(2 * kKvBlock, 0));
}

// ---------------------------------------------------------------------------
// element-wise

TEST_CASE("swiglu") {
  constexpr int kN = 37;
  const std::vector<float> gate = random_floats(kMaxBatch * kN, 11, -10.0f, 10.0f);
  const std::vector<float> up = random_floats(kMaxBatch * kN, 12);

  std::vector<float> expected = gate;
  ref_swiglu(expected.data(), up.data(), kMaxBatch * kN);
  std::vector<double> tolerance(gate.size());
  for (size_t i = 0; i < gate.size(); ++i) tolerance[i] = 8 * kUnitRoundoff * std::fabs(expected[i]);

  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> out = gate;
    in_parallel(threads, [&] { swiglu<kN>(out.data(), up.data(), kMaxBatch); });
    expect_close(out, expected, tolerance);
  }
}

TEST_CASE("swiglu, gpt-oss's clamped form") {
  constexpr int kN = 37;
  // Gates and ups on both sides of the limit of 7.
  const std::vector<float> gate = random_floats(kMaxBatch * kN, 15, -12.0f, 12.0f);
  const std::vector<float> up = random_floats(kMaxBatch * kN, 16, -12.0f, 12.0f);

  std::vector<float> expected = gate;
  ref_swiglu_clamped(expected.data(), up.data(), kMaxBatch * kN);
  // exp's argument, alpha * x rounded to float, is off by up to half a unit
  // of its last place, which exp turns into a relative error of about |alpha
  // x| units of the result's; the rest (exp itself, the division, the
  // products) a few more.
  std::vector<double> tolerance(gate.size());
  for (size_t i = 0; i < gate.size(); ++i) {
    const double exponent = kClampedGluAlpha * std::fabs(std::min(gate[i], kClampedGluLimit));
    tolerance[i] = (8 + exponent) * kUnitRoundoff * std::fabs(expected[i]);
  }

  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> out = gate;
    in_parallel(threads, [&] { swiglu<kN, Glu::Clamped>(out.data(), up.data(), kMaxBatch); });
    expect_close(out, expected, tolerance);
  }
}

TEST_CASE("add_bias adds the same vector to every token, exactly") {
  constexpr int kN = 37;
  const std::vector<float> x = random_floats(kMaxBatch * kN, 13);
  const std::vector<float> bias = random_floats(kN, 14);
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> out = x;
    in_parallel(threads, [&] { add_bias<kN>(out.data(), bias.data(), kMaxBatch); });
    for (int t = 0; t < kMaxBatch; ++t)
      for (int i = 0; i < kN; ++i) CHECK(out[t * kN + i] == x[t * kN + i] + bias[i]);
  }
}

TEST_CASE("add_biased adds a projection plus its bias to the residual, the bias to the projection first") {
  constexpr int kN = 37;
  const std::vector<float> x = random_floats(kMaxBatch * kN, 15);
  const std::vector<float> y = random_floats(kMaxBatch * kN, 16);
  const std::vector<float> bias = random_floats(kN, 17);
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> out = x;
    in_parallel(threads, [&] { add_biased<kN>(y.data(), bias.data(), out.data(), kMaxBatch); });
    for (int t = 0; t < kMaxBatch; ++t)
      for (int i = 0; i < kN; ++i) CHECK(out[t * kN + i] == x[t * kN + i] + (y[t * kN + i] + bias[i]));
  }
}

TEST_CASE("argmax: the first of the largest, NaNs passed over, at odd sizes") {
  for (int n : {1, 2, 7, 16, 17, 33, 100, 1001}) {
    CAPTURE(n);
    const std::vector<float> x = random_floats(n, n, -8.0f, 8.0f);
    CHECK(argmax(x.data(), n) == ref_argmax(x.data(), n));
    for (int at : {0, n / 2, n - 1}) {
      CAPTURE(at);
      std::vector<float> tied = x;
      tied[at] = 9.0f;
      tied[n - 1] = 9.0f;  // a tie with the last value: the lower index wins
      CHECK(argmax(tied.data(), n) == at);
      std::vector<float> with_nan = tied;
      with_nan[at] = NAN;  // passed over, unless at 0
      CHECK(argmax(with_nan.data(), n) == ref_argmax(with_nan.data(), n));
      std::vector<float> zeros(n, -INFINITY);
      zeros[at] = -0.0f;
      zeros[n - 1] = 0.0f;  // -0 == +0: the first
      CHECK(argmax(zeros.data(), n) == at);
    }
  }
}

TEST_CASE("softmax") {
  for (int n : {1, 2, 9, 100}) {
    CAPTURE(n);
    std::vector<float> x = random_floats(n, n, -10.0f, 10.0f);
    x[0] = 80.0f;  // exp(80) overflows float: only works if the max is subtracted
    std::vector<float> expected = x;
    ref_softmax(expected.data(), n);
    softmax(x.data(), n);

    // exp(x - max) is off relatively by up to |x - max| roundings (<= 90 here)
    // and the sum adds n more.
    std::vector<double> tolerance(n);
    for (int i = 0; i < n; ++i) tolerance[i] = (n + 100) * kUnitRoundoff * expected[i] + 1e-38;
    expect_close(x, expected, tolerance);

    // With a sink below and above the largest value: its share leaves the
    // weights summing to less than 1.
    for (float sink : {70.0f, 81.0f}) {
      CAPTURE(sink);
      std::vector<float> y = random_floats(n, n, -10.0f, 10.0f), expected_y;
      y[0] = 80.0f;
      expected_y = y;
      ref_softmax(expected_y.data(), n, sink);
      softmax(y.data(), n, sink);
      std::vector<double> tolerance_y(n);
      for (int i = 0; i < n; ++i) tolerance_y[i] = (n + 100) * kUnitRoundoff * expected_y[i] + 1e-38;
      expect_close(y, expected_y, tolerance_y);
    }
  }
}

}  // namespace
