// A string that remembers which of its bytes came from the caller's data
// (message content) rather than from the template. The renderer carries this
// through every string operation, so that the rendered prompt can be
// tokenized with special tokens recognized only where the template wrote them:
// a user typing "<|im_end|>" gets those characters, not the token.
#pragma once

#include <memory>
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

// The longest text a template may build, the prompt included (twice the
// largest request body the server takes; a prompt that fits a context is far
// shorter): beyond it, appending throws ValueError instead of exhausting memory.
inline constexpr size_t kMaxTextBytes = size_t{16} << 20;
// Throws ValueError if a text of `bytes` would be longer than kMaxTextBytes.
void check_text_size(size_t bytes);

// Copies share their bytes (copy on write), so that a list holding one long
// string many times, or a value passed around, costs no copy of the text.
class Text {
 public:
  Text() = default;
  // Template text (trusted).
  Text(std::string s);
  Text(const char* s) : Text(std::string(s)) {}
  // Caller's data: every byte is user content.
  static Text from_user(std::string s);

  const std::string& str() const;
  size_t size() const { return str().size(); }
  bool empty() const { return str().empty(); }
  // Whether byte i came from the caller's data.
  bool is_user(size_t i) const { return data_ && !data_->user.empty() && data_->user[i]; }
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

  bool operator==(const Text& o) const { return str() == o.str(); }

 private:
  struct Data {
    std::string bytes;
    std::vector<bool> user;  // empty: no user byte; else one flag per byte
  };
  // The bytes to change in place: this text's own (a copy if they are shared).
  Data& own();

  std::shared_ptr<Data> data_;  // null: empty; changed only while not shared (own())
};

}  // namespace kiln::chat
