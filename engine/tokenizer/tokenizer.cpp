#include "engine/tokenizer/tokenizer.hpp"

#include <algorithm>
#include <limits>

#include "engine/tokenizer/tokenizer_byte_level.hpp"
#include "engine/tokenizer/tokenizer_eog.hpp"
#include "engine/tokenizer/tokenizer_metadata.hpp"

namespace kiln {

namespace {

constexpr const char* kBosKey = "tokenizer.ggml.bos_token_id";
constexpr const char* kEosKey = "tokenizer.ggml.eos_token_id";
constexpr const char* kAddBosKey = "tokenizer.ggml.add_bos_token";
constexpr const char* kAddEosKey = "tokenizer.ggml.add_eos_token";

constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();  // encode(): no limit on the tokens

// "▁⁇▁" with spaces for "▁": how SentencePiece shows <unk>.
constexpr std::string_view kUnknownText = " \xE2\x81\x87 ";

// The bytes a token stands for in decoded text. Byte-level BPE vocabs write
// normal tokens in GPT-2's byte alphabet, SentencePiece writes spaces as "▁";
// BPE's user-defined tokens are plain text.
std::string decoded_text(std::string_view piece, TokenType type, bool byte_level) {
  switch (type) {
    case TokenType::Normal:
      return byte_level ? decode_byte_level(piece) : unescape_spaces(piece);
    case TokenType::UserDefined:
      return byte_level ? std::string(piece) : unescape_spaces(piece);
    case TokenType::Byte:
      return std::string(1, static_cast<char>(parse_byte_piece(piece).value()));
    case TokenType::Unknown:
      return std::string(kUnknownText);
    case TokenType::Control:
    case TokenType::Unused:
      break;
  }
  return {};
}

// How many bytes of the text being encoded a token can cover (see Tokenizer::max_token_bytes).
size_t covered_bytes(TokenType type, std::string_view piece, std::string_view text) {
  switch (type) {
    case TokenType::Normal: return text.size();
    case TokenType::Byte: return 1;
    default: return piece.size();  // matched as spelled out
  }
}

BpeFlavor read_bpe_flavor(const GgufFile& f) {
  const std::string key = "tokenizer.ggml.pre";
  if (f.find(key) == nullptr) throw Error(f.path() + ": " + key + " is missing; it names the BPE pre-tokenizer");
  const std::string pre = f.get_string(key);
  if (const std::optional<BpeFlavor> flavor = bpe_flavor(pre)) return *flavor;
  throw Error(f.path() + ": " + key + " is \"" + pre + "\", a pre-tokenizer kiln does not know (it knows " +
              known_bpe_flavors() + ")");
}

}  // namespace

Tokenizer::Tokenizer(Model model, TokenTexts pieces, std::vector<TokenType> types)
    : model_(std::move(model)),
      pieces_(std::move(pieces)),
      types_(std::move(types)),
      special_tokens_(pieces_, types_) {
  const bool byte_level = std::holds_alternative<BpeModel>(model_);
  texts_.reserve(pieces_.size(), pieces_.bytes());
  for (size_t i = 0; i < pieces_.size(); ++i) {
    texts_.push_back(decoded_text(pieces_[i], types_[i], byte_level));
    max_token_bytes_ = std::max(max_token_bytes_, covered_bytes(types_[i], pieces_[i], texts_[i]));
  }
}

Tokenizer Tokenizer::from_gguf(const GgufFile& f) {
  const std::string kind = f.get_string("tokenizer.ggml.model");
  if (kind != "llama" && kind != "gpt2") {
    throw Error(f.path() + ": tokenizer.ggml.model is \"" + kind +
                "\"; kiln supports \"llama\" (SentencePiece) and \"gpt2\" (byte-level BPE) vocabs");
  }
  TokenTexts pieces;
  f.for_each_string("tokenizer.ggml.tokens", [&](std::string_view piece) { pieces.push_back(piece); });
  const size_t n = pieces.size();
  if (n == 0) throw Error(f.path() + ": tokenizer.ggml.tokens is empty");
  std::vector<TokenType> types = read_token_types(f, pieces);

  if (kind == "llama") {
    // Defaults are the Llama SentencePiece ids and flags, as llama.cpp assumes them.
    SpmModel model(pieces, types, read_scores(f, n), read_token_id(f, "tokenizer.ggml.unknown_token_id", 0, n));
    Tokenizer tok(std::move(model), std::move(pieces), std::move(types));
    tok.bos_ = read_token_id(f, kBosKey, 1, n);
    tok.eos_ = read_token_id(f, kEosKey, 2, n);
    tok.add_bos_ = f.get_bool_or(kAddBosKey, true);
    tok.add_space_prefix_ = f.get_bool_or("tokenizer.ggml.add_space_prefix", true);
    tok.finish_loading(f);
    return tok;
  }

  const BpeFlavor flavor = read_bpe_flavor(f);
  BpeModel model(f.path(), pieces, f.get_string_array("tokenizer.ggml.merges"), flavor);
  Tokenizer tok(std::move(model), std::move(pieces), std::move(types));
  tok.bos_ = read_optional_token_id(f, kBosKey, n).value_or(-1);
  tok.eos_ = read_optional_token_id(f, kEosKey, n).value_or(-1);
  tok.add_bos_ = f.get_bool_or(kAddBosKey, flavor.add_bos);
  tok.finish_loading(f);
  return tok;
}

void Tokenizer::finish_loading(const GgufFile& f) {
  add_eos_ = f.get_bool_or(kAddEosKey, false);
  if (add_bos_ && bos_ < 0) throw Error(f.path() + ": " + kAddBosKey + " is true, but " + kBosKey + " is not set");
  if (add_eos_ && eos_ < 0) throw Error(f.path() + ": " + kAddEosKey + " is true, but " + kEosKey + " is not set");
  end_of_generation_ = end_of_generation_ids(f, pieces_, eos_);
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
  return std::binary_search(end_of_generation_.begin(), end_of_generation_.end(), id);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  return *encode_at_most(kUnlimited, text, add_special, parse_special);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, const SpecialFilter& may_be_special,
                                       bool continues) const {
  return *encode_at_most(kUnlimited, text, add_special, may_be_special, continues);
}

std::optional<std::vector<int32_t>> Tokenizer::encode_at_most(size_t max_tokens, std::string_view text,
                                                              bool add_special, bool parse_special) const {
  if (text.size() > max_text_bytes(max_tokens)) return std::nullopt;
  return encode_fragments(special_tokens_.split(text, parse_special), add_special, false, max_tokens);
}

std::optional<std::vector<int32_t>> Tokenizer::encode_at_most(size_t max_tokens, std::string_view text,
                                                              bool add_special, const SpecialFilter& may_be_special,
                                                              bool continues) const {
  if (text.size() > max_text_bytes(max_tokens)) return std::nullopt;
  return encode_fragments(special_tokens_.split(text, true, may_be_special), add_special, continues, max_tokens);
}

size_t Tokenizer::max_text_bytes(size_t max_tokens) const {
  return max_tokens >= kUnlimited / max_token_bytes_ ? kUnlimited : max_tokens * max_token_bytes_;
}

// Tokens once produced are final (BOS, a spelled-out token, the tokens of an
// earlier fragment or pre-tokenized piece), so once there are more than
// max_tokens the whole text needs more.
std::optional<std::vector<int32_t>> Tokenizer::encode_fragments(const std::vector<TextFragment>& fragments,
                                                                bool add_special, bool continues,
                                                                size_t max_tokens) const {
  std::vector<int32_t> ids;
  if (add_special && add_bos_) ids.push_back(bos_);
  bool after_special = !continues;
  for (const TextFragment& fragment : fragments) {
    if (fragment.token >= 0) {
      ids.push_back(fragment.token);
      after_special = true;
    } else if (!fragment.text.empty()) {
      encode_text(fragment.text, after_special, max_tokens, ids);
      after_special = false;
    }
    if (ids.size() > max_tokens) return std::nullopt;
  }
  if (add_special && add_eos_) ids.push_back(eos_);
  if (ids.size() > max_tokens) return std::nullopt;
  return ids;
}

void Tokenizer::encode_text(std::string_view text, bool after_special, size_t max_tokens,
                            std::vector<int32_t>& out) const {
  if (const auto* spm = std::get_if<SpmModel>(&model_)) {
    // As llama.cpp: text after a spelled-out token gets the space prefix again.
    // SentencePiece merges across the whole fragment, so it cannot stop
    // sooner; max_text_bytes has bounded the fragment's length.
    spm->encode(text, add_space_prefix_ && after_special, out);
  } else {
    std::get<BpeModel>(model_).encode(text, max_tokens, out);
  }
}

}  // namespace kiln
