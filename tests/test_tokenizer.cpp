#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf_writer.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "tests/support/test_tokenizer_support.hpp"

using kiln::Detokenizer;
using kiln::GgufFile;
using kiln::GgufWriter;
using kiln::Tokenizer;
using namespace kiln::test;

namespace {

// A hand-made SentencePiece vocab: <unk>, <s>, </s>, the 256 byte tokens
// (unless told otherwise), then `pieces` with their scores.
struct TinyVocab {
  std::vector<std::string> tokens{"<unk>", "<s>", "</s>"};
  std::vector<float> scores{0, 0, 0};
  std::vector<int32_t> types{2, 3, 3};

  explicit TinyVocab(const std::vector<std::pair<std::string, float>>& pieces, bool byte_tokens = true) {
    for (int b = 0; byte_tokens && b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      add(name, 0, 6);
    }
    for (const auto& [piece, score] : pieces) add(piece, score, 1);
  }
  void add(const std::string& piece, float score, int32_t type) {
    tokens.push_back(piece);
    scores.push_back(score);
    types.push_back(type);
  }
  int32_t id(const std::string& piece) const {
    const auto it = std::find(tokens.begin(), tokens.end(), piece);
    REQUIRE(it != tokens.end());
    return static_cast<int32_t>(it - tokens.begin());
  }
  // `extra` adds further metadata keys.
  GgufFile gguf(const std::function<void(GgufWriter&)>& extra = {}) const {
    GgufWriter w;
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_f32_array("tokenizer.ggml.scores", scores);
    w.add_i32_array("tokenizer.ggml.token_type", types);
    if (extra) extra(w);
    return GgufFile::from_bytes(w.bytes());
  }
};

const TinyVocab kTiny({{"\xE2\x96\x81", -1},           // ▁
                       {"a", -2},
                       {"b", -3},
                       {"c", -4},
                       {"ab", -5},
                       {"bc", -6},
                       {"aa", -7},
                       {"\xE2\x96\x81" "a", -8},      // ▁a
                       {"\xE2\x96\x81" "ab", -9}});   // ▁ab

}  // namespace

TEST_CASE("stories260K: prompts encode to llama2.c's ids, and greedy outputs decode to its text" * kiln::test::needs_fixtures) {
  const GgufFile f = open_shared("models/stories260K/stories260K.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  CHECK(tok.n_vocab() == 512);
  CHECK(tok.bos() == 1);
  CHECK(tok.eos() == 2);
  CHECK(tok.encode("Once upon a time", true) == std::vector<int32_t>{1, 403, 407, 261, 378});

  // reference-logits.txt section 2: "prompt '<text>': prompt_ids=[...] n_ids=201" then "ids: ...".
  std::istringstream logits(read_file(kShared + "/models/stories260K/reference-logits.txt"));
  // reference-llama2c.txt: each run's stdout sits between BEGIN/END markers, in the same prompt order.
  const std::string stdout_text = read_file(kShared + "/models/stories260K/reference-llama2c.txt");
  const std::string begin = "----- BEGIN STDOUT -----\n", end = "----- END STDOUT -----\n";
  size_t stdout_pos = 0;
  int n_prompts = 0;
  for (std::string line; std::getline(logits, line);) {
    if (!line.starts_with("prompt '")) continue;
    const std::string prompt = line.substr(8, line.find("': ") - 8);
    const size_t ids_begin = line.find('[') + 1;
    const std::vector<int32_t> prompt_ids = parse_ids(line.substr(ids_begin, line.find(']') - ids_begin));
    REQUIRE(std::getline(logits, line));
    REQUIRE(line.starts_with("ids: "));
    const std::vector<int32_t> ids = parse_ids(line.substr(5));

    stdout_pos = stdout_text.find(begin, stdout_pos);
    REQUIRE(stdout_pos != std::string::npos);
    stdout_pos += begin.size();
    const std::string expected = stdout_text.substr(stdout_pos, stdout_text.find(end, stdout_pos) - stdout_pos);

    CAPTURE(prompt);
    CHECK(tok.encode(prompt, true) == prompt_ids);
    CHECK(decode(tok, ids) + "\n" == expected);  // run.c prints a final newline
    ++n_prompts;
  }
  CHECK(n_prompts == 4);
}

TEST_CASE("llama-spm vocab: special ids, BOS, and byte fallback reassembled by the detokenizer" * kiln::test::needs_fixtures) {
  const GgufFile f = open_shared("tokenizer-tests/ggml-vocab-llama-spm.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  CHECK(tok.n_vocab() == 32000);
  CHECK(tok.is_end_of_generation(2));
  CHECK_FALSE(tok.is_end_of_generation(1));
  CHECK(tok.encode("Hello world", true) == std::vector<int32_t>{1, 15043, 3186});
  CHECK(tok.encode("", true) == std::vector<int32_t>{1});
  CHECK(tok.piece(15043) == "\xE2\x96\x81Hello");

  for (const std::string text : {"\xF0\x9F\xA6\x99 llama", "\xE5\xBE\x88\xE9\xAB\x98\xE5\x85\xB4 \xE6\x82\xA8",
                                 "caf\xC3\xA9 \xF0\x9F\x98\x80\xF0\x9F\x98\x81", "<s> is not BOS </s>"}) {
    CAPTURE(text);
    CHECK(decode(tok, tok.encode(text, true)) == text);
  }

  // 🦙 has no piece of its own: four byte tokens, text only once all have arrived.
  const std::vector<int32_t> llama = tok.encode("\xF0\x9F\xA6\x99", false);
  REQUIRE(llama == std::vector<int32_t>{29871, 243, 162, 169, 156});
  Detokenizer detok(tok);
  CHECK(detok.push(tok.bos()) == "");
  CHECK(detok.push(llama[0]) == "");  // the dummy-prefix space, dropped
  CHECK(detok.push(llama[1]) == "");
  CHECK(detok.push(llama[2]) == "");
  CHECK(detok.push(llama[3]) == "");
  CHECK(detok.push(llama[4]) == "\xF0\x9F\xA6\x99");
  CHECK(detok.push(15043) == " Hello");  // only the very first piece loses its space
  CHECK(detok.flush() == "");
}

// Long inputs: a tokenizer quadratic in its input would take minutes here
// and meet ctest's timeout; the test itself asserts no time.
TEST_CASE("llama-spm vocab: a long input round-trips" * kiln::test::needs_fixtures) {
  const GgufFile f = open_shared("tokenizer-tests/ggml-vocab-llama-spm.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  std::string text;
  while (text.size() < 100000) text += "The quick brown fox jumps over the lazy dog, 1234 times! ";
  std::string spaces(10000, ' ');
  const std::vector<int32_t> ids = tok.encode(text, false);
  const std::vector<int32_t> space_ids = tok.encode(spaces, false);
  CHECK(decode(tok, ids) == text);
  CHECK(decode(tok, space_ids) == spaces);
}

TEST_CASE("merges: the highest score wins, ties go to the leftmost pair") {
  const Tokenizer tok = Tokenizer::from_gguf(kTiny.gguf());
  const int32_t a = kTiny.id("a"), b = kTiny.id("b"), c = kTiny.id("c");
  // "ab" (-5) outranks "bc" (-6); then "▁" + "ab" makes "▁ab".
  CHECK(tok.encode("abc", false) == std::vector<int32_t>{kTiny.id("\xE2\x96\x81" "ab"), c});
  // Without a leading "▁" to pair with: "ab" then "c".
  CHECK(tok.encode("aabc", false) ==
        std::vector<int32_t>{kTiny.id("\xE2\x96\x81" "a"), kTiny.id("ab"), c});
  // "aa" can pair at two places with the same score: the left one merges first.
  CHECK(tok.encode("baaa", false) == std::vector<int32_t>{kTiny.id("\xE2\x96\x81"), b, kTiny.id("aa"), a});
}

TEST_CASE("characters missing from the vocab fall back to byte tokens, or to unk") {
  const Tokenizer tok = Tokenizer::from_gguf(kTiny.gguf());
  const int32_t space = kTiny.id("\xE2\x96\x81");
  CHECK(tok.encode("\xC3\xA9", false) == std::vector<int32_t>{space, kTiny.id("<0xC3>"), kTiny.id("<0xA9>")});

  const TinyVocab no_bytes({{"\xE2\x96\x81", -1}}, /*byte_tokens=*/false);
  const Tokenizer unk_only = Tokenizer::from_gguf(no_bytes.gguf());
  CHECK(unk_only.encode("\xC3\xA9", false) == std::vector<int32_t>{3, 0, 0});
  CHECK(decode(unk_only, {0}) == "\xE2\x81\x87 ");  // "⁇", SentencePiece's surface for <unk>
}

TEST_CASE("control, unknown and unused pieces are never produced from text") {
  TinyVocab v({{"\xE2\x96\x81", -1}, {"x", -2}});
  v.add("\xE2\x96\x81x", 0, 3);  // control
  v.add("xx", 0, 5);              // unused
  const Tokenizer tok = Tokenizer::from_gguf(v.gguf());
  const int32_t x = v.id("x");
  CHECK(tok.encode("x", false) == std::vector<int32_t>{v.id("\xE2\x96\x81"), x});
  CHECK(tok.encode("xx", false) == std::vector<int32_t>{v.id("\xE2\x96\x81"), x, x});
  CHECK(decode(tok, {v.id("\xE2\x96\x81x"), x}) == "x");  // a control token prints nothing
}

TEST_CASE("user-defined tokens are matched whole, control tokens only when asked") {
  TinyVocab v({{"\xE2\x96\x81", -1}, {"a", -2}, {"\xE2\x96\x81" "a", -3}});
  v.add("<tag>", 0, 4);   // user-defined
  v.add("<ctl>", 0, 3);   // control
  const Tokenizer tok = Tokenizer::from_gguf(v.gguf());
  const int32_t tag = v.id("<tag>"), ctl = v.id("<ctl>"), space_a = v.id("\xE2\x96\x81" "a");
  // The text after a matched token gets the space prefix again, as in llama.cpp.
  CHECK(tok.encode("a<tag>a", false) == std::vector<int32_t>{space_a, tag, space_a});
  CHECK(tok.encode("<tag>", false) == std::vector<int32_t>{tag});
  const std::vector<int32_t> plain = tok.encode("a<ctl>", false);
  CHECK(std::find(plain.begin(), plain.end(), ctl) == plain.end());
  CHECK(decode(tok, plain) == "a<ctl>");
  CHECK(tok.encode("a<ctl>", false, /*parse_special=*/true) == std::vector<int32_t>{space_a, ctl});
  CHECK(tok.encode("<ctl>a", true, /*parse_special=*/true) == std::vector<int32_t>{1, ctl, space_a});
  CHECK(decode(tok, {tag, space_a}) == "<tag> a");
}

TEST_CASE("phi-3 vocab: its chat markers are control tokens, and </s> is user-defined" * kiln::test::needs_fixtures) {
  const GgufFile f = open_shared("tokenizer-tests/ggml-vocab-phi-3.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  // <|end|> and <|endoftext|> (EOS) end generation; <|user|> does not.
  CHECK(tok.is_end_of_generation(32000));
  CHECK(tok.is_end_of_generation(32007));
  CHECK_FALSE(tok.is_end_of_generation(32010));
  CHECK(tok.encode("Hi<|end|>", true, /*parse_special=*/true) == std::vector<int32_t>{1, 6324, 32007});
  const std::vector<int32_t> plain = tok.encode("Hi<|end|>", false);
  CHECK(std::find(plain.begin(), plain.end(), 32007) == plain.end());
  CHECK(tok.encode("Hi</s>", false) == std::vector<int32_t>{6324, 2});
}

TEST_CASE("special-token flags and the space prefix come from the metadata") {
  const Tokenizer defaults = Tokenizer::from_gguf(kTiny.gguf());
  CHECK(defaults.encode("a", true) == std::vector<int32_t>{1, kTiny.id("\xE2\x96\x81" "a")});
  CHECK(defaults.encode("", false).empty());
  CHECK(defaults.is_end_of_generation(2));

  const Tokenizer custom = Tokenizer::from_gguf(kTiny.gguf([](GgufWriter& w) {
    w.add_bool("tokenizer.ggml.add_bos_token", false);
    w.add_bool("tokenizer.ggml.add_eos_token", true);
    w.add_bool("tokenizer.ggml.add_space_prefix", false);
    w.add_u32("tokenizer.ggml.eos_token_id", 1);
    w.add_u32("tokenizer.ggml.bos_token_id", 2);
    w.add_u32("tokenizer.ggml.eot_token_id", 0);
  }));
  CHECK(custom.bos() == 2);
  CHECK(custom.eos() == 1);
  CHECK(custom.encode("a", true) == std::vector<int32_t>{kTiny.id("a"), 1});
  CHECK(custom.is_end_of_generation(1));
  CHECK(custom.is_end_of_generation(0));
  // "</s>" ends generation by its text, whatever the ids say (as in llama.cpp).
  CHECK(custom.is_end_of_generation(2));
  CHECK_FALSE(custom.is_end_of_generation(kTiny.id("a")));
  // Without a space prefix, the decoder keeps the first space too.
  CHECK(decode(custom, custom.encode(" a", false)) == " a");

  const Tokenizer no_eot = Tokenizer::from_gguf(
      kTiny.gguf([](GgufWriter& w) { w.add_u32("tokenizer.ggml.eot_token_id", 0xFFFFFFFF); }));
  CHECK_FALSE(no_eot.is_end_of_generation(0));
}

TEST_CASE("detokenizer: spaces, the dropped prefix space, and invalid UTF-8") {
  const Tokenizer tok = Tokenizer::from_gguf(kTiny.gguf());
  auto byte = [](int b) { return static_cast<int32_t>(3 + b); };
  const int32_t space = kTiny.id("\xE2\x96\x81"), space_a = kTiny.id("\xE2\x96\x81" "a");

  CHECK(decode(tok, {1, space_a, space_a, 2}) == "a a");
  CHECK(decode(tok, {space, space_a}) == " a");
  for (const std::string text : {"", " ", "  a b", "a\tb\n", "\xC3\xA9t\xC3\xA9", "\xF0\x9F\x98\x80"}) {
    CAPTURE(text);
    CHECK(decode(tok, tok.encode(text, true)) == text);
  }

  const std::string replacement = "\xEF\xBF\xBD";
  // A multi-byte start cut short by a normal piece: one U+FFFD, then the piece.
  Detokenizer detok(tok);
  CHECK(detok.push(byte(0xF0)) == "");
  CHECK(detok.push(byte(0x9F)) == "");
  CHECK(detok.push(kTiny.id("a")) == replacement + "a");
  // Bytes that can never start a character come out at once.
  CHECK(detok.push(byte(0x80)) == replacement);
  CHECK(detok.push(byte(0xC0)) == replacement);
  // An overlong form (E0 80 ..) and a surrogate (ED A0 ..) are invalid too.
  CHECK(decode(tok, {byte(0xE0), byte(0x80), byte(0x80)}) == replacement + replacement + replacement);
  CHECK(decode(tok, {byte(0xED), byte(0xA0), byte(0x80)}) == replacement + replacement + replacement);
  // An unfinished character left at the end becomes one U+FFFD on flush.
  CHECK(detok.push(byte(0xE2)) == "");
  CHECK(detok.push(byte(0x82)) == "");
  CHECK(detok.flush() == replacement);
  CHECK(detok.flush() == "");
}

TEST_CASE("from_gguf rejects vocabs it cannot use") {
  auto error_of = [](const GgufFile& f) {
    try {
      Tokenizer::from_gguf(f);
    } catch (const kiln::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  GgufWriter wordpiece;
  wordpiece.add_string("tokenizer.ggml.model", "bert");
  CHECK(error_of(GgufFile::from_bytes(wordpiece.bytes())).find("tokenizer.ggml.model is \"bert\"") !=
        std::string::npos);

  TinyVocab short_scores = kTiny;
  short_scores.scores.pop_back();
  CHECK(error_of(short_scores.gguf()).find("tokenizer.ggml.scores") != std::string::npos);

  GgufWriter no_types;
  no_types.add_string("tokenizer.ggml.model", "llama");
  no_types.add_string_array("tokenizer.ggml.tokens", kTiny.tokens);
  no_types.add_f32_array("tokenizer.ggml.scores", kTiny.scores);
  CHECK(error_of(GgufFile::from_bytes(no_types.bytes())).find("tokenizer.ggml.token_type is missing") !=
        std::string::npos);

  const GgufFile bad_eos = kTiny.gguf([](GgufWriter& w) { w.add_u32("tokenizer.ggml.eos_token_id", 100000); });
  const GgufFile bad_eot = kTiny.gguf([](GgufWriter& w) { w.add_u32("tokenizer.ggml.eot_token_id", 100000); });
  CHECK(error_of(bad_eot).find("tokenizer.ggml.eot_token_id = 100000 is out of range") != std::string::npos);
  CHECK(error_of(bad_eos).find("tokenizer.ggml.eos_token_id = 100000 is out of range") != std::string::npos);

  TinyVocab bad_type = kTiny;
  bad_type.types[5] = 9;
  CHECK(error_of(bad_type.gguf()).find("token_type[5] is 9") != std::string::npos);

  TinyVocab bad_byte = kTiny;
  bad_byte.tokens[3] = "<0xZZ>";
  CHECK(error_of(bad_byte.gguf()).find("byte token 3") != std::string::npos);
}

TEST_CASE("TokenTexts: texts by id from one buffer, empty ones included; at() checks the id") {
  kiln::TokenTexts texts;
  texts.push_back("\xE2\x96\x81the");
  texts.push_back("");
  texts.push_back("<0x0A>");
  REQUIRE(texts.size() == 3);
  CHECK(texts.bytes() == 12);
  CHECK(texts[0] == "\xE2\x96\x81the");
  CHECK(texts[1].empty());
  CHECK(texts.at(2) == "<0x0A>");
  CHECK_THROWS_AS(texts.at(3), std::out_of_range);
  CHECK_THROWS_AS(texts.at(size_t(-1)), std::out_of_range);
}
