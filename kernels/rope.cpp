#include "kernels/rope.hpp"

namespace kiln::kernels {

void rope_inv_freq(float base, int rot_dim, float* out) {
  for (int i = 0; i < rot_dim / 2; ++i)
    out[i] = 1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(rot_dim));
}

}  // namespace kiln::kernels
