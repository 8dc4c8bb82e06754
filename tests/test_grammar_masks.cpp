// Token masks: the allowed tokens of every state along random generations
// equal, token for token, what reading each token's bytes from that state
// says (brute force), on small vocabularies with multi-byte characters
// split across tokens; end-of-generation only where the grammar may end.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/error/error.hpp"
#include "engine/grammar/grammar_constraint.hpp"
#include "engine/grammar/json_schema.hpp"
#include "engine/session/sampler.hpp"

using namespace kiln::grammar;

namespace {

bool bit(const TokenBits& bits, int32_t t) { return bits[static_cast<size_t>(t) / 64] >> (t % 64) & 1; }

// Random tokens over an alphabet of JSON punctuation, digits, letters and
// the bytes of "é" and "€", so that tokens split characters; the last id
// is the end-of-generation token.
std::shared_ptr<const TokenTrie> small_vocabulary(std::mt19937& rng, int n) {
  const std::vector<std::string> alphabet = {"{", "}", "[", "]", "\"", ":", ",", " ", "\n", "a", "b", "e", "t",
                                             "r", "u", "n", "l", "0", "1", "9", "-", ".", "\\", "\xC3", "\xA9",
                                             "\xE2", "\x82", "\xAC", "x"};
  std::vector<std::string> texts;
  for (const std::string& a : alphabet) texts.push_back(a);  // every byte alone, so any text can be written
  while (static_cast<int>(texts.size()) < n - 1) {
    std::string t;
    const size_t length = 2 + rng() % 4;
    for (size_t i = 0; i < length; ++i) t += alphabet[rng() % alphabet.size()];
    texts.push_back(t);
  }
  texts.push_back(texts[9]);  // the same bytes as another token
  texts.push_back("");        // end of generation
  std::vector<std::string_view> views(texts.begin(), texts.end());
  return std::make_shared<TokenTrie>(views, std::vector<int32_t>{static_cast<int32_t>(texts.size() - 1)});
}

void compare_with_brute_force(const std::string& gbnf, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto vocab = small_vocabulary(rng, 400);
  const auto grammar = parse_gbnf(gbnf);
  GrammarConstraint constraint(grammar, vocab);
  Matcher reference(grammar);
  const int32_t eog = vocab->n_vocab() - 1;
  for (int step = 0; step < 40 && !constraint.is_finished(); ++step) {
    const TokenBits bits = constraint.allowed();
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < vocab->n_vocab(); ++t) {
      const bool expected = t == eog ? reference.can_end()
                                     : !vocab->text(t).empty() && reference.allows(vocab->text(t));
      INFO("step ", step, " token ", t, " '", vocab->text(t), "'");
      REQUIRE(bit(bits, t) == expected);
      if (expected) allowed.push_back(t);
    }
    std::vector<float> logits(static_cast<size_t>(vocab->n_vocab()), 1.0f);
    constraint.mask(logits.data());
    for (int32_t t = 0; t < vocab->n_vocab(); ++t) CHECK(std::isinf(logits[t]) == !bit(bits, t));
    REQUIRE(!allowed.empty());
    // Prefer anything over ending, so that generations go deep.
    int32_t pick = allowed[rng() % allowed.size()];
    if (pick == eog && allowed.size() > 1) pick = allowed[0] == eog ? allowed[1] : allowed[0];
    constraint.accept(pick);
    if (pick != eog) REQUIRE(reference.accept(vocab->text(pick)));
  }
}

}  // namespace

TEST_CASE("masks equal brute force: JSON") {
  const std::string gbnf = json_schema_to_gbnf(R"({"type": "object", "properties": {
    "a": {"type": "string"}, "b": {"type": "array", "items": {"type": "integer", "minimum": -19, "maximum": 910}},
    "ab": {"type": ["boolean", "null"]}, "e": {"enum": ["\u00e9", "\u20ac", "tu"]}}})");
  for (uint32_t seed = 1; seed <= 12; ++seed) compare_with_brute_force(gbnf, seed);
  for (uint32_t seed = 1; seed <= 4; ++seed) compare_with_brute_force(json_object_gbnf(), seed);
}

TEST_CASE("masks equal brute force: ambiguity, nesting and characters split across tokens") {
  const std::string gbnf = R"(root ::= (item ("," item)*)? tail
item ::= "a"+ | "a" "b" | [\u00e0-\u00ff]{1,2} | "[" root "]" | "\"" [^"\\]* "\""
tail ::= "" | "\u20ac" | " " tail)";
  for (uint32_t seed = 1; seed <= 12; ++seed) compare_with_brute_force(gbnf, seed);
}

TEST_CASE("end of generation and finishing") {
  std::mt19937 rng(3);
  const auto vocab = small_vocabulary(rng, 100);
  const int32_t eog = vocab->n_vocab() - 1;
  GrammarConstraint c(parse_gbnf(R"(root ::= "ab" "e"?)"), vocab);
  CHECK_FALSE(c.can_end());
  CHECK_THROWS_AS(c.accept(eog), kiln::Error);
  CHECK_THROWS_AS(c.accept(0), kiln::Error);  // "{"
  c.accept(9);                                 // "a"
  c.accept(10);                                // "b"
  CHECK(c.can_end());
  CHECK_FALSE(c.is_finished());
  CHECK(bit(c.allowed(), eog));
  c.accept(11);  // "e"
  CHECK(c.is_finished());
  const TokenBits& only_end = c.allowed();
  for (int32_t t = 0; t < vocab->n_vocab(); ++t) CHECK(bit(only_end, t) == (t == eog));
  c.accept(eog);
  CHECK(c.is_finished());
  std::vector<float> logits(static_cast<size_t>(vocab->n_vocab()), 0.0f);
  CHECK_THROWS_AS(c.mask(logits.data()), kiln::Error);  // nothing may follow the end
}

TEST_CASE("the sampler draws only what the grammar allows, with the seed's draws otherwise") {
  std::mt19937 rng(5);
  const auto vocab = small_vocabulary(rng, 300);
  const auto grammar = parse_gbnf(json_schema_to_gbnf(R"({"type": "array", "items": {"type": "integer"}, "maxItems": 5})"));
  std::vector<float> logits(static_cast<size_t>(vocab->n_vocab()));
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    kiln::Sampler sampler({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = seed}, vocab->n_vocab());
    sampler.constrain(std::make_unique<GrammarConstraint>(grammar, vocab));
    Matcher check(grammar);
    std::string text;
    for (int i = 0; i < 200 && !sampler.finished(); ++i) {
      for (float& l : logits) l = static_cast<float>(rng() % 1000) / 100.0f;
      const int32_t t = sampler.sample(logits.data());
      if (t == vocab->n_vocab() - 1) break;  // the end
      REQUIRE(check.accept(vocab->text(t)));
      text += vocab->text(t);
    }
    CHECK(check.can_end());
  }
  // A grammar that allows every token draws what the seed draws without one
  // (ASCII tokens, so that none leaves a character unfinished).
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) {
    std::string t = std::to_string(i);
    t.insert(t.begin(), static_cast<char>(' ' + i % 90));
    texts.push_back(t);
  }
  texts.push_back("");
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  const auto ascii = std::make_shared<TokenTrie>(views, std::vector<int32_t>{200});
  const auto anything = parse_gbnf("root ::= [\\x00-\\x7F]*");
  std::vector<float> row(texts.size());
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const kiln::SamplerParams p{.temperature = 0.9f, .seed = seed};
    kiln::Sampler plain(p, ascii->n_vocab());
    kiln::Sampler constrained(p, ascii->n_vocab());
    constrained.constrain(std::make_unique<GrammarConstraint>(anything, ascii));
    for (int i = 0; i < 30; ++i) {
      for (float& l : row) l = static_cast<float>(rng() % 1000) / 100.0f;
      row[200] = -1e9f;  // the end, which would end the constrained generation
      const int32_t t = plain.sample(row.data());
      CHECK(constrained.sample(row.data()) == t);
    }
  }
}
