// Conversions between IEEE half precision (stored as raw uint16_t bits, as in
// GGUF files) and float.
#pragma once

#include <bit>
#include <cstdint>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace kiln::kernels {

// Bit-level implementations that work on any CPU. They give exactly the same
// results as the conversion instructions (x86 F16C, aarch64's own; tests
// check this), so which one a build uses never changes a model's output.
float fp16_to_fp32_portable(uint16_t h);
uint16_t fp32_to_fp16_portable(float f);  // rounds to nearest, ties to even

inline float fp16_to_fp32(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#elif defined(__aarch64__)
  return static_cast<float>(std::bit_cast<__fp16>(h));
#else
  return fp16_to_fp32_portable(h);
#endif
}

inline uint16_t fp32_to_fp16(float f) {
#if defined(__F16C__)
  return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#elif defined(__aarch64__)
  return std::bit_cast<uint16_t>(static_cast<__fp16>(f));
#else
  return fp32_to_fp16_portable(f);
#endif
}

}  // namespace kiln::kernels
