// Where the float matmul finds its weight rows (F32, F16 and BF16 rows too
// long for column panels, float_columns.hpp): the GGUF's rows, copied at
// load time a stride apart that is an odd number of cache lines when they
// are a whole, even number of lines long.
//
// A row of a power of two bytes (2048 F32 values: 8 KiB) puts the same
// column of every row in the same set of the L1 cache, and the rows a tile
// reads side by side (16 in generation, matmul.hpp) then evict each other
// long before they are used up: one cache line of zeros after each row
// spreads them over as many sets as there are rows (an odd number of lines
// and the 64 sets of a 4 KiB way have no common factor). The padding is at
// most 1/32 of a row: rows under 2 KiB are left as they are.
#pragma once

#include <cstdint>

#include "kernels/cache_line.hpp"
#include "kernels/float_columns.hpp"
#include "kernels/tensor_type.hpp"

namespace kiln::kernels {

constexpr bool has_padded_rows(TensorType t, int64_t cols) {
  if ((t != TensorType::F32 && t != TensorType::F16 && t != TensorType::BF16) || in_float_columns(t, cols)) return false;
  const auto bytes = static_cast<int64_t>(row_bytes(t, cols));
  return bytes >= 2048 && bytes % (2 * kCacheLineBytes) == 0;
}

// Bytes from one weight row to the next as the matmul reads a float matrix.
constexpr int64_t float_row_stride(TensorType t, int64_t cols) {
  return static_cast<int64_t>(row_bytes(t, cols)) + (has_padded_rows(t, cols) ? kCacheLineBytes : 0);
}

// Copies the rows x cols matrix `gguf` (GGUF layout, has_padded_rows) into
// `out` (rows * float_row_stride bytes), zeros after each row. Work-shared
// over rows when called inside a parallel region.
void pad_float_rows(TensorType t, const void* gguf, void* out, int64_t rows, int64_t cols);

}  // namespace kiln::kernels
