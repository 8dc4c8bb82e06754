#include "tests/support/vocab_variants.hpp"

#include <map>

#include "engine/error/error.hpp"

namespace kiln::test {

namespace {

constexpr float kAddedTokenScore = -1000.0f;  // llama.cpp's converter's score for added tokens

GgufValue string_value(std::string s) { return {GgufValueType::STRING, std::move(s)}; }
GgufValue bool_value(bool b) { return {GgufValueType::BOOL, b}; }
GgufValue u32_value(uint32_t v) { return {GgufValueType::UINT32, uint64_t{v}}; }

// The token types are chosen to cover both kinds of added token in each
// family's vocabulary (control: read only when special tokens are parsed;
// user-defined: always), not copied from the models' own files.
std::vector<VocabVariant> make_variants() {
  return {
      // Gemma 3's SentencePiece: no space prefix, byte fallback, its chat and
      // image tokens (Gemma's own vocabulary has 262,144 pieces).
      {
          .name = "gemma3",
          .base = "llama-spm",
          .set = {{"tokenizer.ggml.add_space_prefix", bool_value(false)}},
          .erase = {},
          .tokens = {{32000, "<start_of_turn>", TokenType::Control},
                     {32001, "<end_of_turn>", TokenType::Control},
                     {32002, "<start_of_image>", TokenType::Control},
                     {32003, "<unused0>", TokenType::Control},
                     {32004, "\n\n", TokenType::UserDefined},
                     {32005, "<table>", TokenType::UserDefined}},
      },
      // Phi-4-mini's GPT-4o pre-tokenizer and chat tokens on the Llama 3
      // vocabulary (Phi-4-mini's own is GPT-4o's, 200,064 tokens).
      {
          .name = "phi4-mini",
          .base = "llama-bpe",
          .set = {{"tokenizer.ggml.pre", string_value("gpt-4o")},
                  {"tokenizer.ggml.add_bos_token", bool_value(false)}},
          .erase = {},
          .tokens = {{128010, "<|system|>", TokenType::Control},
                     {128011, "<|user|>", TokenType::Control},
                     {128012, "<|assistant|>", TokenType::Control},
                     {128013, "<|end|>", TokenType::Control}},
      },
      // SmolLM3's file: the Llama 3 vocabulary under pre-tokenizer "smaug-bpe"
      // (no whole-word lookup, no BOS by default), with its ChatML and
      // thinking tokens in reserved slots.
      {
          .name = "smollm3",
          .base = "llama-bpe",
          .set = {{"tokenizer.ggml.pre", string_value("smaug-bpe")},
                  {"tokenizer.ggml.eos_token_id", u32_value(128012)},
                  {"tokenizer.ggml.padding_token_id", u32_value(128012)}},
          .erase = {"tokenizer.ggml.add_bos_token"},
          .tokens = {{128002, "<think>", TokenType::UserDefined},
                     {128003, "</think>", TokenType::UserDefined},
                     {128011, "<|im_start|>", TokenType::Control},
                     {128012, "<|im_end|>", TokenType::Control}},
      },
  };
}

}  // namespace

std::span<const VocabVariant> vocab_variants() {
  static const std::vector<VocabVariant> variants = make_variants();
  return variants;
}

const VocabVariant& vocab_variant(std::string_view name) {
  for (const VocabVariant& variant : vocab_variants()) {
    if (variant.name == name) return variant;
  }
  throw Error("no test vocabulary is named \"" + std::string(name) + "\"");
}

std::string base_vocab(const VocabVariant& variant) {
  return "tokenizer-tests/ggml-vocab-" + std::string(variant.base) + ".gguf";
}

GgufWriter write_vocab_variant(const VocabVariant& variant, const GgufFile& base) {
  const std::string tokens_key = "tokenizer.ggml.tokens", types_key = "tokenizer.ggml.token_type",
                    scores_key = "tokenizer.ggml.scores";
  std::vector<std::string> pieces = base.get_string_array(tokens_key);
  std::vector<int32_t> types = base.get_int_array_or_empty(types_key);
  std::vector<float> scores = base.get_float_array_or_empty(scores_key);
  for (const TokenChange& change : variant.tokens) {
    const size_t id = static_cast<size_t>(change.id);
    if (id == pieces.size()) {
      pieces.emplace_back();
      types.push_back(0);
      if (!scores.empty()) scores.push_back(kAddedTokenScore);
    }
    if (id >= pieces.size()) {
      throw Error(std::string(variant.name) + ": token " + std::to_string(id) + " is past the vocab's end");
    }
    pieces[id] = change.piece;
    types[id] = static_cast<int32_t>(change.type);
  }

  std::map<std::string, GgufValue> metadata = base.metadata();
  for (const std::string& key : variant.erase) metadata.erase(key);
  for (const auto& [key, value] : variant.set) metadata.insert_or_assign(key, value);
  const std::string vocab_size_key = base.get_string("general.architecture") + ".vocab_size";
  GgufWriter out;
  for (const auto& [key, value] : metadata) {
    if (key == tokens_key) {
      out.add_string_array(key, pieces);
    } else if (key == types_key) {
      out.add_i32_array(key, types);
    } else if (key == scores_key) {
      out.add_f32_array(key, scores);
    } else if (key == vocab_size_key) {
      out.add_u32(key, static_cast<uint32_t>(pieces.size()));
    } else {
      out.add(key, value);
    }
  }
  return out;
}

}  // namespace kiln::test
