#include "engine/chat/text.hpp"

#include <algorithm>

namespace kiln::chat {

Text::Text(std::string s) {
  if (!s.empty()) data_ = std::make_shared<Data>(Data{std::move(s), {}});
}

Text Text::from_user(std::string s) { return marked(std::move(s), true); }

Text Text::marked(std::string s, bool user) {
  Text t(std::move(s));
  if (user && t.data_) t.own().user.assign(t.size(), true);
  return t;
}

Text Text::derived(std::string s, const Text& from) { return marked(std::move(s), from.any_user()); }

const std::string& Text::str() const {
  static const std::string kEmpty;
  return data_ ? data_->bytes : kEmpty;
}

bool Text::any_user() const {
  return data_ && std::find(data_->user.begin(), data_->user.end(), true) != data_->user.end();
}

Text::Data& Text::own() {
  // Shared bytes are never changed: whoever else holds them keeps what they saw.
  if (!data_ || data_.use_count() > 1) data_ = std::make_shared<Data>(data_ ? *data_ : Data{});
  return *data_;
}

void check_text_size(size_t bytes) {
  if (bytes > kMaxTextBytes)
    throw ValueError("text longer than " + std::to_string(kMaxTextBytes >> 20) + " MiB (the renderer's limit)");
}

void Text::append(const Text& t) {
  check_text_size(size() + t.size());
  if (!t.any_user()) {
    append(std::string_view(t.str()));
    return;
  }
  if (!data_) {  // nothing to join: share t's bytes
    data_ = t.data_;
    return;
  }
  Data& d = own();
  d.user.resize(d.bytes.size(), false);  // this text's own bytes, marked or not
  d.user.insert(d.user.end(), t.data_->user.begin(), t.data_->user.end());
  d.bytes += t.data_->bytes;
}

void Text::append(std::string_view plain) {
  check_text_size(size() + plain.size());
  if (plain.empty()) return;
  Data& d = own();
  d.bytes += plain;
  if (!d.user.empty()) d.user.resize(d.bytes.size(), false);
}

Text Text::substr(size_t pos, size_t n) const {
  pos = std::min(pos, size());
  n = std::min(n, size() - pos);
  if (pos == 0 && n == size()) return *this;
  Text t(str().substr(pos, n));
  if (t.data_ && !data_->user.empty()) t.own().user.assign(data_->user.begin() + pos, data_->user.begin() + pos + n);
  return t;
}

}  // namespace kiln::chat
