#include "engine/tokenizer/tokenizer_eog.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <string_view>

#include "engine/tokenizer/tokenizer_metadata.hpp"

namespace kiln {

namespace {

// Tokens that end a turn or a text, whatever their type.
constexpr std::string_view kEndTexts[] = {
    "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|im_end|>", "<|end|>", "<|endoftext|>", "<end_of_turn>",
    "</s>", "<EOT>", "_<EOT>", "<end_of_utterance>",
    // DeepSeek's "<｜end▁of▁sentence｜>"
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",
};

// Keys that name a token ending generation.
constexpr std::string_view kEndKeys[] = {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"};

// Fill-in-the-middle padding, repository-name and file-separator markers end
// generation too; each is named by its key, or else found by its text.
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
constexpr std::string_view kFimRepoTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::string_view kFimSeparatorTexts[] = {"<|file_sep|>"};

struct FimRole {
  std::string_view key;
  std::span<const std::string_view> texts;
};

constexpr FimRole kFimRoles[] = {
    {"tokenizer.ggml.fim_pad_token_id", kFimPadTexts},
    {"tokenizer.ggml.fim_rep_token_id", kFimRepoTexts},
    {"tokenizer.ggml.fim_sep_token_id", kFimSeparatorTexts},
};

bool contains(std::span<const std::string_view> texts, std::string_view text) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

}  // namespace

std::vector<int32_t> end_of_generation_ids(const GgufFile& f, const TokenTexts& pieces, int32_t eos) {
  std::vector<int32_t> ids;
  if (eos >= 0) ids.push_back(eos);
  for (std::string_view key : kEndKeys) {
    if (const std::optional<int32_t> id = read_optional_token_id(f, std::string(key), pieces.size())) {
      ids.push_back(*id);
    }
  }
  std::vector<std::span<const std::string_view>> text_lists{kEndTexts};
  for (const FimRole& role : kFimRoles) {
    if (const std::optional<int32_t> id = read_optional_token_id(f, std::string(role.key), pieces.size())) {
      ids.push_back(*id);
    } else {
      text_lists.push_back(role.texts);
    }
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    for (std::span<const std::string_view> texts : text_lists) {
      if (contains(texts, pieces[i])) ids.push_back(static_cast<int32_t>(i));
    }
  }
  // gpt-oss (harmony): <|end|> closes one message of a reply that goes on
  // (its reasoning, then its answer or a call), which ends at <|return|> or
  // <|call|>. As llama.cpp does, a vocabulary with both of these does not end
  // generation at <|end|>.
  std::optional<int32_t> ret, call;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i] == "<|return|>") ret = static_cast<int32_t>(i);
    if (pieces[i] == "<|call|>") call = static_cast<int32_t>(i);
  }
  if (ret && call) {
    ids.push_back(*ret);
    ids.push_back(*call);
    std::erase_if(ids, [&](int32_t id) { return pieces[size_t(id)] == "<|end|>"; });
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace kiln
