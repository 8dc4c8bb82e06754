// The unit in which caches hold memory and prefetches ask for it: 64 bytes
// on every CPU kiln targets (x86-64, and the aarch64 cores it is built for).
#pragma once

#include <cstdint>

namespace kiln::kernels {

inline constexpr int64_t kCacheLineBytes = 64;

}  // namespace kiln::kernels
