// Large buffers on 2 MB pages: a block of 2 MB or more starts on a 2 MB
// boundary and asks for 2 MB pages over its whole 2 MB stretches (the tail
// keeps small pages, so no page holds memory past the block). Writing fresh
// memory then faults once per 2 MB, not per 4 KB, and reading it misses the
// TLB as rarely. Used for weight copies made at load time and for KV
// snapshots (SessionState), which a server takes while other requests wait.
#pragma once

#include <cstddef>
#include <cstdlib>

namespace kiln {

// At least `bytes` (rounded up to 64), aligned to 64 bytes, or to 2 MB from
// 2 MB on. Throws std::bad_alloc; std::free releases it.
void* allocate_large(size_t bytes);

// allocate_large for standard containers.
template <class T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U>
  LargeAllocator(const LargeAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_large(n * sizeof(T))); }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const LargeAllocator<U>&) const { return true; }
};

}  // namespace kiln
