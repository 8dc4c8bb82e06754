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

// prefetch_to_l2 for each cache line's worth of the `bytes` from p.
inline void prefetch_lines_to_l2(const void* p, int64_t bytes) {
  for (int64_t line = 0; line < bytes; line += kCacheLineBytes) prefetch_to_l2(static_cast<const char*>(p) + line);
}

// How far ahead a quantized product over n_groups interleaved groups of rows
// (group_bytes each, one sequential stream per group) asks for weights: the
// next n_groups groups, at the place it reads in its own. Those are what it
// (or, at the end of its rows, the next thread) reads next, a whole step of
// groups ahead; the hardware prefetcher alone does not keep ahead of the
// product when the matrix comes from memory, and distances of 2 to 8 KiB in
// a group's own stream read slower (docs/benchmarks.md, "the next groups
// asked for ahead").
constexpr int64_t next_groups_ahead(int n_groups, int64_t group_bytes) { return n_groups * group_bytes; }

}  // namespace kiln::kernels
