#include "apps/resident_memory.hpp"

#include <fstream>
#include <sstream>

namespace kiln {

std::optional<int64_t> status_bytes(const std::string& status_text, const std::string& key) {
  std::istringstream lines(status_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.compare(0, key.size(), key) != 0 || line.size() == key.size() || line[key.size()] != ':') continue;
    std::istringstream value(line.substr(key.size() + 1));
    int64_t kib = -1;
    std::string unit, rest;
    if (!(value >> kib >> unit) || kib < 0 || unit != "kB" || value >> rest) return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

std::optional<int64_t> own_status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return status_bytes(text.str(), key);
}

bool reset_peak_resident() {
  // Writing 5 to clear_refs resets VmHWM to the current resident set (proc(5)).
  std::ofstream out("/proc/self/clear_refs");
  return static_cast<bool>(out << "5" << std::flush);
}

}  // namespace kiln
