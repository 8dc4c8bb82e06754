#include "engine/chat/text.hpp"

#include <algorithm>

namespace kiln::chat {

Text Text::from_user(std::string s) { return marked(std::move(s), true); }

Text Text::marked(std::string s, bool user) {
  Text t(std::move(s));
  if (user && !t.bytes_.empty()) t.user_.assign(t.bytes_.size(), true);
  return t;
}

Text Text::derived(std::string s, const Text& from) { return marked(std::move(s), from.any_user()); }

bool Text::any_user() const { return std::find(user_.begin(), user_.end(), true) != user_.end(); }

namespace {

void check_length(size_t have, size_t more) {
  if (more > kMaxTextBytes - std::min(have, kMaxTextBytes)) throw ValueError("text longer than 64 MiB");
}

}  // namespace

void Text::append(const Text& t) {
  check_length(bytes_.size(), t.size());
  if (t.user_.empty()) {
    append(std::string_view(t.bytes_));
    return;
  }
  user_.resize(bytes_.size(), false);  // this text's own bytes, marked or not
  user_.insert(user_.end(), t.user_.begin(), t.user_.end());
  bytes_ += t.bytes_;
}

void Text::append(std::string_view plain) {
  check_length(bytes_.size(), plain.size());
  bytes_ += plain;
  if (!user_.empty()) user_.resize(bytes_.size(), false);
}

Text Text::substr(size_t pos, size_t n) const {
  pos = std::min(pos, bytes_.size());
  n = std::min(n, bytes_.size() - pos);
  Text t(bytes_.substr(pos, n));
  if (!user_.empty()) t.user_.assign(user_.begin() + pos, user_.begin() + pos + n);
  return t;
}

}  // namespace kiln::chat
