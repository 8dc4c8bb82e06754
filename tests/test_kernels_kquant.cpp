// BF16 and the K-quants (Q4_K, Q5_K, Q6_K): blocks built by hand from the
// layout, quantization round trips, matmul and get_rows against the scalar
// reference, and the dequantizers against the files llama.cpp made from the
// same matrices as ../shared/models/synthetic/llama-f32.gguf.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "kernels/bf16.hpp"
#include "kernels/fp16.hpp"
#include "kernels/matmul.hpp"
#include "kernels/quant.hpp"
#include "kernels/quant_k.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/kernel_checks.hpp"
#include "tests/support/reference_dequant.hpp"

using namespace kiln;
using namespace kiln::kernels;
using namespace kiln::test;

namespace {

std::vector<float> dequantized(TensorType t, const void* data, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  dequantize_row(t, data, out.data(), n);
  return out;
}

// ---------------------------------------------------------------------------
// BF16

TEST_CASE("bf16: known values, rounding and special values") {
  struct Case {
    float value;
    uint16_t bf16;
  };
  // 0x0001 is the smallest subnormal bf16, 0x7f7f the largest finite one.
  const Case exact[] = {
      {0.0f, 0x0000},      {-0.0f, 0x8000},    {1.0f, 0x3f80},      {-2.0f, 0xc000},       {3.140625f, 0x4049},
      {0x1p-133f, 0x0001}, {INFINITY, 0x7f80}, {-INFINITY, 0xff80}, {0x1.fep127f, 0x7f7f},
  };
  for (const Case& c : exact) {
    CAPTURE(c.value);
    CHECK(fp32_to_bf16(c.value) == c.bf16);
    CHECK(std::bit_cast<uint32_t>(bf16_to_fp32(c.bf16)) == std::bit_cast<uint32_t>(c.value));
  }

  const Case rounded[] = {
      {1.0f + 0x1p-8f, 0x3f80},                // tie: rounds to the even mantissa 0
      {1.0f + 0x3p-8f, 0x3f82},                // tie: rounds to the even mantissa 2
      {1.0f + 0x1p-8f + 0x1p-20f, 0x3f81},     // just above the tie
      {-(1.0f + 0x1p-8f - 0x1p-20f), 0xbf80},  // just below the tie
      {0x1.ffp127f, 0x7f80},                   // the midpoint to 2^128 rounds (to even) to inf
      {0x1p-149f, 0x0000},                     // the smallest float subnormal
  };
  for (const Case& c : rounded) {
    CAPTURE(c.value);
    CHECK(fp32_to_bf16(c.value) == c.bf16);
  }

  // A NaN whose payload lies only in the dropped bits stays a NaN.
  CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(std::bit_cast<float>(0x7f800001u)))));
  CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(NAN))));
  CHECK(std::isnan(bf16_to_fp32(0x7fc0)));
}

TEST_CASE("bf16: rows round trip") {
  const std::vector<float> x = random_floats(77, 3, -100.0f, 100.0f);
  std::vector<uint16_t> q(x.size());
  quantize_row(TensorType::BF16, x.data(), q.data(), static_cast<int64_t>(x.size()));
  const std::vector<float> back = dequantized(TensorType::BF16, q.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(q[i] == fp32_to_bf16(x[i]));
    CHECK(std::fabs(back[i] - x[i]) <= std::fabs(x[i]) * 0x1p-8);  // half an ulp of 8 significant bits
  }
}

#ifdef KILN_BF16_PAIRS
TEST_CASE("bf16: activations rounded for vdpbf16ps have fp32_to_bf16's bits, over odd lengths") {
  std::vector<float> x = random_floats(16 * 9 + 7, 5, -1e3f, 1e3f);
  // Ties, both sides of them, subnormals (which vcvtneps2bf16 would flush),
  // infinities, the largest floats and NaNs, among the random values.
  const uint32_t special[] = {0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff, 0x00000001, 0x807fffff, 0x00400000,
                              0x7f800000, 0xff800000, 0x7f7fffff, 0xff7fffff, 0x7f800001, 0xffc00000, 0x7fffffff};
  for (size_t i = 0; i < std::size(special); ++i) x[7 * i + 3] = std::bit_cast<float>(special[i]);
  for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, static_cast<int64_t>(x.size())}) {
    CAPTURE(n);
    std::vector<uint16_t> rounded(static_cast<size_t>(n));
    round_to_bf16(x.data(), rounded.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      CAPTURE(i);
      CHECK(rounded[i] == fp32_to_bf16(x[i]));
    }
  }
}
#endif

// ---------------------------------------------------------------------------
// K-quant blocks built by hand

// Scales and mins for the 8 sub-blocks of the hand-built Q4_K/Q5_K blocks, in
// the packed layout: sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scales)
// and 4-7 (mins); sub-blocks 4-7 with low 4 bits in bytes 8-11 and top 2 bits
// in the top bits of bytes 0-3 and 4-7.
constexpr int kScales[8] = {1, 2, 3, 4, 17, 33, 50, 63};
constexpr int kMins[8] = {0, 5, 10, 63, 16, 32, 48, 7};
constexpr uint8_t kPackedScaleMins[12] = {
    0x41, 0x82, 0xc3, 0xc4,  // scales 1-4; top bits 01, 10, 11, 11 of scales 17, 33, 50, 63
    0x40, 0x85, 0xca, 0x3f,  // mins 0, 5, 10, 63; top bits 01, 10, 11, 00 of mins 16, 32, 48, 7
    0x01, 0x01, 0x02, 0x7f,  // low nibbles: scales 1, 1, 2, 15 and mins 0, 0, 0, 7
};

template <class Block>
Block hand_built_affine_block() {
  Block b{};
  b.d = 0x3c00;     // 1.0
  b.dmin = 0x3800;  // 0.5
  std::copy(std::begin(kPackedScaleMins), std::end(kPackedScaleMins), b.scales);
  for (int i = 0; i < 128; ++i) b.qs[i] = static_cast<uint8_t>(i);
  return b;
}

// Low 4 bits of element e's code when qs[i] = i: each 64 elements share 32
// bytes, the first 32 in the low nibbles, the next 32 in the high nibbles.
int hand_built_low_bits(int e) {
  const int byte = 32 * (e / 64) + e % 32;
  return e % 64 < 32 ? byte & 0x0f : byte >> 4;
}

TEST_CASE("Q4_K: a block built by hand") {
  const BlockQ4_K b = hand_built_affine_block<BlockQ4_K>();
  for (int s = 0; s < 8; ++s) {
    CAPTURE(s);
    CHECK(unpack_scale_min(b.scales, s).scale == kScales[s]);
    CHECK(unpack_scale_min(b.scales, s).min == kMins[s]);
  }
  const std::vector<float> v = dequantized(TensorType::Q4_K, &b, kSuperBlockElems);
  // value = d * scale * code - dmin * min
  CHECK(v[0] == 0.0f);
  CHECK(v[5] == 5.0f);      // code 5 of qs[5]
  CHECK(v[40] == -2.5f);    // high nibble of qs[8] = 0: 0 - 0.5 * 5
  CHECK(v[71] == 16.0f);    // low nibble of qs[39] = 0x27: 3 * 7 - 0.5 * 10
  CHECK(v[120] == -19.5f);  // high nibble of qs[56] = 0x38: 4 * 3 - 0.5 * 63
  CHECK(v[150] == 94.0f);   // low nibble of qs[86] = 0x56: 17 * 6 - 0.5 * 16
  CHECK(v[180] == 149.0f);  // high nibble of qs[84] = 0x54: 33 * 5 - 0.5 * 32
  CHECK(v[200] == 376.0f);  // low nibble of qs[104] = 0x68: 50 * 8 - 0.5 * 48
  CHECK(v[255] == 437.5f);  // high nibble of qs[127] = 0x7f: 63 * 7 - 0.5 * 7
  for (int e = 0; e < kSuperBlockElems; ++e) {
    CAPTURE(e);
    CHECK(v[e] == static_cast<float>(kScales[e / 32] * hand_built_low_bits(e)) - 0.5f * kMins[e / 32]);
  }
}

TEST_CASE("Q5_K: a block built by hand") {
  // The fifth bit of element e is bit e / 32 of qh[e % 32]: here set for
  // sub-blocks 4-7 at even e % 32 and for sub-blocks 0-3 at odd e % 32.
  BlockQ5_K b = hand_built_affine_block<BlockQ5_K>();
  for (int l = 0; l < 32; ++l) b.qh[l] = l % 2 == 0 ? 0xf0 : 0x0f;
  const std::vector<float> v = dequantized(TensorType::Q5_K, &b, kSuperBlockElems);
  CHECK(v[5] == 21.0f);      // code 5 + 16
  CHECK(v[40] == -2.5f);     // code 0: 0 - 0.5 * 5
  CHECK(v[71] == 64.0f);     // code 7 + 16: 3 * 23 - 0.5 * 10
  CHECK(v[150] == 366.0f);   // code 6 + 16: 17 * 22 - 0.5 * 16
  CHECK(v[200] == 1176.0f);  // code 8 + 16: 50 * 24 - 0.5 * 48
  CHECK(v[255] == 437.5f);   // code 7: 63 * 7 - 0.5 * 7
  for (int e = 0; e < kSuperBlockElems; ++e) {
    CAPTURE(e);
    const bool fifth_bit = (e % 2 == 0) == (e / 32 >= 4);
    const int code = hand_built_low_bits(e) + (fifth_bit ? 16 : 0);
    CHECK(v[e] == static_cast<float>(kScales[e / 32] * code) - 0.5f * kMins[e / 32]);
  }
}

TEST_CASE("Q6_K: a block built by hand") {
  // Each half of 128 elements owns ql[64 h ..] and qh[32 h ..]. Element l of
  // quarter q has its low 4 bits in ql[64 h + 32 (q % 2) + l] (low nibble for
  // quarters 0 and 1, high for 2 and 3) and its top 2 bits at bit 2q of
  // qh[32 h + l]; value = d * scales[e / 16] * (code - 32).
  constexpr int8_t kScales6[16] = {-128, -3, 1, 2, 5, 7, 10, 127, -1, -2, 3, 4, 6, 8, 9, -100};
  BlockQ6_K b{};
  b.d = 0x3400;  // 0.25
  for (int i = 0; i < 128; ++i) b.ql[i] = static_cast<uint8_t>(i);
  // Even l: quarters 0-3 get top bits 0, 1, 2, 3; odd l: 3, 2, 1, 0.
  for (int i = 0; i < 64; ++i) b.qh[i] = i % 2 == 0 ? 0xe4 : 0x1b;
  std::copy(std::begin(kScales6), std::end(kScales6), b.scales);

  const std::vector<float> v = dequantized(TensorType::Q6_K, &b, kSuperBlockElems);
  CHECK(v[0] == 1024.0f);     // code 0: 0.25 * -128 * -32
  CHECK(v[33] == 0.25f);      // low 1 of ql[33], top 2: code 33, scale 1
  CHECK(v[90] == 1.75f);      // high nibble 1 of ql[26], top 2: code 33, scale 7
  CHECK(v[127] == -920.75f);  // high nibble 3 of ql[63], top 0: code 3, scale 127
  CHECK(v[128] == 8.0f);      // low nibble 0 of ql[64], top 0: code 0, scale -1
  CHECK(v[175] == 11.25f);    // low nibble 15 of ql[111], top 2: code 47, scale 3
  CHECK(v[200] == 6.0f);      // high nibble 4 of ql[72], top 2: code 36, scale 6
  CHECK(v[255] == 625.0f);    // high nibble 7 of ql[127], top 0: code 7, scale -100
  for (int e = 0; e < kSuperBlockElems; ++e) {
    CAPTURE(e);
    const int h = e / 128, q = e % 128 / 32, l = e % 32;
    const int ql = 64 * h + 32 * (q % 2) + l;  // ql[i] = i
    const int low = q < 2 ? ql & 0x0f : ql >> 4;
    const int top = l % 2 == 0 ? q : 3 - q;
    CHECK(v[e] == 0.25f * static_cast<float>(kScales6[e / 16] * ((low | top << 4) - 32)));
  }
}

// ---------------------------------------------------------------------------
// quantization round trips

// Super-blocks of different character: wide, zero, all positive, all
// negative, one sub-block far smaller than the rest, an outlier.
std::vector<float> round_trip_input() {
  std::vector<float> x = random_floats(8 * kSuperBlockElems, 5, -3.0f, 3.0f);
  const auto block = [&](int b) { return x.begin() + b * kSuperBlockElems; };
  std::fill(block(1), block(2), 0.0f);
  for (auto it = block(2); it != block(3); ++it) *it = 1.25f + *it / 4;
  for (auto it = block(3); it != block(4); ++it) *it = -1.25f + *it / 4;
  for (auto it = block(4) + 96; it != block(4) + 128; ++it) *it *= 1e-3f;
  block(5)[17] = 50.0f;
  return x;
}

// A K-quant's round-trip error bound for each element of x. Derivation:
// with the stored scale s' within d/2 of the ideal step s and the stored min
// within dmin/2 of the ideal one, an element is off by at most s'/2 where it
// rounds, and at most max_code * d/2 + dmin/2 where its code is clamped (Q6_K:
// one step plus 32 scale roundings, as Q4_0's clamp at +7). d and dmin are
// a little above the ideal /63 and /128 because of their fp16 rounding.
std::vector<double> round_trip_tolerance(TensorType t, const std::vector<float>& x) {
  std::vector<double> tol(x.size());
  const bool q6 = t == TensorType::Q6_K;
  const int sub_elems = q6 ? 16 : 32;
  const double max_code = t == TensorType::Q4_K ? 15 : 31;
  for (size_t b = 0; b < x.size() / kSuperBlockElems; ++b) {
    const float* sb = x.data() + b * kSuperBlockElems;
    std::vector<double> step(kSuperBlockElems / sub_elems);
    double max_step = 0.0, max_neg_min = 0.0;
    for (size_t s = 0; s < step.size(); ++s) {
      double lo = 0.0, hi = -INFINITY, amax = 0.0;
      for (int l = 0; l < sub_elems; ++l) {
        const double v = sb[s * sub_elems + l];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        amax = std::max(amax, std::fabs(v));
      }
      step[s] = q6 ? amax / 32 : (hi - lo) / max_code;
      max_step = std::max(max_step, step[s]);
      max_neg_min = std::max(max_neg_min, -lo);
    }
    const double fp16_slack = 1.001;
    for (int j = 0; j < kSuperBlockElems; ++j) {
      const double s = step[j / sub_elems];
      double bound;
      if (q6) {
        const double d = max_step / 128 * fp16_slack;
        bound = s + 34 * d;
      } else {
        const double d = max_step / 63 * fp16_slack;
        const double dmin = max_neg_min / 63 * fp16_slack;
        bound = s / 2 + d / 4 + max_code * d / 2 + dmin / 2;
      }
      tol[b * kSuperBlockElems + j] = bound + 1e-6 * std::fabs(sb[j]);
    }
  }
  return tol;
}

TEST_CASE("K-quants: quantize then dequantize stays within the format's step") {
  const std::vector<float> x = round_trip_input();
  const auto n = static_cast<int64_t>(x.size());
  for (TensorType t : {TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
    CAPTURE(traits_of(t).name);
    std::vector<uint8_t> q(row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    const std::vector<float> back = dequantized(t, q.data(), n);
    expect_close(back, x, round_trip_tolerance(t, x));
    for (int j = kSuperBlockElems; j < 2 * kSuperBlockElems; ++j) CHECK(back[j] == 0.0f);
  }
}

// ---------------------------------------------------------------------------
// matmul and get_rows

TEST_CASE("matmul: BF16") {
  check_matmul_all_rows<TensorType::BF16, 7>();
  check_matmul_all_rows<TensorType::BF16, 61>();
  check_matmul_all_rows<TensorType::BF16, 172>();
  check_matmul_all_rows<TensorType::BF16, 2085>();  // k-blocks of 2048 bfloat16 values (vdpbf16ps panels), the last partial
  check_matmul_all_rows<TensorType::BF16, 2112>();  // padded rows (float_rows.hpp), the last k-block partial
}

TEST_CASE("matmul: Q4_K") {
  check_matmul_all_rows<TensorType::Q4_K, 256>();
  check_matmul_all_rows<TensorType::Q4_K, 768>();
}

TEST_CASE("matmul: Q5_K") {
  check_matmul_all_rows<TensorType::Q5_K, 256>();
  check_matmul_all_rows<TensorType::Q5_K, 768>();
}

TEST_CASE("matmul: Q6_K") {
  check_matmul_all_rows<TensorType::Q6_K, 256>();
  check_matmul_all_rows<TensorType::Q6_K, 768>();
}

// Every code bit set: codes at their largest (Q4_K 15, Q5_K 31, Q6_K 63),
// scales and mins 63 (Q6_K's scales -1).
template <TensorType T, class Block>
void check_largest_codes() {
  Block b;
  std::memset(&b, 0xff, sizeof b);
  b.d = fp32_to_fp16(0.5f);
  if constexpr (T != TensorType::Q6_K) b.dmin = fp32_to_fp16(0.25f);
  check_largest_products<T>(b);
}

TEST_CASE("matmul: K-quants' largest integer products") {
  check_largest_codes<TensorType::Q4_K, BlockQ4_K>();
  check_largest_codes<TensorType::Q5_K, BlockQ5_K>();
  check_largest_codes<TensorType::Q6_K, BlockQ6_K>();
}

TEST_CASE("get_rows: BF16 and the K-quants") {
  check_get_rows<TensorType::BF16, 61>();
  check_get_rows<TensorType::Q4_K, 512>();
  check_get_rows<TensorType::Q5_K, 512>();
  check_get_rows<TensorType::Q6_K, 512>();
}

// ---------------------------------------------------------------------------
// against llama.cpp's files

const std::string kSyntheticDir = KILN_SHARED_DIR "/models/synthetic/";

int64_t element_count(const GgufTensor& t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  return n;
}

double rms_error(const std::vector<float>& a, const float* b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += (static_cast<double>(a[i]) - b[i]) * (a[i] - b[i]);
  return std::sqrt(sum / static_cast<double>(a.size()));
}

double rms(const float* x, size_t n) {
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return std::sqrt(sum / static_cast<double>(n));
}

TEST_CASE("bf16: llama-bf16.gguf holds the round-to-nearest-even of llama-f32.gguf" * kiln::test::needs_fixtures) {
  const GgufFile f32 = GgufFile::open(kSyntheticDir + "llama-f32.gguf");
  const GgufFile bf16 = GgufFile::open(kSyntheticDir + "llama-bf16.gguf");
  int matrices = 0;
  for (const GgufTensor& t : bf16.tensors()) {
    if (t.type != TensorType::BF16) continue;
    CAPTURE(t.name);
    const auto* x = reinterpret_cast<const float*>(f32.find_tensor(t.name)->data);
    const int64_t n = element_count(t);
    const std::vector<float> values = dequantized(TensorType::BF16, t.data, n);
    std::vector<uint16_t> ours(static_cast<size_t>(n));
    quantize_row(TensorType::BF16, x, ours.data(), n);
    CHECK(std::equal(ours.begin(), ours.end(), reinterpret_cast<const uint16_t*>(t.data)));
    for (int64_t i = 0; i < n; ++i) {
      if (std::bit_cast<uint32_t>(values[i]) != static_cast<uint32_t>(fp32_to_bf16(x[i])) << 16) {
        FAIL_CHECK("element " << i << ": " << values[i] << " for " << x[i]);
        break;
      }
    }
    ++matrices;
  }
  CHECK(matrices == 16);
}

TEST_CASE("K-quants: llama.cpp's files dequantize to llama-f32.gguf's values within a step" * kiln::test::needs_fixtures) {
  const GgufFile f32 = GgufFile::open(kSyntheticDir + "llama-f32.gguf");
  for (const char* file : {"llama-q4_k_m.gguf", "llama-q5_k_m.gguf", "llama-q6_k.gguf"}) {
    const GgufFile quantized = GgufFile::open(kSyntheticDir + file);
    int matrices = 0;
    for (const GgufTensor& t : quantized.tensors()) {
      if (t.type == TensorType::F32) continue;
      CAPTURE(file);
      CAPTURE(t.name);
      const auto* x = reinterpret_cast<const float*>(f32.find_tensor(t.name)->data);
      const int64_t n = element_count(t);
      const std::vector<float> values = dequantized(t.type, t.data, n);

      // llama-quantize searches for the scale and min with the least error,
      // which may clip an element by a little more than half a step (we
      // measured up to 1.2 steps).
      for (int64_t i = 0; i < n; ++i) {
        if (std::fabs(values[i] - x[i]) > 1.5 * reference_k_quant_step(t, i)) {
          FAIL_CHECK("element " << i << ": " << values[i] << " for " << x[i] << ", step " << reference_k_quant_step(t, i));
          break;
        }
      }
      // Relative RMS error of a good quantizer on these normal values
      // (measured: Q4_K 0.071-0.072, Q5_K 0.036, Q6_K 0.018).
      const double relative_error = rms_error(values, x) / rms(x, values.size());
      const double expected = t.type == TensorType::Q4_K ? 0.075 : t.type == TensorType::Q5_K ? 0.038 : 0.019;
      CHECK(relative_error < expected);

      // kiln's plain round-to-nearest quantizer loses a little against
      // llama-quantize's search (measured: 6-10% more RMS error).
      std::vector<uint8_t> ours(t.nbytes);
      quantize_row(t.type, x, ours.data(), n);
      CHECK(rms_error(dequantized(t.type, ours.data(), n), x) < 1.15 * rms_error(values, x));
      ++matrices;
    }
    CHECK(matrices == 16);
  }
}

}  // namespace

TEST_CASE("every weight of llama.cpp's files decodes as the reference decoder decodes it" * kiln::test::needs_fixtures) {
  int matrices = 0;
  for (const char* file : {"llama-f16", "llama-bf16", "llama-q8_0", "llama-q4_0", "llama-q4_k_m", "llama-q5_k_m",
                           "llama-q6_k"}) {
    const GgufFile f = GgufFile::open(kiln::test::fixture(std::string("models/synthetic/") + file + ".gguf"));
    for (const GgufTensor& t : f.tensors()) {
      if (t.type == TensorType::F32) continue;
      CAPTURE(file);
      CAPTURE(t.name);
      expect_decoded(t.type, dequantized(t.type, t.data, element_count(t)), reference_dequantize(t));
      ++matrices;
    }
  }
  CHECK(matrices == 7 * 16);
}
