// Scratch memory a kernel keeps per thread between calls.
#pragma once

#include <cstdint>

namespace kiln::kernels {

// Values elements of scratch for one purpose (a tag type), one buffer per
// thread, aligned for any vector: threads and concurrent sequences never
// share one, and a forward pass allocates nothing. The tag keeps two kernels
// that want buffers of the same size and type from sharing one.
template <class Purpose, class Element, int64_t Values>
Element* thread_buffer() {
  alignas(64) static thread_local Element buffer[Values];
  return buffer;
}

}  // namespace kiln::kernels
