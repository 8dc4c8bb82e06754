#include "kernels/activation.hpp"

#include <algorithm>

namespace kiln::kernels {

void softmax(float* x, int n) {
  const float max = *std::max_element(x, x + n);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  for (int i = 0; i < n; ++i) x[i] /= sum;
}

}  // namespace kiln::kernels
