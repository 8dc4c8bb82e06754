// A hint to the core that the thread is spinning on a flag (kernels/team.cpp):
// it frees execution resources for another hardware thread and, on x86, keeps
// the exit from the loop from being a memory-order mis-speculation.
#pragma once

namespace kiln::kernels::arch {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

}  // namespace kiln::kernels::arch
