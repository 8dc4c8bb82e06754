// The unit in which caches hold memory and prefetches ask for it: 64 bytes
// on every CPU kiln targets (x86-64, and the aarch64 cores it is built for).
#pragma once

#include <cstdint>

namespace kiln::kernels {

inline constexpr int64_t kCacheLineBytes = 64;

// Asks for the cache line holding p, into L2 rather than L1: a prefetch into
// L1 holds one of the few L1 miss buffers until its line arrives from
// memory, which capped the reads a weight stream kept in flight
// (docs/benchmarks.md, "prefetches into L2").
inline void prefetch_to_l2(const void* p) { __builtin_prefetch(p, 0, 2); }

}  // namespace kiln::kernels
