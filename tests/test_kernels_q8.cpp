// Rounding activations to Q8 blocks (the input of the integer matmul), alone
// and fused with rmsnorm and swiglu.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/q8_activations.hpp"
#include "kernels/reference.hpp"
#include "tests/support/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::kernels;
using namespace kiln::test;

namespace {

constexpr int kBlock = kQuantBlockElems;

// Rounded activations of n_tokens x Cols values.
struct Q8Buffers {
  std::vector<int8_t> qs;
  std::vector<float> d;
  std::vector<int32_t> sum;
  std::vector<float> scaled_sum;
  explicit Q8Buffers(size_t n_values)
      : qs(n_values), d(n_values / kBlock), sum(n_values / kQ8HalfElems), scaled_sum(d.size() * kQ8ScaledSums) {}
  Q8Out out() { return {qs.data(), d.data(), sum.data(), scaled_sum.data()}; }
  bool operator==(const Q8Buffers&) const = default;  // float == is fine: no NaNs here
};

TEST_CASE("q8 activations: known blocks") {
  // d = 1/127 rounds to fp16 0x2008; 0.25 * 127 = 31.75 rounds to 32.
  std::vector<float> x(kBlock, 0.25f);
  x[0] = 1.0f;
  int8_t qs[kBlock];
  float d = 0.0f;
  int32_t sum[2] = {};
  float scaled_sum[kQ8ScaledSums] = {};
  const Q8Out out{qs, &d, sum, scaled_sum};
  quantize_blocks_q8(x.data(), 1, out);
  CHECK(d == 0.00787353515625f);
  CHECK(qs[0] == 127);
  for (int j = 1; j < kBlock; ++j) CHECK(qs[j] == 32);
  CHECK(sum[0] == 127 + 15 * 32);
  CHECK(sum[1] == 16 * 32);
  CHECK(scaled_sum[0] == d * (127 + 15 * 32));
  CHECK(scaled_sum[1] == d * (16 * 32));
  CHECK(scaled_sum[2] == d * (127 + 31 * 32));

  // With amax = 127 the values are their own grid index; ties go to even (as
  // ggml's x86 code rounds), not away from zero.
  x.assign(kBlock, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = 3.5f;
  x[3] = -2.5f;
  x[4] = -127.0f;
  quantize_blocks_q8(x.data(), 1, out);
  CHECK(d == 1.0f);
  CHECK(qs[0] == 127);
  CHECK(qs[1] == 2);
  CHECK(qs[2] == 4);
  CHECK(qs[3] == -2);
  CHECK(qs[4] == -127);
  CHECK(qs[5] == 0);
  CHECK(sum[0] == 127 + 2 + 4 - 2 - 127);
  CHECK(sum[1] == 0);

  // An all-zero block stays zero.
  x.assign(kBlock, 0.0f);
  quantize_blocks_q8(x.data(), 1, out);
  CHECK(d == 0.0f);
  CHECK(sum[0] == 0);
  CHECK(sum[1] == 0);
  for (int j = 0; j < kBlock; ++j) CHECK(qs[j] == 0);
}

// Blocks of every kind the vector rounding could get wrong: random values
// at scales from tiny (d rounds to 0) to huge (to inf), exact ties at amax 127,
// zeros of both signs, one nonzero value, equal values, a largest value in each
// lane.
std::vector<float> hard_blocks() {
  std::vector<float> x;
  for (float scale : {1e-30f, 1e-20f, 1e-3f, 1.0f, 300.0f, 1e30f})
    for (int b = 0; b < 7; ++b) {
      const std::vector<float> r = random_floats(kBlock, 100 + b, -scale, scale);
      x.insert(x.end(), r.begin(), r.end());
    }
  for (int b = 0; b < 4; ++b) {  // ties: k + 0.5 for k of both parities, with 127 setting d = 1
    for (int j = 0; j < kBlock; ++j) x.push_back(j == b ? -127.0f : static_cast<float>(j - 16) + 0.5f);
  }
  x.insert(x.end(), kBlock, 0.0f);
  x.insert(x.end(), kBlock, -0.0f);
  x.insert(x.end(), kBlock, 3.0f);
  for (int at = 0; at < kBlock; ++at) {  // one value, then the largest one, in each lane
    for (int j = 0; j < kBlock; ++j) x.push_back(j == at ? -7.25f : 0.0f);
    for (int j = 0; j < kBlock; ++j) x.push_back(j == at ? 9.0f : static_cast<float>(j % 9) - 4.0f);
  }
  return x;
}

TEST_CASE("q8 activations: the vector rounding is the scalar reference's, bit for bit") {
  const std::vector<float> x = hard_blocks();
  const int n = static_cast<int>(x.size());
  std::vector<int8_t> ref_qs(x.size());
  std::vector<float> ref_d(x.size() / kBlock);
  ref_quantize_q8(x.data(), n, ref_qs.data(), ref_d.data());
  for (int run = 1; run <= kQ8BlocksAtOnce; ++run) {  // blocks rounded together: any of them, alone or not
    CAPTURE(run);
    Q8Buffers q8(x.size());
    for (int b = 0; b < n / kBlock; b += run)
      quantize_blocks_q8(x.data() + b * kBlock, std::min(run, n / kBlock - b), q8.out().at_block(b));
    for (int b = 0; b < n / kBlock; ++b) {
      CAPTURE(b);
      CHECK(std::bit_cast<uint32_t>(q8.d[b]) == std::bit_cast<uint32_t>(ref_d[b]));
      for (int h = 0; h < 2; ++h) {
        int32_t sum = 0;
        for (int j = 0; j < kQ8HalfElems; ++j) {
          const size_t i = static_cast<size_t>(b) * kBlock + h * kQ8HalfElems + j;
          CHECK(q8.qs[i] == ref_qs[i]);
          sum += ref_qs[i];
        }
        CHECK(q8.sum[2 * b + h] == sum);
      }
    }
  }
}

// Cols of 3 blocks, and of 19: more than one run of kQ8BlocksAtOnce blocks
// (up to 16) and a shorter last one.
template <int kCols>
void check_rounding_and_threads() {
  CAPTURE(kCols);
  const std::vector<float> x = random_floats(kMaxBatch * kCols, 3, -5.0f, 5.0f);
  Q8Buffers serial(x.size());
  for (int t = 0; t < kMaxBatch; ++t)
    quantize_row_q8<kCols>(x.data() + t * kCols, serial.out().at_block(t * kCols / kBlock));

  // Within half a step of the grid, plus d's own fp16 rounding (relative
  // 2^-11) times the largest grid index.
  for (size_t b = 0; b < serial.d.size(); ++b) {
    for (int h = 0; h < 2; ++h) {
      int32_t sum = 0;
      for (int j = h * kQ8HalfElems; j < (h + 1) * kQ8HalfElems; ++j) sum += serial.qs[b * kBlock + j];
      CHECK(serial.sum[2 * b + h] == sum);
      CHECK(serial.scaled_sum[kQ8ScaledSums * b + h] == serial.d[b] * static_cast<float>(sum));
    }
    CHECK(serial.scaled_sum[kQ8ScaledSums * b + 2] ==
          serial.d[b] * static_cast<float>(serial.sum[2 * b] + serial.sum[2 * b + 1]));
    float amax = 0.0f;
    for (int j = 0; j < kBlock; ++j) amax = std::max(amax, std::fabs(x[b * kBlock + j]));
    const double tolerance = amax / 127.0 * (0.5 + 127 * 0x1p-11) + 1e-6;
    for (int j = 0; j < kBlock; ++j) {
      const size_t i = b * kBlock + j;
      if (std::fabs(double(serial.d[b]) * serial.qs[i] - x[i]) > tolerance)
        FAIL_CHECK("element " << i << ": " << serial.d[b] * serial.qs[i] << " vs " << x[i]);
    }
  }

  for (int threads = 1; threads <= 3; ++threads) {
    Q8Buffers shared(x.size());
    in_parallel(threads, [&] { quantize_q8<kCols>(x.data(), kMaxBatch, shared.out()); });
    CHECK(shared == serial);
  }
}

TEST_CASE("q8 activations: rounding error and threads") {
  check_rounding_and_threads<96>();
  check_rounding_and_threads<608>();
}

// The fused kernels give exactly the unfused results.
template <int N>
void check_rmsnorm_q8() {
  CAPTURE(N);
  const std::vector<float> x = random_floats(kMaxBatch * N, N, -4.0f, 4.0f);
  const std::vector<float> weight = random_floats(N, N + 1, 0.5f, 1.5f);
  std::vector<float> normed(x.size());
  rmsnorm<N>(x.data(), weight.data(), normed.data(), kMaxBatch, 1e-5f);
  Q8Buffers expected(x.size());
  quantize_q8<N>(normed.data(), kMaxBatch, expected.out());

  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> out(x.size());
    Q8Buffers q8(x.size());
    in_parallel(threads, [&] { rmsnorm_q8<N>(x.data(), weight.data(), out.data(), kMaxBatch, 1e-5f, q8.out()); });
    expect_same_bits(out, normed);
    CHECK(q8 == expected);
  }
}

TEST_CASE("q8 activations: fused with rmsnorm") {
  check_rmsnorm_q8<64>();
  check_rmsnorm_q8<288>();
}

TEST_CASE("q8 activations: fused with swiglu") {
  constexpr int kN = 608;  // 19 blocks: runs of kQ8BlocksAtOnce and a shorter one
  const std::vector<float> gate = random_floats(kMaxBatch * kN, 11, -10.0f, 10.0f);
  const std::vector<float> up = random_floats(kMaxBatch * kN, 12);
  std::vector<float> activated = gate;
  swiglu<kN>(activated.data(), up.data(), kMaxBatch);
  Q8Buffers expected(gate.size());
  quantize_q8<kN>(activated.data(), kMaxBatch, expected.out());

  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> out = gate;
    Q8Buffers q8(gate.size());
    in_parallel(threads, [&] { swiglu_q8<kN>(out.data(), up.data(), kMaxBatch, q8.out()); });
    expect_same_bits(out, activated);
    CHECK(q8 == expected);
  }
}

}  // namespace
