// Generated text on its way to a client that asked for stop strings: the text
// ends before the first stop string, and a piece that might be the start of
// one is held back until the next piece shows whether it is, so a stream
// never shows part of a stop string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

class StopText {
 public:
  explicit StopText(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Adds generated text (whole UTF-8 characters); returns what may be sent
  // now. After a stop string is found, returns the text before it and
  // ignores everything pushed later.
  std::string push(std::string_view text);
  // At the end of generation: the text held back (empty after a stop).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;  // not yet sent: may be the start of a stop string
  bool stopped_ = false;
};

}  // namespace kiln
