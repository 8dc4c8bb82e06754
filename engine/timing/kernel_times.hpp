// How long the kernel calls of one forward pass took, by kind
// (a model's time_kernels). Subtracted from a measured time per token, it leaves
// what the token cost beyond its kernels: kiln-bench's "overhead".
#pragma once

namespace kiln {

// The kinds a forward pass's kernel calls are grouped in.
enum class KernelKind {
  Matmul,     // weight matrix times activations, the classifier included
  Attention,  // scores, softmax and the weighted sum over the cache
  Other,      // embedding lookup, norms, RoPE, biases, SwiGLU, rounding to Q8, storing into the cache
};
inline constexpr int kKernelKinds = 3;

struct KernelTimes {
  double seconds[kKernelKinds] = {};  // per kind, summed over its calls
  int calls[kKernelKinds] = {};
  double timing_cost = 0;  // seconds the timing itself adds to a call, already taken off `seconds`
  int threads = 1;         // the team the pass ran on

  double& operator[](KernelKind k) { return seconds[static_cast<int>(k)]; }
  double operator[](KernelKind k) const { return seconds[static_cast<int>(k)]; }
  double total() const {
    double sum = 0;
    for (double s : seconds) sum += s;
    return sum;
  }
  int total_calls() const {
    int sum = 0;
    for (int c : calls) sum += c;
    return sum;
  }
};

}  // namespace kiln
