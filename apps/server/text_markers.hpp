// Finding a marker in a reply that is still arriving: a marker may be cut
// between two pieces, so its start at the very end of the text counts.
#pragma once

#include <algorithm>
#include <string_view>

namespace kiln {

// Where `text` has `marker`, or a start of it at its very end; npos if neither.
inline size_t marker_start(std::string_view text, std::string_view marker) {
  if (const size_t at = text.find(marker); at != std::string_view::npos) return at;
  for (size_t n = std::min(marker.size() - 1, text.size()); n > 0; --n)
    if (text.substr(text.size() - n) == marker.substr(0, n)) return text.size() - n;
  return std::string_view::npos;
}

}  // namespace kiln
