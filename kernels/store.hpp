// How a matrix product writes its results.
#pragma once

namespace kiln::kernels {

// y = W x, or y += W x (a residual connection, added in place).
enum class Store { Replace, Add };

}  // namespace kiln::kernels
