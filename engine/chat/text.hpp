// A string that remembers which of its bytes came from the caller's data
// (message content) rather than from the template. The renderer carries this
// through every string operation, so that the rendered prompt can be
// tokenized with special tokens recognized only where the template wrote them:
// a user typing "<|im_end|>" gets those characters, not the token.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::chat {

// An error in a value operation; the renderer adds the template position.
class ValueError : public std::runtime_error {
 public:
  explicit ValueError(const std::string& m) : std::runtime_error(m) {}
};

// The longest text a template may build (a prompt is far shorter): beyond it,
// appending throws ValueError instead of exhausting memory.
inline constexpr size_t kMaxTextBytes = size_t{64} << 20;

class Text {
 public:
  Text() = default;
  // Template text (trusted).
  Text(std::string s) : bytes_(std::move(s)) {}
  Text(const char* s) : bytes_(s) {}
  // Caller's data: every byte is user content.
  static Text from_user(std::string s);

  const std::string& str() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  // Whether byte i came from the caller's data.
  bool is_user(size_t i) const { return !user_.empty() && user_[i]; }
  bool any_user() const;

  // Appending beyond kMaxTextBytes throws ValueError.
  void append(const Text& t);
  void append(std::string_view plain);
  void append(const char* plain) { append(std::string_view(plain)); }
  void append(const std::string& plain) { append(std::string_view(plain)); }
  Text substr(size_t pos, size_t n = std::string::npos) const;
  // The same marks, new bytes: user content if any byte of `from` was.
  static Text derived(std::string s, const Text& from);
  // The same marks, new bytes: user content if `user`.
  static Text marked(std::string s, bool user);

  bool operator==(const Text& o) const { return bytes_ == o.bytes_; }

 private:
  std::string bytes_;
  std::vector<bool> user_;  // empty: no user byte; else one flag per byte
};

}  // namespace kiln::chat
