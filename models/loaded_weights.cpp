#include "models/loaded_weights.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "engine/memory/huge_pages.hpp"
#include "engine/model/load_threads.hpp"
#include "kernels/interleave.hpp"
#include "kernels/team.hpp"

namespace kiln {

namespace {

// Drops this process's pages of the read-only file mapping inside
// [p, p + n): they are no longer read (a later access would just fault them
// in again from the file), so they should not count as resident memory.
void release_file_pages(const void* p, uint64_t n) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace

void LoadedWeights::FreeAligned::operator()(void* p) const { std::free(p); }

// Copies are on 2 MB pages where they are 2 MB or more (engine/memory/huge_pages.hpp).
// Measured on stories110m Q8_0 from its GGUF: 30,700 -> 24,500 page faults,
// load() 0.95 -> 0.82 s on one thread (most of its matrices are under 2 MB).
void* LoadedWeights::allocate(int64_t bytes) {
  void* copy = allocate_large(static_cast<size_t>(bytes));
  copies_.emplace_back(copy);
  return copy;
}

const float* LoadedWeights::vector(const GgufTensor& tensor) {
  void* copy = allocate(static_cast<int64_t>(tensor.nbytes));
  std::memcpy(copy, tensor.data, tensor.nbytes);
  return static_cast<const float*>(copy);
}

// A 3-D tensor (a mixture's experts) is dims[2] matrices, each repacked on
// its own (kernels::matmul_matrix_bytes), so that a matrix's last group
// holds only its own rows.
std::span<const uint8_t> LoadedWeights::matrix(const GgufTensor& tensor) {
  const int64_t cols = tensor.dims[0];
  if (!kernels::is_repacked(tensor.type, cols)) return {tensor.data, tensor.nbytes};
  const int64_t rows = tensor.dims.size() > 1 ? tensor.dims[1] : 1;
  const int64_t matrices = tensor.n_elements() / (rows * cols);
  const int64_t in_bytes = rows * static_cast<int64_t>(row_bytes(tensor.type, cols));
  const int64_t out_bytes = kernels::matmul_matrix_bytes(tensor.type, rows, cols);
  auto* copy = static_cast<uint8_t*>(allocate(matrices * out_bytes));
  kernels::run_team(LoadThreads::current(), [&] {
    for (int64_t m = 0; m < matrices; ++m)
      kernels::pack_matrix(tensor.type, tensor.data + m * in_bytes, copy + m * out_bytes, rows, cols);
  });
  release_file_pages(tensor.data, tensor.nbytes);
  return {copy, static_cast<size_t>(matrices * out_bytes)};
}

}  // namespace kiln
