// F32 matrices with short rows, rearranged at load time into column panels
// for the matmul (matmul_columns.hpp).
//
// A row of a few dozen values is a few vectors: a dot product per row would
// spend as much on adding its lanes at the end as on its multiply-adds
// (tiny models: stories260K's rows are 64 and 172 values). In column panels
// a vector holds one column of kFloatLanes consecutive rows, so a product
// is multiply-adds of weight vectors by broadcast activations and each lane
// ends as one row's result, with no lanes to add.
//
// Layout: groups of kFloatLanes rows; group g holds, for each column k in
// order, the kFloatLanes values W[g * kFloatLanes + i][k]. A last group with
// fewer rows is padded with zero rows. Like the code that reads it, it
// depends on the instruction set the build targets.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/arch/simd.hpp"
#include "kernels/team.hpp"
#include "kernels/tensor_type.hpp"

namespace kiln::kernels {

// Rows shorter than this go into column panels: the shorter a row, the
// larger the share of its dot product that adding its lanes takes. Longer
// rows go through dot products (dot.hpp) and, for prompts, the panels of
// matmul_float.hpp.
inline constexpr int64_t kFloatColumnsMaxCols = 256;

constexpr bool in_float_columns(TensorType t, int64_t cols) { return t == TensorType::F32 && cols < kFloatColumnsMaxCols; }

constexpr int64_t float_column_groups(int64_t rows) { return (rows + kFloatLanes - 1) / kFloatLanes; }

constexpr int64_t float_columns_bytes(int64_t rows, int64_t cols) {
  return float_column_groups(rows) * cols * kFloatLanes * static_cast<int64_t>(sizeof(float));
}

// Writes the rows x cols F32 matrix `w` (GGUF layout) as column panels into
// `out` (float_columns_bytes(rows, cols) bytes). Work-shared over groups when
// called inside a parallel region.
inline void pack_float_columns(const float* w, float* out, int64_t rows, int64_t cols) {
  const int64_t groups = float_column_groups(rows);
#pragma omp for schedule(static) nowait
  for (int64_t g = 0; g < groups; ++g) {
    float* panel = out + g * cols * kFloatLanes;
    for (int64_t k = 0; k < cols; ++k)
      for (int64_t i = 0; i < kFloatLanes; ++i) {
        const int64_t row = g * kFloatLanes + i;
        panel[k * kFloatLanes + i] = row < rows ? w[row * cols + k] : 0.0f;
      }
  }
  team_barrier();
}

}  // namespace kiln::kernels
