// kiln's tokenizer on the test vocabularies of tests/support/vocab_variants.hpp
// (Gemma 3's SentencePiece, Phi-4-mini's GPT-4o pre-tokenizer, SmolLM3's
// file), against the ids llama.cpp's llama-tokenize gave for the same files
// (tests/vocab_variants/README.md): every text in both of its modes, the
// round trip where llama.cpp's pieces give the text back, and the tokens that
// end generation. ctest vocab_variants_name_their_inputs checks that the ids
// were made from the files this build writes.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_tokenizer_support.hpp"
#include "tests/support/vocab_variants.hpp"

using kiln::GgufFile;
using kiln::Tokenizer;
using namespace kiln::test;

namespace {

const std::string kDir = VOCAB_VARIANTS_DIR;

// One line of an .ids file: "plain shared 3 roundtrip: 1 2 3" (no BOS,
// special tokens as text; llama.cpp's pieces give the text back) or
// "special own 0: ..." (BOS as the vocab says, special tokens parsed).
struct Expected {
  bool special = false;
  std::string texts;  // "shared" (next to the base vocab) or "own" (tests/vocab_variants/texts.inp)
  size_t index = 0;
  bool round_trip = false;
  std::vector<int32_t> ids;
};

struct ExpectedFile {
  std::vector<int32_t> end_of_generation;
  std::vector<Expected> cases;
};

ExpectedFile read_expected(const std::string& path) {
  ExpectedFile file;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#")) continue;
    const size_t colon = line.find(':');
    REQUIRE(colon != std::string::npos);
    const std::vector<int32_t> ids = parse_ids(line.substr(colon + 1));
    std::istringstream head(line.substr(0, colon));
    std::string mode, flag;
    head >> mode;
    if (mode == "eog") {
      file.end_of_generation = ids;
      continue;
    }
    Expected e;
    REQUIRE((mode == "plain" || mode == "special"));
    e.special = mode == "special";
    REQUIRE(static_cast<bool>(head >> e.texts >> e.index));
    e.round_trip = head >> flag && flag == "roundtrip";
    e.ids = ids;
    file.cases.push_back(std::move(e));
  }
  return file;
}

void check_variant(const VocabVariant& variant) {
  const GgufFile base = open_shared(base_vocab(variant));
  const std::vector<uint8_t> bytes = write_vocab_variant(variant, base).bytes();
  const GgufFile file = GgufFile::from_bytes(bytes, std::string(variant.name));
  const Tokenizer tok = Tokenizer::from_gguf(file);
  const std::map<std::string, std::vector<std::string>> texts = {
      {"shared", read_test_texts(base.path() + ".inp")},
      {"own", read_test_texts(kDir + "/texts.inp")},
  };
  const ExpectedFile expected = read_expected(kDir + "/" + std::string(variant.name) + VOCAB_VARIANT_IDS);
  // Both modes for every text, so a texts file changed since is noticed.
  CHECK(expected.cases.size() == 2 * (texts.at("shared").size() + texts.at("own").size()));

  int matched = 0, round_trips = 0;
  for (const Expected& e : expected.cases) {
    REQUIRE(e.index < texts.at(e.texts).size());
    const std::string& text = texts.at(e.texts)[e.index];
    CAPTURE(e.special);
    CAPTURE(text);
    const std::vector<int32_t> ids = tok.encode(text, /*add_special=*/e.special, /*parse_special=*/e.special);
    CHECK(ids == e.ids);
    matched += ids == e.ids;
    if (e.round_trip) {
      CHECK(decode(tok, ids) == text);
      ++round_trips;
    }
  }
  std::vector<int32_t> end_of_generation;
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    if (tok.is_end_of_generation(id)) end_of_generation.push_back(id);
  }
  CHECK(end_of_generation == expected.end_of_generation);
  MESSAGE(variant.name << ": " << matched << "/" << expected.cases.size() << " tokenizations match llama.cpp's, "
                       << round_trips << " round trips checked");
}

}  // namespace

TEST_CASE("test vocabularies: kiln's ids are llama.cpp's" * needs_fixtures) {
  for (const VocabVariant& variant : vocab_variants()) {
    CAPTURE(variant.name);
    check_variant(variant);
  }
}
