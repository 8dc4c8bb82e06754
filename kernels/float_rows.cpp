#include "kernels/float_rows.hpp"

#include <cstring>

#include "kernels/team.hpp"

namespace kiln::kernels {

void pad_float_rows(TensorType t, const void* gguf, void* out, int64_t rows, int64_t cols) {
  const auto bytes = static_cast<int64_t>(row_bytes(t, cols));
  const int64_t stride = float_row_stride(t, cols);
  const auto* src = static_cast<const uint8_t*>(gguf);
  auto* dst = static_cast<uint8_t*>(out);
#pragma omp for schedule(static) nowait
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * stride, src + r * bytes, static_cast<size_t>(bytes));
    std::memset(dst + r * stride + bytes, 0, static_cast<size_t>(stride - bytes));
  }
  team_barrier();
}

}  // namespace kiln::kernels
