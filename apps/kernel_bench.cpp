// kiln-kernel-bench: one matrix-vector product per weight type, on a matrix
// that fits in L2 and on one far larger than the caches, one thread. It shows
// where each kernel's limit is: the L2 figure is its arithmetic, the large
// one what memory lets it reach (compare with kiln-bench --probe). Then a
// prompt's matrix product (tinyllama's four matrix shapes times 512 tokens) per
// weight type, in GOP/s (against the probe's int8 or FP32 peak), and
// attention over a long F16 cache, in GFLOP/s; and the steps that round a
// quantized matrix's input to Q8, in ns per value.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string_view>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/interleave.hpp"
#include "kernels/matmul.hpp"
#include "kernels/q8_activations.hpp"

namespace {

using namespace kiln;
using namespace kiln::kernels;

struct FreeAligned {
  void operator()(void* p) const { std::free(p); }
};
template <class T>
std::unique_ptr<T[], FreeAligned> aligned(size_t n) {
  return std::unique_ptr<T[], FreeAligned>(static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64)));
}

// A Rows x Cols matrix of type T, in the layout the matmul reads, and
// n_tokens random activations in both of its input forms.
template <TensorType T, int Rows, int Cols>
struct MatmulCase {
  int64_t gguf_bytes = static_cast<int64_t>(row_bytes(T, Cols)) * Rows;
  std::unique_ptr<uint8_t[], FreeAligned> w;
  std::unique_ptr<float[], FreeAligned> xf, y, d, scaled_sum;
  std::unique_ptr<int8_t[], FreeAligned> qs;
  std::unique_ptr<int32_t[], FreeAligned> sum;
  int n_tokens;

  int64_t matrix_bytes = matmul_matrix_bytes(T, Rows, Cols);
  // Copies of the matrix side by side, at least min_bytes in all; the
  // products take them in turn.
  int copies;

  explicit MatmulCase(int n, int64_t min_bytes = 0)
      : n_tokens(n), copies(static_cast<int>(std::max<int64_t>(1, (min_bytes + matrix_bytes - 1) / matrix_bytes))) {
    const int64_t bytes = matrix_bytes;
    auto gguf = aligned<uint8_t>(static_cast<size_t>(gguf_bytes));
    std::mt19937 rng(1);
    std::vector<float> row(Cols);
    for (int r = 0; r < Rows; ++r) {
      for (float& v : row) v = std::uniform_real_distribution<float>(-1, 1)(rng);
      quantize_row(T, row.data(), gguf.get() + r * row_bytes(T, Cols), Cols);
    }
    w = aligned<uint8_t>(static_cast<size_t>(bytes * copies));
    if (is_repacked(T, Cols))
      pack_matrix(T, gguf.get(), w.get(), Rows, Cols);
    else
      std::copy(gguf.get(), gguf.get() + gguf_bytes, w.get());
    for (int c = 1; c < copies; ++c) std::copy(w.get(), w.get() + bytes, w.get() + c * bytes);
    const size_t values = static_cast<size_t>(n) * Cols;
    xf = aligned<float>(values);
    y = aligned<float>(static_cast<size_t>(n) * Rows);
    d = aligned<float>(values / 32);
    qs = aligned<int8_t>(values);
    sum = aligned<int32_t>(values / kQ8HalfElems);
    scaled_sum = aligned<float>(values / 32 * kQ8ScaledSums);
    for (size_t k = 0; k < values; ++k) xf[k] = std::uniform_real_distribution<float>(-1, 1)(rng);
    quantize_q8<Cols>(xf.get(), n, {qs.get(), d.get(), sum.get(), scaled_sum.get()});
  }

  // Seconds for `reps` products, after a warm-up.
  double seconds(int reps) {
    const MatmulInput in{xf.get(), {qs.get(), d.get(), sum.get(), scaled_sum.get()}};
    matmul<T, Rows, Cols>(w.get(), in, y.get(), n_tokens);
    const auto t0 = std::chrono::steady_clock::now();
    // From the copy after the warm-up's: a copy is read again only after all the others.
    for (int r = 0; r < reps; ++r)
      matmul<T, Rows, Cols>(w.get() + (r + 1) % copies * matrix_bytes, in, y.get(), n_tokens);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

std::string_view type_name(TensorType t) { return traits_of(t).name; }

// y = W x for a Rows x Cols matrix of type T, `reps` times; prints GB/s of
// weights read and ns per 32 weights. The matrix is repeated side by side to
// at least `min_bytes`: far beyond the last-level cache, every product then
// reads memory.
template <TensorType T, int Rows, int Cols>
void run(const char* where, int reps, int64_t min_bytes = 0) {
  MatmulCase<T, Rows, Cols> c(1, min_bytes);
  const double s = c.seconds(reps);
  std::printf("| %.*s | %s | %.2f | %.2f |\n", static_cast<int>(type_name(T).size()), type_name(T).data(), where,
              double(c.gguf_bytes) * reps / s / 1e9, s * 1e9 / (double(Rows) * Cols / 32 * reps));
}

// A prompt's product: tinyllama's matrices (attention's 2048 x 2048 and its
// 256 x 2048 keys and values, the feed-forward's 5632 x 2048 and 2048 x
// 5632) times 512 tokens; prints GOP/s (2 per multiply-add).
template <TensorType T, int Rows, int Cols>
void run_prompt_matrix(const char* matrix, int reps) {
  constexpr int kTokens = 512;
  MatmulCase<T, Rows, Cols> c(kTokens);
  const double s = c.seconds(reps);
  std::printf("| %.*s | %s | %.1f |\n", static_cast<int>(type_name(T).size()), type_name(T).data(), matrix,
              2.0 * Rows * Cols * kTokens * reps / s / 1e9);
}

template <TensorType T>
void run_prompt() {
  run_prompt_matrix<T, 2048, 2048>("2048 x 2048", 3);
  run_prompt_matrix<T, 256, 2048>("256 x 2048", 20);
  run_prompt_matrix<T, 5632, 2048>("5632 x 2048", 2);
  run_prompt_matrix<T, 2048, 5632>("2048 x 5632", 2);
}

template <TensorType T>
void run_both() {
  run<T, 64, 2048>("L2 (64 x 2048)", 20000);
  // 16384 x 4096 is 22-268 MB by type: the low-bit types' would sit in a
  // 32 MB L3 if they were read again at once.
  run<T, 16384, 4096>("memory (16384 x 4096)", 10, int64_t{512} << 20);
}

// Attention of n_tokens queries at positions pos0.. over an F16 cache (heads
// of tinyllama-1.1b, llama 3 8B's size), over the last `window` positions
// when it is not 0, `reps` times; prints GFLOP/s (scores and weighted sum: 4
// flops per head element and position attended).
template <int NHead, int NHeadKV, int HeadDim>
void run_attention(const char* what, int n_tokens, int pos0, int reps, int window = 0) {
  constexpr TensorType kKv = TensorType::F16;
  const int n_pos = pos0 + n_tokens;
  std::mt19937 rng(2);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = std::uniform_real_distribution<float>(-1, 1)(rng);
    return v;
  };
  const std::vector<float> q = random(static_cast<size_t>(n_tokens) * NHead * HeadDim);
  std::vector<CacheValue<kKv>> k(static_cast<size_t>(n_pos) * NHeadKV * HeadDim), v(k.size());
  quantize_row(kKv, random(k.size()).data(), k.data(), static_cast<int64_t>(k.size()));
  quantize_row(kKv, random(v.size()).data(), v.data(), static_cast<int64_t>(v.size()));
  std::vector<float> out(q.size());
  std::vector<float> scores(static_cast<size_t>(kAttentionScratchRows<NHead, NHeadKV, HeadDim>) * n_pos);

  const float kScale = 1.0f / std::sqrt(static_cast<float>(HeadDim));
  const auto once = [&] {
    attention<NHead, NHeadKV, HeadDim, kKv, Sync::NoWait>(q.data(), k.data(), v.data(), out.data(), n_tokens, pos0,
                                                          scores.data(), n_pos, kScale, window);
  };
  once();  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) once();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double positions = 0;  // summed over the queries
  for (int t = 0; t < n_tokens; ++t) positions += window > 0 ? std::min(window, pos0 + t + 1) : pos0 + t + 1;
  std::printf("| %d/%d/%d | %s | %.1f | %.3f |\n", NHead, NHeadKV, HeadDim, what,
              4.0 * NHead * HeadDim * positions * reps / s / 1e9, s * 1e3 / reps);
}

// The Q8 rounding of a prompt's activations (22 tokens of tinyllama's
// widths: 2048 for the norms, 5632 for SwiGLU), alone and fused with the
// step before it; prints ns per value, best of 5 runs of `reps`.
void run_rounding() {
  constexpr int kTokens = 22, kDim = 2048, kHidden = 5632;
  std::mt19937 rng(3);
  const auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = std::uniform_real_distribution<float>(-3, 3)(rng);
    return v;
  };
  const std::vector<float> x = random(size_t{kTokens} * kDim), weight = random(kDim), up = random(size_t{kTokens} * kHidden);
  const std::vector<float> gate_in = random(up.size());
  std::vector<float> normed(x.size()), gate(gate_in.size());
  std::vector<int8_t> qs(up.size());
  std::vector<float> d(up.size() / kQuantBlockElems), scaled(d.size() * kQ8ScaledSums);
  std::vector<int32_t> sums(up.size() / kQ8HalfElems);
  const Q8Out out{qs.data(), d.data(), sums.data(), scaled.data()};
  const auto ns_per_value = [](int64_t values, auto&& once) {
    constexpr int kReps = 200;
    double best = 1e30;
    for (int run = 0; run < 5; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < kReps; ++r) once();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best * 1e9 / (double(values) * kReps);
  };
  const double copy = ns_per_value(kTokens * kHidden, [&] { gate = gate_in; });  // swiglu_q8 works in place
  std::printf("| quantize_q8 | %d x %d | %.3f |\n", kTokens, kHidden,
              ns_per_value(kTokens * kHidden, [&] { quantize_q8<kHidden>(gate_in.data(), kTokens, out); }));
  std::printf("| rmsnorm_q8 | %d x %d | %.3f |\n", kTokens, kDim, ns_per_value(kTokens * kDim, [&] {
                rmsnorm_q8<kDim>(x.data(), weight.data(), normed.data(), kTokens, 1e-5f, out);
              }));
  std::printf("| swiglu_q8 | %d x %d | %.3f |\n", kTokens, kHidden, ns_per_value(kTokens * kHidden, [&] {
                gate = gate_in;
                swiglu_q8<kHidden>(gate.data(), up.data(), kTokens, out);
              }) - copy);
}

// Which tables to print: every one, or those named on the command line.
bool wanted(int argc, char** argv, std::string_view table) {
  if (argc < 2) return true;
  for (int i = 1; i < argc; ++i)
    if (table == argv[i]) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg != "matvec" && arg != "prompt" && arg != "attention" && arg != "rounding") {
      std::fprintf(stderr, "usage: kiln-kernel-bench [matvec] [prompt] [attention] [rounding] (default: all four tables)\n");
      return 2;
    }
  }
  if (wanted(argc, argv, "matvec")) {
    std::printf("| type | matrix | GB/s (file bytes) | ns per 32 weights |\n|---|---|---:|---:|\n");
    run_both<TensorType::F32>();
    run_both<TensorType::F16>();
    run_both<TensorType::Q8_0>();
    run_both<TensorType::Q5_1>();
    run_both<TensorType::Q5_0>();
    run_both<TensorType::Q4_0>();
    run_both<TensorType::IQ4_NL>();
    run_both<TensorType::MXFP4>();
    run_both<TensorType::Q6_K>();
    run_both<TensorType::Q5_K>();
    run_both<TensorType::Q4_K>();
    run_both<TensorType::IQ4_XS>();
    run_both<TensorType::Q3_K>();
    run_both<TensorType::Q2_K>();
  }

  if (wanted(argc, argv, "prompt")) {
    std::printf("\n| type | matrix x 512 tokens | GOP/s |\n|---|---|---:|\n");
    run_prompt<TensorType::F32>();
    run_prompt<TensorType::F16>();
    run_prompt<TensorType::BF16>();
    run_prompt<TensorType::Q8_0>();
    run_prompt<TensorType::Q4_0>();
    run_prompt<TensorType::Q4_K>();
    run_prompt<TensorType::Q6_K>();
  }

  if (wanted(argc, argv, "attention")) {
    std::printf("\n| heads / kv heads / dim | queries (F16 cache) | GFLOP/s | ms per call |\n|---|---|---:|---:|\n");
    run_attention<32, 4, 64>("1 token after 1,000 cached", 1, 1000, 2000);
    run_attention<32, 4, 64>("22 tokens after 1,000 cached", 22, 1000, 100);
    run_attention<32, 4, 64>("512 tokens from 0", 512, 0, 5);
    run_attention<32, 8, 128>("22 tokens after 1,000 cached", 22, 1000, 50);
    run_attention<12, 12, 64>("22 tokens after 1,000 cached", 22, 1000, 100);
    // Gemma 3 1B's heads, a global layer and a sliding one (window 512) at depth 4,000.
    run_attention<4, 1, 256>("1 token after 4,000 cached", 1, 4000, 500);
    run_attention<4, 1, 256>("1 token after 4,000 cached, window 512", 1, 4000, 500, 512);
  }

  if (wanted(argc, argv, "rounding")) {
    std::printf("\n| kernel (Q8 rounding) | tokens x values | ns per value |\n|---|---|---:|\n");
    run_rounding();
  }
  return 0;
}
