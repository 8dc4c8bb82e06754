// Byte-level BPE (tokenizer.ggml.model = "gpt2"): merging, the flags and
// special tokens of real vocabs, and what from_gguf refuses.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "engine/gguf/gguf_writer.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/tokenizer_byte_level.hpp"
#include "tests/support/test_tokenizer_support.hpp"

using kiln::GgufFile;
using kiln::GgufWriter;
using kiln::Tokenizer;
using namespace kiln::test;

namespace {

// A hand-made byte-level vocab: the 256 single-byte tokens in byte order
// (ids 0-255, so a byte's id is its value), then `merged` tokens, with
// `merges` in rank order. Texts are given as raw bytes and written in the
// byte-level alphabet.
struct TinyBpe {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::string> merges;
  std::string pre = "gpt-2";

  TinyBpe(const std::vector<std::string>& merged, const std::vector<std::pair<std::string, std::string>>& merge_list) {
    for (int b = 0; b < 256; ++b) add(std::string(1, static_cast<char>(b)), 1);
    for (const std::string& text : merged) add(text, 1);
    for (const auto& [left, right] : merge_list) {
      merges.push_back(kiln::encode_byte_level(left) + " " + kiln::encode_byte_level(right));
    }
  }
  void add(const std::string& text, int32_t type) {
    tokens.push_back(type == 1 ? kiln::encode_byte_level(text) : text);
    types.push_back(type);
  }
  int32_t id(const std::string& text) const {
    const auto it = std::find(tokens.begin(), tokens.end(), kiln::encode_byte_level(text));
    REQUIRE(it != tokens.end());
    return static_cast<int32_t>(it - tokens.begin());
  }
  GgufWriter writer() const {
    GgufWriter w;
    w.add_string("tokenizer.ggml.model", "gpt2");
    w.add_string("tokenizer.ggml.pre", pre);
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_i32_array("tokenizer.ggml.token_type", types);
    w.add_string_array("tokenizer.ggml.merges", merges);
    return w;
  }
  // `extra` adds further metadata keys.
  GgufFile gguf(const std::function<void(GgufWriter&)>& extra = {}) const {
    GgufWriter w = writer();
    if (extra) extra(w);
    return GgufFile::from_bytes(w.bytes());
  }
};

std::vector<int32_t> bytes_of(const std::string& text) {
  std::vector<int32_t> ids;
  for (char c : text) ids.push_back(static_cast<uint8_t>(c));
  return ids;
}

std::string error_of(const GgufFile& f) {
  try {
    Tokenizer::from_gguf(f);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("merges apply lowest rank first, ties to the leftmost pair, never across pieces") {
  const TinyBpe v({"bc", "ab", "aa", "abc", " a", " aa"},
                  {{"b", "c"}, {"a", "b"}, {" ", "a"}, {"a", "a"}, {"a", "bc"}, {" a", "a"}});
  const Tokenizer tok = Tokenizer::from_gguf(v.gguf());
  // "b c" (rank 0) beats "a b" (rank 1); then "a" + "bc" is listed, giving "abc".
  CHECK(tok.encode("abc", false) == std::vector<int32_t>{v.id("abc")});
  // "a b" first: "ab" + "c" has no merge.
  CHECK(tok.encode("abbc", false) == std::vector<int32_t>{v.id("ab"), v.id("bc")});
  // Three a's: the left pair merges.
  CHECK(tok.encode("aaa", false) == std::vector<int32_t>{v.id("aa"), v.id("a")});
  // GPT-2 pre-tokenizes "a aa" as "a" and " aa"; " " + "a" (rank 2) merges before "a" + "a" (rank 3).
  CHECK(tok.encode("a aa", false) == std::vector<int32_t>{v.id("a"), v.id(" aa")});
  // Bytes that no merge joins stay single-byte tokens.
  CHECK(tok.encode("\xF0\x9F\xA6\x99", false) == bytes_of("\xF0\x9F\xA6\x99"));
  CHECK(tok.encode("", true).empty());
}

TEST_CASE("decoding gives back the exact bytes, whole characters at a time") {
  const TinyBpe v({" a"}, {{" ", "a"}});
  const Tokenizer tok = Tokenizer::from_gguf(v.gguf());
  CHECK_FALSE(tok.adds_space_prefix());
  CHECK(tok.text(v.id(" a")) == " a");
  CHECK(tok.piece(v.id(" a")) == "\xC4\xA0" "a");  // "Ġa"
  for (const std::string& text : std::vector<std::string>{" a", "  a  ", "\t\n\r", "caf\xC3\xA9 \xF0\x9F\xA6\x99",
                                                          std::string("\0x", 2)}) {
    CAPTURE(text);
    CHECK(decode(tok, tok.encode(text, false)) == text);
  }
  // Invalid UTF-8 in, the same bytes out; the detokenizer shows them as U+FFFD.
  const std::string invalid = "a\xFF\xC3";
  CHECK(tok.encode(invalid, false) == bytes_of(invalid));
  kiln::Detokenizer detok(tok);
  CHECK(detok.push(0xE2) == "");
  CHECK(detok.push(0x82) == "");
  CHECK(detok.push(0xAC) == "\xE2\x82\xAC");  // €
  CHECK(detok.push(0xFF) == "\xEF\xBF\xBD");
}

TEST_CASE("llama-bpe style: a piece that is a token as a whole is taken whole") {
  // "abc" is in the vocab, but no merge leads to it.
  TinyBpe v({"abc", "ab"}, {{"a", "b"}});
  CHECK(Tokenizer::from_gguf(v.gguf()).encode("abc", false) == std::vector<int32_t>{v.id("ab"), 'c'});
  v.pre = "llama-bpe";
  const GgufFile llama3 = v.gguf([](GgufWriter& w) { w.add_bool("tokenizer.ggml.add_bos_token", false); });
  CHECK(Tokenizer::from_gguf(llama3).encode("abc", false) == std::vector<int32_t>{v.id("abc")});
}

TEST_CASE("BOS and EOS follow the metadata, with llama.cpp's defaults per pre-tokenizer") {
  TinyBpe v({}, {});
  v.add("<|bos|>", 3);
  v.add("<|eos|>", 3);
  const int32_t bos = v.id("<|bos|>"), eos = v.id("<|eos|>");
  auto ids = [&](TinyBpe vocab, bool add_bos_key, bool add_bos_value) {
    return Tokenizer::from_gguf(vocab.gguf([&](GgufWriter& w) {
             w.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(bos));
             w.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eos));
             if (add_bos_key) w.add_bool("tokenizer.ggml.add_bos_token", add_bos_value);
           }))
        .encode("x", true);
  };
  CHECK(ids(v, false, false) == std::vector<int32_t>{'x'});
  CHECK(ids(v, true, true) == std::vector<int32_t>{bos, 'x'});
  TinyBpe llama3 = v;
  llama3.pre = "llama-bpe";
  CHECK(ids(llama3, false, false) == std::vector<int32_t>{bos, 'x'});
  CHECK(ids(llama3, true, false) == std::vector<int32_t>{'x'});

  const Tokenizer with_eos = Tokenizer::from_gguf(v.gguf([&](GgufWriter& w) {
    w.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eos));
    w.add_bool("tokenizer.ggml.add_eos_token", true);
  }));
  CHECK(with_eos.bos() == -1);
  CHECK(with_eos.eos() == eos);
  CHECK(with_eos.encode("x", true) == std::vector<int32_t>{'x', eos});
  CHECK(with_eos.is_end_of_generation(eos));
  CHECK_FALSE(with_eos.is_end_of_generation(bos));
  CHECK(decode(with_eos, {bos, 'x', eos}) == "x");  // control tokens print nothing
}

TEST_CASE("from_gguf refuses BPE vocabs it cannot use, naming the problem") {
  TinyBpe unknown_pre({}, {});
  unknown_pre.pre = "tekken";
  CHECK(error_of(unknown_pre.gguf()).find("tokenizer.ggml.pre is \"tekken\", a pre-tokenizer kiln does not know") !=
        std::string::npos);

  const TinyBpe v({"ab"}, {{"a", "b"}});
  GgufWriter no_pre;
  no_pre.add_string("tokenizer.ggml.model", "gpt2");
  no_pre.add_string_array("tokenizer.ggml.tokens", v.tokens);
  no_pre.add_i32_array("tokenizer.ggml.token_type", v.types);
  no_pre.add_string_array("tokenizer.ggml.merges", v.merges);
  CHECK(error_of(GgufFile::from_bytes(no_pre.bytes())).find("tokenizer.ggml.pre is missing") != std::string::npos);

  TinyBpe no_byte = v;
  no_byte.tokens[0x41] = "[no A]";
  CHECK(error_of(no_byte.gguf()).find("no token for byte 0x41 (\"A\")") != std::string::npos);

  TinyBpe bad_merge = v;
  bad_merge.merges.push_back("ab");
  CHECK(error_of(bad_merge.gguf()).find("tokenizer.ggml.merges[1] is \"ab\", not two tokens") != std::string::npos);
  bad_merge.merges.back() = "ab c";
  CHECK(error_of(bad_merge.gguf()).find("merges[1] is \"ab c\", whose merged token is not in the vocab") !=
        std::string::npos);
  bad_merge.merges.back() = "x yz";
  CHECK(error_of(bad_merge.gguf()).find("names a token the vocab does not have") != std::string::npos);

  const GgufFile bos_missing = v.gguf([](GgufWriter& w) { w.add_bool("tokenizer.ggml.add_bos_token", true); });
  CHECK(error_of(bos_missing).find("add_bos_token is true, but tokenizer.ggml.bos_token_id is not set") !=
        std::string::npos);
}

TEST_CASE("llama-bpe vocab: chat markers when asked, BOS, end of generation" * kiln::test::needs_fixtures) {
  const GgufFile f = open_shared("tokenizer-tests/ggml-vocab-llama-bpe.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  CHECK(tok.n_vocab() == 128256);
  const std::string chat = "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>";
  CHECK(tok.encode(chat, true, /*parse_special=*/true) ==
        std::vector<int32_t>{128000, 128006, 882, 128007, 271, 13347, 128009});
  const std::vector<int32_t> plain = tok.encode(chat, false);
  CHECK(plain.size() > 7);
  CHECK(std::all_of(plain.begin(), plain.end(), [](int32_t id) { return id < 128000; }));
  CHECK(decode(tok, plain) == chat);
  CHECK(decode(tok, tok.encode(chat, true, true)) == "user\n\nHi");
  CHECK(tok.is_end_of_generation(128001));  // <|end_of_text|>, EOS
  CHECK(tok.is_end_of_generation(128009));  // <|eot_id|>
  CHECK_FALSE(tok.is_end_of_generation(128000));
  CHECK_FALSE(tok.is_end_of_generation(128006));
}

TEST_CASE("qwen2 vocab: user-defined tokens always, end of generation as llama.cpp prints it" * kiln::test::needs_fixtures) {
  const GgufFile f = open_shared("tokenizer-tests/ggml-vocab-qwen2.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  CHECK(tok.encode("<think>x</think>", true) == std::vector<int32_t>{151667, 87, 151668});  // add_bos_token is false
  CHECK(tok.encode("<|im_start|>user\n", false, /*parse_special=*/true) == std::vector<int32_t>{151644, 872, 198});
  std::vector<int32_t> eog;
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    if (tok.is_end_of_generation(id)) eog.push_back(id);
  }
  // The shared folder's README: </s> (a plain BPE token), <|endoftext|>, <|im_end|> and the FIM markers.
  CHECK(eog == std::vector<int32_t>{128247, 151643, 151645, 151662, 151663, 151664});
}

// Long inputs: a tokenizer quadratic in its input would take minutes here
// and meet ctest's timeout; the test itself asserts no time.
TEST_CASE("byte-level BPE: a long input round-trips" * kiln::test::needs_fixtures) {
  const GgufFile f = open_shared("tokenizer-tests/ggml-vocab-llama-bpe.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  std::string text;
  while (text.size() < 100000) {
    text += "The quick brown fox, 1234 times! caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\xA6\x99\n\t ";
  }
  // Besides text, long runs that make one huge piece (spaces, letters) or many tiny ones (digits).
  for (const std::string& input :
       {text, std::string(100000, ' '), std::string(100000, '7'), std::string(100000, 'a')}) {
    const std::vector<int32_t> ids = tok.encode(input, false);
    CHECK(decode(tok, ids) == input);
  }
}
