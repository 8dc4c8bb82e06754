#include "engine/memory/huge_pages.hpp"

#include <sys/mman.h>

#include <new>

namespace kiln {

void* allocate_large(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t size = (bytes + 63) / 64 * 64;
  void* p = nullptr;  // posix_memalign: unlike aligned_alloc, the size need not be a multiple of the alignment
  if (posix_memalign(&p, size >= kHuge ? kHuge : 64, size) != 0) throw std::bad_alloc();
  if (size >= kHuge) madvise(p, size / kHuge * kHuge, MADV_HUGEPAGE);
  return p;
}

}  // namespace kiln
