// kiln-kernel-bench: one matrix-vector product per weight type, on a matrix
// that fits in L2 and on one far larger than the caches, one thread. It shows
// where each kernel's limit is: the L2 figure is its arithmetic, the large
// one what memory lets it reach (compare with kiln-bench --probe).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "kernels/interleave.hpp"
#include "kernels/matmul.hpp"

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

// y = W x for a Rows x Cols matrix of type T, `reps` times; prints GB/s of
// weights read and ns per 32 weights.
template <TensorType T, int Rows, int Cols>
void run(const char* where, int reps) {
  const int64_t gguf_bytes = static_cast<int64_t>(row_bytes(T, Cols)) * Rows;
  const int64_t bytes = is_interleaved(T) ? interleaved_bytes(T, Rows, Cols) : gguf_bytes;
  auto gguf = aligned<uint8_t>(static_cast<size_t>(gguf_bytes));
  std::mt19937 rng(1);
  std::vector<float> row(Cols);
  for (int r = 0; r < Rows; ++r) {
    for (float& v : row) v = std::uniform_real_distribution<float>(-1, 1)(rng);
    quantize_row(T, row.data(), gguf.get() + r * row_bytes(T, Cols), Cols);
  }
  auto w = aligned<uint8_t>(static_cast<size_t>(bytes));
  if (is_interleaved(T))
    interleave_matrix(T, gguf.get(), w.get(), Rows, Cols);
  else
    std::copy(gguf.get(), gguf.get() + gguf_bytes, w.get());
  gguf.reset();

  auto xf = aligned<float>(Cols), y = aligned<float>(Rows), d = aligned<float>(Cols / 32);
  auto qs = aligned<int8_t>(Cols);
  auto sum = aligned<int32_t>(Cols / kQ8HalfElems);
  for (int k = 0; k < Cols; ++k) xf[k] = std::uniform_real_distribution<float>(-1, 1)(rng);
  quantize_q8<Cols>(xf.get(), 1, {qs.get(), d.get(), sum.get()});
  const MatmulInput in{xf.get(), {qs.get(), d.get(), sum.get()}};

  matmul<T, Rows, Cols>(w.get(), in, y.get(), 1);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) matmul<T, Rows, Cols>(w.get(), in, y.get(), 1);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("| %.*s | %s | %.2f | %.2f |\n", static_cast<int>(traits_of(T).name.size()), traits_of(T).name.data(), where, double(gguf_bytes) * reps / s / 1e9,
              s * 1e9 / (double(Rows) * Cols / 32 * reps));
}

template <TensorType T>
void run_both() {
  run<T, 64, 2048>("L2 (64 x 2048)", 20000);
  run<T, 16384, 4096>("memory (16384 x 4096)", 5);
}

}  // namespace

int main() {
  std::printf("| type | matrix | GB/s (file bytes) | ns per 32 weights |\n|---|---|---:|---:|\n");
  run_both<TensorType::F32>();
  run_both<TensorType::F16>();
  run_both<TensorType::Q8_0>();
  run_both<TensorType::Q4_0>();
  run_both<TensorType::Q4_K>();
  run_both<TensorType::Q5_K>();
  run_both<TensorType::Q6_K>();
  return 0;
}
