#include "engine/tokenizer/tokenizer_bpe.hpp"

#include <bit>
#include <cstdio>
#include <queue>

#include "engine/error/error.hpp"
#include "engine/tokenizer/tokenizer_byte_level.hpp"
#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln {

namespace {

struct NamedFlavor {
  std::string_view name;
  BpeFlavor flavor;
};

// tokenizer.ggml.pre values of the model families kiln compiles, grouped as
// llama.cpp groups them.
constexpr NamedFlavor kFlavors[] = {
    {"llama3", {PreTokenizer::Llama3, true, true}},
    {"llama-v3", {PreTokenizer::Llama3, true, true}},
    {"llama-bpe", {PreTokenizer::Llama3, true, true}},
    {"falcon3", {PreTokenizer::Llama3, true, true}},
    {"smaug-bpe", {PreTokenizer::Llama3, false, false}},  // SmolLM3's Llama 3 vocabulary
    {"qwen2", {PreTokenizer::Qwen2, false, false}},
    {"deepseek-r1-qwen", {PreTokenizer::Qwen2, false, false}},
    {"gpt-4o", {PreTokenizer::Gpt4o, false, false}},  // Phi-4-mini
    {"gpt-2", {PreTokenizer::Gpt2, false, false}},
    {"deepseek-llm", {PreTokenizer::DeepseekLlm, false, false}},
    {"deepseek-coder", {PreTokenizer::DeepseekCoder, false, false}},
    {"smollm", {PreTokenizer::Smollm, false, false}},
    {"default", {PreTokenizer::Default, false, false}},
};

// One token of a piece while merging. Symbols form a doubly linked list in
// text order; a symbol merged into its left neighbour gets id -1.
struct Symbol {
  int32_t id;
  int prev;  // -1: none
  int next;  // -1: none
};

// A possible merge of symbol `left` with its right neighbour, queued when the
// two were `left_id` and `right_id`; if either has changed since, it is stale.
struct MergeCandidate {
  int32_t rank;
  int left;
  int32_t left_id;
  int32_t right_id;
  int32_t result;
};

// Priority order: the lowest rank first; on ties, the leftmost.
struct MergeOrder {
  bool operator()(const MergeCandidate& a, const MergeCandidate& b) const {
    if (a.rank != b.rank) return a.rank > b.rank;
    return a.left > b.left;
  }
};

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// Marks an unused slot of the merge table; token ids are below 2^31.
constexpr uint64_t kNoPair = ~uint64_t{0};

}  // namespace

std::optional<BpeFlavor> bpe_flavor(std::string_view pre) {
  for (const NamedFlavor& named : kFlavors) {
    if (named.name == pre) return named.flavor;
  }
  return std::nullopt;
}

std::string known_bpe_flavors() {
  std::string names;
  for (const NamedFlavor& named : kFlavors) names.append(names.empty() ? "" : ", ").append(named.name);
  return names;
}

BpeModel::BpeModel(std::string_view where, const TokenTexts& pieces,
                   const std::vector<std::string>& merges, BpeFlavor flavor)
    : flavor_(flavor), tokens_(pieces, [](size_t) { return true; }) {
  for (int byte = 0; byte < 256; ++byte) {
    std::string text;
    append_utf8(byte_level_code_point(static_cast<uint8_t>(byte)), text);
    byte_ids_[byte] = tokens_.find(text);
    if (byte_ids_[byte] < 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", byte);
      throw Error(std::string(where) + ": the vocab has no token for byte " + hex + " (\"" + text + "\")");
    }
  }

  size_t n_slots = 16;
  while (n_slots * 3 < 4 * merges.size()) n_slots *= 2;
  merges_.assign(n_slots, Merge{kNoPair, 0, 0});
  std::string merged;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& merge = merges[rank];
    auto fail = [&](const std::string& why) {
      return Error(std::string(where) + ": tokenizer.ggml.merges[" + std::to_string(rank) + "] is \"" + merge +
                   "\", " + why);
    };
    // The left token cannot be empty, so a space at the very start belongs to it.
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos) throw fail("not two tokens separated by a space");
    const std::string_view left_text = std::string_view(merge).substr(0, space);
    const std::string_view right_text = std::string_view(merge).substr(space + 1);
    merged.assign(left_text).append(right_text);
    const int32_t left = tokens_.find(left_text), right = tokens_.find(right_text), result = tokens_.find(merged);
    if (left < 0 || right < 0) throw fail("which names a token the vocab does not have");
    if (result < 0) throw fail("whose merged token is not in the vocab");
    add_merge({pair_key(left, right), static_cast<int32_t>(rank), result});
  }

  if (!flavor_.ignore_merges) tokens_ = TokenIndex();
}

size_t BpeModel::first_slot(uint64_t pair) const {
  // Fibonacci hashing: the top bits of the product, as many as index the table.
  const int bits = std::countr_zero(merges_.size());
  return static_cast<size_t>((pair * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

void BpeModel::add_merge(const Merge& merge) {
  for (size_t slot = first_slot(merge.pair);; slot = (slot + 1) & (merges_.size() - 1)) {
    if (merges_[slot].pair == kNoPair) {
      merges_[slot] = merge;
      return;
    }
    if (merges_[slot].pair == merge.pair) return;  // a repeated pair keeps its first (lowest) rank
  }
}

const BpeModel::Merge* BpeModel::find_merge(int32_t left, int32_t right) const {
  const uint64_t pair = pair_key(left, right);
  for (size_t slot = first_slot(pair);; slot = (slot + 1) & (merges_.size() - 1)) {
    if (merges_[slot].pair == pair) return &merges_[slot];
    if (merges_[slot].pair == kNoPair) return nullptr;
  }
}

void BpeModel::encode(std::string_view text, size_t max_tokens, std::vector<int32_t>& out) const {
  std::vector<std::string_view> pieces;
  pretokenize(flavor_.pre_tokenizer, text, pieces);
  for (std::string_view piece : pieces) {
    if (out.size() > max_tokens) return;
    encode_piece(piece, out);
  }
}

// A priority queue holds the possible merges of adjacent symbols; entries
// invalidated by a merge are skipped when popped, so the work is
// O(n log n) in the length of the piece.
void BpeModel::encode_piece(std::string_view piece, std::vector<int32_t>& out) const {
  if (flavor_.ignore_merges) {
    if (const int32_t id = tokens_.find(encode_byte_level(piece)); id >= 0) {
      out.push_back(id);
      return;
    }
  }

  std::vector<Symbol> symbols;
  symbols.reserve(piece.size());
  for (size_t i = 0; i < piece.size(); ++i) {
    const int index = static_cast<int>(i);
    symbols.push_back({byte_ids_[static_cast<uint8_t>(piece[i])], index - 1, index + 1});
  }
  symbols.back().next = -1;

  std::priority_queue<MergeCandidate, std::vector<MergeCandidate>, MergeOrder> queue;
  auto consider = [&](int left) {
    if (left < 0 || symbols[left].next < 0) return;
    const int32_t left_id = symbols[left].id, right_id = symbols[symbols[left].next].id;
    if (const Merge* merge = find_merge(left_id, right_id)) {
      queue.push({merge->rank, left, left_id, right_id, merge->result});
    }
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);

  while (!queue.empty()) {
    const MergeCandidate candidate = queue.top();
    queue.pop();
    Symbol& left = symbols[candidate.left];
    // A symbol's text only grows, so a token id it had once does not come back.
    if (left.id != candidate.left_id || left.next < 0 || symbols[left.next].id != candidate.right_id) continue;
    Symbol& right = symbols[left.next];
    left.id = candidate.result;
    right.id = -1;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = candidate.left;
    consider(left.prev);
    consider(candidate.left);
  }

  for (int i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace kiln
