// One text per token id, all in one buffer: a vocabulary's pieces, or the
// text each token decodes to. A vector of std::string would cost a 32-byte
// object (and, past 15 bytes, an allocation) per token, about 1 MB for a
// 32,000-token vocabulary, all of it written at load time; this is the
// bytes plus 4 per token.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/error/error.hpp"

namespace kiln {

class TokenTexts {
 public:
  void reserve(size_t n_texts, size_t n_bytes) {
    ends_.reserve(n_texts);
    bytes_.reserve(n_bytes);
  }
  // Throws kiln::Error if the texts would pass 4 GiB (no vocabulary does).
  void push_back(std::string_view text) {
    if (text.size() > std::numeric_limits<uint32_t>::max() - bytes_.size())
      throw Error("the vocabulary's texts exceed 4 GiB");
    bytes_ += text;
    ends_.push_back(static_cast<uint32_t>(bytes_.size()));
  }

  size_t size() const { return ends_.size(); }
  size_t bytes() const { return bytes_.size(); }
  std::string_view operator[](size_t id) const {
    const uint32_t begin = id == 0 ? 0 : ends_[id - 1];
    return std::string_view(bytes_).substr(begin, ends_[id] - begin);
  }
  // operator[] that throws std::out_of_range past the end.
  std::string_view at(size_t id) const {
    if (id >= size()) throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary");
    return (*this)[id];
  }

 private:
  std::string bytes_;           // every text, in id order
  std::vector<uint32_t> ends_;  // where text `id` ends in bytes_ (and text id + 1 starts)
};

}  // namespace kiln
