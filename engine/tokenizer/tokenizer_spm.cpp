#include "engine/tokenizer/tokenizer_spm.hpp"

#include <queue>

#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 "▁": SentencePiece's space

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

// SentencePiece's view of the text: every space written as "▁", and
// optionally one more in front.
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

}  // namespace

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

std::string unescape_spaces(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  for (size_t pos = 0;;) {
    const size_t mark = piece.find(kSpaceMark, pos);
    out.append(piece.substr(pos, mark - pos));
    if (mark == std::string_view::npos) return out;
    out += ' ';
    pos = mark + kSpaceMark.size();
  }
}

SpmModel::SpmModel(const TokenTexts& pieces, const std::vector<TokenType>& types,
                   std::vector<float> scores, int32_t unk)
    // Only these kinds can come out of merging; SentencePiece never produces
    // control, unknown or unused pieces from input, even when they match it.
    : pieces_(pieces,
              [&](size_t id) { return types[id] == TokenType::Normal || types[id] == TokenType::UserDefined; }),
      scores_(std::move(scores)),
      unk_(unk) {
  byte_ids_.fill(-1);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::optional<uint8_t> byte = parse_byte_piece(pieces[i]);
    if (byte && byte_ids_[*byte] < 0) byte_ids_[*byte] = static_cast<int32_t>(i);
  }
}

int32_t SpmModel::find_piece(std::string_view text) const { return pieces_.find(text); }

void SpmModel::append_symbol(std::string_view text, std::vector<int32_t>& out) const {
  if (const int32_t id = find_piece(text); id >= 0) {
    out.push_back(id);
    return;
  }
  for (char c : text) {
    const int32_t byte_id = byte_ids_[static_cast<uint8_t>(c)];
    out.push_back(byte_id >= 0 ? byte_id : unk_);
  }
}

// Start from single characters and keep merging the adjacent pair whose
// concatenation is the highest-scoring vocab piece. A priority queue holds
// the candidate merges; entries invalidated by a merge are skipped when
// popped, so the work is O(n log n) in the text length.
void SpmModel::encode(std::string_view text, bool add_prefix, std::vector<int32_t>& out) const {
  const std::string escaped_text = escape_spaces(text, add_prefix);
  const std::string_view escaped = escaped_text;
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

}  // namespace kiln
