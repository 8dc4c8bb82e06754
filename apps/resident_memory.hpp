// This process's resident memory, from /proc/self/status (Linux). kiln-bench
// compares its peak with the weights plus the KV cache: the target
// is at most 5 % more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

// The value of the "<key>:  <n> kB" line of /proc/<pid>/status text, in bytes;
// nullopt if there is no such line or it does not hold a number of kB.
std::optional<int64_t> status_bytes(const std::string& status_text, const std::string& key);

// status_bytes of this process's status: "VmHWM" is the peak resident set so
// far, "VmRSS" the current one. nullopt where the system does not report it.
std::optional<int64_t> own_status_bytes(const std::string& key);

// Restarts the peak from the current resident set (Linux 4.0 on); false if it could not.
bool reset_peak_resident();

}  // namespace kiln
