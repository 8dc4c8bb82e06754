#include "engine/tokenizer.hpp"

#include <optional>
#include <queue>

namespace kiln {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";   // U+2581 "▁": SentencePiece's space
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kUnknownPiece = "\xE2\x96\x81\xE2\x81\x87\xE2\x96\x81";  // "▁⁇▁", as SentencePiece shows <unk>
constexpr uint64_t kNoTokenId = 0xFFFFFFFF;  // how GGUF files spell "no such token"

// ---- UTF-8 ----------------------------------------------------------------

enum class Utf8Status { Complete, Invalid, Truncated };
struct Utf8Unit {
  Utf8Status status;
  size_t length;
};

// Classifies the bytes at the start of `s` (not empty):
//   Complete:  a valid character of `length` bytes;
//   Invalid:   `length` bytes that cannot start a valid character (Unicode's
//              "maximal subpart", which becomes one U+FFFD);
//   Truncated: all of `s` is the valid beginning of an unfinished character.
Utf8Unit next_utf8_unit(std::string_view s) {
  const auto lead = static_cast<uint8_t>(s[0]);
  if (lead < 0x80) return {Utf8Status::Complete, 1};
  // The allowed range of the second byte is narrowed for a few lead bytes to
  // rule out overlong forms, UTF-16 surrogates and code points past U+10FFFF.
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {Utf8Status::Invalid, 1};
  }
  for (size_t i = 1; i < length; ++i) {
    if (i == s.size()) return {Utf8Status::Truncated, i};
    const auto byte = static_cast<uint8_t>(s[i]);
    if (byte < low || byte > high) return {Utf8Status::Invalid, i};
    low = 0x80;
    high = 0xBF;
  }
  return {Utf8Status::Complete, length};
}

// ---- vocabulary loading ---------------------------------------------------

// The byte a "<0xNN>" piece stands for (two upper-case hex digits), if it is one.
std::optional<uint8_t> parse_byte_piece(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return std::nullopt;
  auto hex_digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  const int high = hex_digit(piece[3]), low = hex_digit(piece[4]);
  if (high < 0 || low < 0) return std::nullopt;
  return static_cast<uint8_t>(high * 16 + low);
}

void require_length(const GgufFile& f, const std::string& key, size_t length, size_t n_tokens) {
  if (f.find(key) == nullptr) throw Error(f.path() + ": " + key + " is missing");
  if (length != n_tokens) {
    throw Error(f.path() + ": " + key + " has " + std::to_string(length) +
                " entries but tokenizer.ggml.tokens has " + std::to_string(n_tokens));
  }
}

// The token id stored under `key` (`fallback` when absent), checked to be in the vocab.
int32_t special_id(const GgufFile& f, const std::string& key, uint64_t fallback, size_t n_tokens) {
  const uint64_t id = f.get_uint_or(key, fallback);
  if (id >= n_tokens) {
    throw Error(f.path() + ": " + key + " = " + std::to_string(id) + " is out of range (the vocab has " +
                std::to_string(n_tokens) + " tokens)");
  }
  return static_cast<int32_t>(id);
}

// ---- encoding -------------------------------------------------------------

// SentencePiece's view of the text: an optional leading space ("dummy
// prefix", so a word at the start looks like one after a space), and every
// space written as "▁".
std::string escape_spaces(std::string_view text, bool add_prefix) {
  std::string out;
  out.reserve(text.size() + 16);
  if (add_prefix) out += kSpaceMark;
  for (char c : text) {
    if (c == ' ') {
      out += kSpaceMark;
    } else {
      out += c;
    }
  }
  return out;
}

// One stretch of the text while merging. Symbols form a doubly linked list in
// text order; a symbol merged into its left neighbour gets length 0.
struct Symbol {
  size_t start;
  size_t length;
  int prev;  // -1: none
  int next;  // -1: none
};

// A possible merge of symbol `left` with its right neighbour. `length` is the
// merged length at the time it was queued, to spot entries made stale by
// other merges.
struct MergeCandidate {
  float score;
  int left;
  size_t length;
};

// Priority order: the highest score first; on ties, the leftmost.
struct MergeOrder {
  bool operator()(const MergeCandidate& a, const MergeCandidate& b) const {
    if (a.score != b.score) return a.score < b.score;
    return a.left > b.left;
  }
};

// ---- decoding -------------------------------------------------------------

// Appends `piece` to `out` with every "▁" turned back into a space.
void append_unescaped(std::string_view piece, std::string& out) {
  for (size_t pos = 0; pos < piece.size();) {
    if (piece.substr(pos).starts_with(kSpaceMark)) {
      out += ' ';
      pos += kSpaceMark.size();
    } else {
      out += piece[pos++];
    }
  }
}

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
      text += kReplacement;
    }
    pos += unit.length;
  }
  bytes.erase(0, pos);
  return text;
}

}  // namespace

// ---- Tokenizer --------------------------------------------------------------

Tokenizer Tokenizer::from_gguf(const GgufFile& f) {
  const std::string model = f.get_string("tokenizer.ggml.model");
  if (model != "llama") {
    throw Error(f.path() + ": tokenizer.ggml.model is \"" + model +
                "\"; only SentencePiece vocabs (\"llama\") are supported");
  }

  Tokenizer tok;
  tok.pieces_ = f.get_string_array("tokenizer.ggml.tokens");
  const size_t n = tok.pieces_.size();
  if (n == 0) throw Error(f.path() + ": tokenizer.ggml.tokens is empty");
  tok.scores_ = f.get_float_array_or_empty("tokenizer.ggml.scores");
  require_length(f, "tokenizer.ggml.scores", tok.scores_.size(), n);
  const std::vector<int32_t> raw_types = f.get_int_array_or_empty("tokenizer.ggml.token_type");
  require_length(f, "tokenizer.ggml.token_type", raw_types.size(), n);

  tok.byte_ids_.fill(-1);
  tok.types_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = static_cast<int32_t>(i);
    const std::string& piece = tok.pieces_[i];
    if (raw_types[i] < 1 || raw_types[i] > 6) {
      throw Error(f.path() + ": tokenizer.ggml.token_type[" + std::to_string(i) + "] is " +
                  std::to_string(raw_types[i]) + ", not a known token type (1-6)");
    }
    const auto type = static_cast<TokenType>(raw_types[i]);
    tok.types_.push_back(type);

    const std::optional<uint8_t> byte = parse_byte_piece(piece);
    if (type == TokenType::Byte && !byte) {
      throw Error(f.path() + ": byte token " + std::to_string(i) + " is \"" + piece + "\", not <0xNN>");
    }
    if (byte && tok.byte_ids_[*byte] < 0) tok.byte_ids_[*byte] = id;
    // Only these kinds can come out of text; SentencePiece never produces
    // control, unknown or unused pieces from input, even when they match it.
    if (type == TokenType::Normal || type == TokenType::UserDefined) tok.piece_ids_.emplace(piece, id);
  }

  // Defaults are the Llama SentencePiece ids, as llama.cpp assumes them.
  tok.bos_ = special_id(f, "tokenizer.ggml.bos_token_id", 1, n);
  tok.eos_ = special_id(f, "tokenizer.ggml.eos_token_id", 2, n);
  tok.unk_ = special_id(f, "tokenizer.ggml.unknown_token_id", 0, n);
  if (f.get_uint_or("tokenizer.ggml.eot_token_id", kNoTokenId) != kNoTokenId) {
    tok.eot_ = special_id(f, "tokenizer.ggml.eot_token_id", kNoTokenId, n);
  }
  tok.add_bos_ = f.get_bool_or("tokenizer.ggml.add_bos_token", true);
  tok.add_eos_ = f.get_bool_or("tokenizer.ggml.add_eos_token", false);
  tok.add_space_prefix_ = f.get_bool_or("tokenizer.ggml.add_space_prefix", true);
  return tok;
}

uint8_t Tokenizer::byte_value(int32_t id) const {
  // from_gguf checked that every byte token parses.
  return parse_byte_piece(piece(id)).value();
}

int32_t Tokenizer::find_piece(std::string_view text) const {
  const auto it = piece_ids_.find(text);
  return it == piece_ids_.end() ? -1 : it->second;
}

void Tokenizer::append_symbol(std::string_view text, std::vector<int32_t>& out) const {
  if (const int32_t id = find_piece(text); id >= 0) {
    out.push_back(id);
    return;
  }
  for (char c : text) {
    const int32_t byte_id = byte_ids_[static_cast<uint8_t>(c)];
    out.push_back(byte_id >= 0 ? byte_id : unk_);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special) const {
  std::vector<int32_t> ids;
  if (add_special && add_bos_) ids.push_back(bos_);
  if (!text.empty()) append_merged(escape_spaces(text, add_space_prefix_), ids);
  if (add_special && add_eos_) ids.push_back(eos_);
  return ids;
}

// SentencePiece BPE: start from single characters and keep merging the
// adjacent pair whose concatenation is the highest-scoring vocab piece. A
// priority queue holds the candidate merges; entries invalidated by a merge
// are skipped when popped, so the work is O(n log n) in the text length.
void Tokenizer::append_merged(std::string_view escaped, std::vector<int32_t>& out) const {
  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < escaped.size();) {
    const size_t length = next_utf8_unit(escaped.substr(pos)).length;
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({pos, length, index - 1, index + 1});
    pos += length;
  }
  symbols.back().next = -1;

  std::priority_queue<MergeCandidate, std::vector<MergeCandidate>, MergeOrder> queue;
  auto consider = [&](int left) {
    if (left < 0 || symbols[left].next < 0) return;
    const Symbol& a = symbols[left];
    const size_t length = a.length + symbols[a.next].length;
    const int32_t id = find_piece(escaped.substr(a.start, length));
    if (id >= 0) queue.push({scores_[id], left, length});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);

  while (!queue.empty()) {
    const MergeCandidate candidate = queue.top();
    queue.pop();
    Symbol& left = symbols[candidate.left];
    // Symbols only grow, so a changed total length means one side merged
    // elsewhere after this candidate was queued.
    if (left.length == 0 || left.next < 0 || left.length + symbols[left.next].length != candidate.length) {
      continue;
    }
    Symbol& right = symbols[left.next];
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = candidate.left;
    consider(left.prev);
    consider(candidate.left);
  }

  for (int i = 0; i >= 0; i = symbols[i].next) {
    append_symbol(escaped.substr(symbols[i].start, symbols[i].length), out);
  }
}

// ---- Detokenizer ------------------------------------------------------------

std::string Detokenizer::push(int32_t id) {
  const TokenType type = tok_.type(id);
  if (type == TokenType::Control || type == TokenType::Unused) return {};

  if (type == TokenType::Byte) {
    pending_ += static_cast<char>(tok_.byte_value(id));
  } else {
    std::string_view piece = type == TokenType::Unknown ? kUnknownPiece : tok_.piece(id);
    // The encoder added this space; SentencePiece's decoder takes it back.
    if (!seen_text_ && tok_.adds_space_prefix() && piece.starts_with(kSpaceMark)) {
      piece.remove_prefix(kSpaceMark.size());
    }
    append_unescaped(piece, pending_);
  }
  seen_text_ = true;
  return take_complete_text(pending_, /*at_end=*/false);
}

std::string Detokenizer::flush() { return take_complete_text(pending_, /*at_end=*/true); }

}  // namespace kiln
