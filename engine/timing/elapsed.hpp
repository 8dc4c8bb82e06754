// Wall-clock time since a moment, as the programs report it.
#pragma once

#include <chrono>

namespace kiln {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double ms_since(std::chrono::steady_clock::time_point t0) { return 1000.0 * seconds_since(t0); }

}  // namespace kiln
