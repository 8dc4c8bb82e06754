#include "apps/server/stop_text.hpp"

#include <algorithm>

namespace kiln {

std::string StopText::push(std::string_view text) {
  if (stopped_) return "";
  held_ += text;
  size_t first = std::string::npos;  // where the earliest stop string starts
  for (const std::string& s : stops_) first = std::min(first, held_.find(s));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  // Keep the longest tail that a stop string starts with. A stop string
  // starts with a whole character, so the cut is between characters.
  size_t keep_from = held_.size();
  for (const std::string& s : stops_) {
    const size_t longest = std::min(s.size() - 1, held_.size());
    for (size_t n = longest; n > 0 && held_.size() - n < keep_from; --n)
      if (std::string_view(held_).substr(held_.size() - n) == std::string_view(s).substr(0, n)) {
        keep_from = held_.size() - n;
        break;
      }
  }
  std::string out = held_.substr(0, keep_from);
  held_.erase(0, keep_from);
  return out;
}

std::string StopText::flush() {
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace kiln
