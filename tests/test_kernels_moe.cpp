// The mixture-of-experts kernels (kernels/moe.hpp): routing, grouping by
// expert, each expert's matmul over its rows against the matmul of that
// expert's matrix alone, and the weighted sum into the residual. The whole
// layer is checked end to end against the reference forward pass and
// llama.cpp (tests/e2e_architectures.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernels/moe.hpp"
#include "tests/support/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::kernels;
using namespace kiln::test;

namespace {

TEST_CASE("route_top_k: the most probable experts, the lower index first among equals, weights as the file says") {
  // Token 0: experts 1 and 3 tie for first; token 1: expert 0 first, then 2.
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f, 2.0f, 3.0f, -1.0f, 1.0f, 0.5f};
  std::vector<float> probs = logits;
  std::vector<int32_t> ids(4);
  std::vector<float> weights(4);
  route_top_k<4, 2, true>(probs.data(), 2, ids.data(), weights.data());
  CHECK(ids == std::vector<int32_t>{1, 3, 0, 2});
  CHECK(weights[0] == 0.5f);
  CHECK(weights[1] == 0.5f);
  CHECK(weights[2] == doctest::Approx(std::exp(3.0) / (std::exp(3.0) + std::exp(1.0))));
  CHECK(weights[2] + weights[3] == doctest::Approx(1.0));

  probs = logits;
  route_top_k<4, 2, false>(probs.data(), 2, ids.data(), weights.data());
  const double total = std::exp(0.0) + 2 * std::exp(2.0) + std::exp(1.0);
  CHECK(weights[0] == doctest::Approx(std::exp(2.0) / total));
  CHECK(weights[0] == probs[1]);
}

TEST_CASE("route_top_k, gpt-oss's gating: the largest logits, then a softmax over those alone") {
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f, 2.0f, 3.0f, -1.0f, 1.0f, 0.5f};
  std::vector<float> raw = logits;
  std::vector<int32_t> ids(4);
  std::vector<float> weights(4);
  route_top_k<4, 2, false, Gating::SoftmaxTopK>(raw.data(), 2, ids.data(), weights.data());
  CHECK(ids == std::vector<int32_t>{1, 3, 0, 2});
  CHECK(raw == logits);  // the logits are chosen from as they are
  CHECK(weights[0] == 0.5f);
  CHECK(weights[1] == 0.5f);
  CHECK(weights[2] == doctest::Approx(std::exp(3.0) / (std::exp(3.0) + std::exp(1.0))));
  CHECK(weights[3] == doctest::Approx(std::exp(1.0) / (std::exp(3.0) + std::exp(1.0))));
}

TEST_CASE("add_expert_bias: each row gets its expert's bias, whatever the threads") {
  constexpr int kCols = 3;
  const std::vector<int32_t> first = {0, 2, 2, 3, 5};  // expert 1 has no rows
  const std::vector<float> bias = random_floats(4 * kCols, 5);
  const std::vector<float> rows = random_floats(5 * kCols, 6);
  const int expert_of[5] = {0, 0, 2, 3, 3};
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<float> out = rows;
    in_parallel(threads, [&] { add_expert_bias<4, kCols>(out.data(), bias.data(), first.data()); });
    for (int r = 0; r < 5; ++r)
      for (int j = 0; j < kCols; ++j) CHECK(out[r * kCols + j] == rows[r * kCols + j] + bias[expert_of[r] * kCols + j]);
  }
}

TEST_CASE("group_by_expert: each expert's rows together, in token order") {
  // Three tokens, two experts each, of four experts (expert 3 unused).
  const std::vector<int32_t> experts = {2, 0, 0, 1, 2, 1};
  std::vector<int32_t> first(5), row_of(6), token_of(6);
  group_by_expert<4, 2>(experts.data(), 3, first.data(), row_of.data(), token_of.data());
  CHECK(first == std::vector<int32_t>{0, 2, 4, 6, 6});
  CHECK(token_of == std::vector<int32_t>{0, 1, 1, 2, 0, 2});
  CHECK(row_of == std::vector<int32_t>{4, 0, 1, 2, 5, 3});
}

// Each row of expert_matmul's output against the matmul of its expert's
// matrix alone with that row alone: the same bits (the matrices at their
// offsets, padded to whole interleaved groups; rows routed in an order that
// gives experts 0, 1 or 3 rows and leaves one without).
template <TensorType T, int Rows, int Cols>
void check_expert_matmul(int threads) {
  constexpr int kExperts = 4;
  const std::vector<int32_t> first = {0, 3, 3, 4, 7};
  constexpr int kRows = 7;
  std::vector<uint8_t> matrices;
  std::vector<std::vector<uint8_t>> alone;
  for (int e = 0; e < kExperts; ++e) {
    alone.push_back(matmul_layout(T, random_weights(T, Rows, Cols, 100 + e), Rows, Cols));
    REQUIRE(int64_t(alone.back().size()) == matmul_matrix_bytes(T, Rows, Cols));
    matrices.insert(matrices.end(), alone.back().begin(), alone.back().end());
  }
  const TestInput<T, Cols> in(kRows, 7);
  std::vector<float> out(size_t(kRows) * Rows);
  in_parallel(threads, [&] { expert_matmul<T, kExperts, Rows, Cols>(matrices.data(), in.at(0), first.data(), out.data()); });
  for (int e = 0; e < kExperts; ++e)
    for (int r = first[e]; r < first[e + 1]; ++r) {
      std::vector<float> expected(Rows);
      matmul<T, Rows, Cols>(alone[e].data(), in.at(r), expected.data(), 1);
      CAPTURE(e);
      CAPTURE(r);
      expect_same_bits(out.data() + size_t(r) * Rows, expected.data(), Rows);
    }
}

TEST_CASE("expert_matmul: each expert's rows as its matrix alone would give them") {
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    check_expert_matmul<TensorType::F32, 13, 64>(threads);
    check_expert_matmul<TensorType::Q8_0, 40, 64>(threads);  // 40 rows: a last group of rows padded per expert
    check_expert_matmul<TensorType::Q4_K, 24, 256>(threads);
  }
}

TEST_CASE("add_experts: the weighted outputs summed slot by slot, then added") {
  constexpr int kCols = 3;
  const std::vector<float> rows = {1, 2, 3, 10, 20, 30, 100, 200, 300};
  const std::vector<int32_t> row_of = {2, 0, 1, 2};  // token 0: rows 2 and 0; token 1: rows 1 and 2
  const std::vector<float> weights = {0.5f, 0.25f, 1.0f, 2.0f};
  std::vector<float> x = {1, 1, 1, 0, 0, 0};
  add_experts<kCols, 2>(rows.data(), row_of.data(), weights.data(), x.data(), 2);
  CHECK(x == std::vector<float>{51.25f, 101.5f, 151.75f, 210, 420, 630});
}

TEST_CASE("add_experts: a shared expert's output, scaled by the sigmoid of its logit, joins the sum") {
  constexpr int kCols = 3;
  const std::vector<float> rows = {1, 2, 3, 10, 20, 30, 100, 200, 300};
  const std::vector<int32_t> row_of = {2, 0, 1, 2};
  const std::vector<float> weights = {0.5f, 0.25f, 1.0f, 2.0f};
  const std::vector<float> shared = {4, 8, 12, 1, 2, 3};
  const std::vector<float> logits = {0.0f, -1000.0f};  // sigmoid 0.5, and 0
  std::vector<float> x = {1, 1, 1, 0, 0, 0};
  add_experts<kCols, 2, true>(rows.data(), row_of.data(), weights.data(), x.data(), 2, shared.data(), logits.data());
  CHECK(x == std::vector<float>{53.25f, 105.5f, 157.75f, 210, 420, 630});
}

}  // namespace
