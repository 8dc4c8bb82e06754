// Helpers shared by the tokenizer test files.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "tests/support/fixtures.hpp"

namespace kiln::test {

inline const std::string kShared = KILN_SHARED_DIR;

// Opens a fixture from the shared folder (a missing one fails the test).
inline GgufFile open_shared(const std::string& relative_path) { return GgufFile::open(fixture(relative_path)); }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The texts of a file in test-tokenizer-0's .inp format (each followed by a
// separator line; ../shared/tokenizer-tests/README.md), byte for byte.
inline std::vector<std::string> read_test_texts(const std::string& inp_path) {
  const std::string inputs = read_file(inp_path);
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t pos = 0, end; (end = inputs.find(separator, pos)) != std::string::npos; pos = end + separator.size()) {
    texts.push_back(inputs.substr(pos, end - pos));
  }
  return texts;
}

inline std::vector<int32_t> parse_ids(const std::string& line) {
  std::istringstream in(line);
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

// All of `ids` through one Detokenizer.
inline std::string decode(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  Detokenizer detok(tok);
  std::string text;
  for (int32_t id : ids) text += detok.push(id);
  return text + detok.flush();
}

}  // namespace kiln::test
