// Measuring this machine's own limits, so benchmark numbers can be read as a
// fraction of what the hardware allows: sustained memory read bandwidth, peak
// FP32 FMA throughput, and int8 dot-product throughput.
#pragma once

#include <string>
#include <vector>

namespace kiln {

struct MachineLimits {
  std::string cpu;                        // model name from /proc/cpuinfo
  std::vector<double> read_gbps;          // read bandwidth with 1..N threads (index = threads - 1)
  double fp32_gflops_per_core = 0;        // FMA peak of one core; 0 if not measured
  std::string fp32_method;                // which instruction fp32_gflops_per_core used
  double int8_gops_per_core = 0;          // int8 multiply-adds (x2) of one core; 0 if not measured
  std::string int8_method;                // which instructions int8_gops_per_core used

  // Bandwidth with `threads` threads (the largest measured if more).
  double bandwidth(int threads) const;
};

// Runs the measurements (a few seconds; allocates a 2 GiB buffer).
MachineLimits probe_machine(int max_threads);
// Only the per-core peaks (a fraction of a second): fp32_* and int8_*.
void probe_core_peaks(MachineLimits& m);

// The probe cache: a small JSON file, written atomically.
void save_limits(const MachineLimits& m, const std::string& path);
// Reads a cache written by save_limits; throws kiln::Error if it is unreadable or malformed.
MachineLimits load_limits(const std::string& path);
// $XDG_CACHE_HOME/kiln/machine.json, or ~/.cache/kiln/machine.json.
std::string default_limits_path();

}  // namespace kiln
