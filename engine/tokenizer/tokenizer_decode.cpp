#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln {

namespace {

// Removes from `bytes` and returns its longest prefix of complete characters,
// with invalid sequences replaced by U+FFFD. An unfinished character at the
// end stays in `bytes`, unless `at_end`, when it is replaced as well.
std::string take_complete_text(std::string& bytes, bool at_end) {
  std::string text;
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Utf8Unit unit = next_utf8_unit(std::string_view(bytes).substr(pos));
    if (unit.status == Utf8Status::Truncated && !at_end) break;
    if (unit.status == Utf8Status::Complete) {
      text.append(bytes, pos, unit.length);
    } else {
      append_utf8(kReplacementChar, text);
    }
    pos += unit.length;
  }
  bytes.erase(0, pos);
  return text;
}

}  // namespace

std::string Detokenizer::push(int32_t id) {
  const TokenType type = tok_.type(id);
  if (type == TokenType::Control || type == TokenType::Unused) return {};

  std::string_view text = tok_.text(id);
  // The encoder added this space; SentencePiece's decoder takes it back.
  if (!seen_text_ && tok_.adds_space_prefix() && type != TokenType::Byte && text.starts_with(' ')) {
    text.remove_prefix(1);
  }
  seen_text_ = true;
  pending_ += text;
  return take_complete_text(pending_, /*at_end=*/false);
}

std::string Detokenizer::flush() { return take_complete_text(pending_, /*at_end=*/true); }

}  // namespace kiln
