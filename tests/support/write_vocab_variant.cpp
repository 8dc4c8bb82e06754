// Writes a test vocabulary of tests/support/vocab_variants.hpp from ../shared (as
// configured: KILN_SHARED_DIR), for llama.cpp's llama-tokenize to make the
// expected ids from (tests/vocab_variants/make_expected.py), and for the
// ctest that checks those ids were made from the file the tests build.
//
//   write_vocab_variant NAME OUT.gguf
//   write_vocab_variant --list        each variant's name and base vocab, one a line
#include <cstdio>
#include <exception>
#include <string>

#include "engine/gguf/gguf.hpp"
#include "tests/support/vocab_variants.hpp"

int main(int argc, char** argv) {
  using namespace kiln::test;
  try {
    if (argc == 2 && std::string(argv[1]) == "--list") {
      for (const VocabVariant& v : vocab_variants()) {
        std::printf("%.*s %.*s\n", static_cast<int>(v.name.size()), v.name.data(), static_cast<int>(v.base.size()),
                    v.base.data());
      }
      return 0;
    }
    if (argc != 3) {
      std::fprintf(stderr, "usage: write_vocab_variant NAME OUT.gguf | --list\n");
      return 1;
    }
    const VocabVariant& variant = vocab_variant(argv[1]);
    const kiln::GgufFile base = kiln::GgufFile::open(std::string(KILN_SHARED_DIR) + "/" + base_vocab(variant));
    write_vocab_variant(variant, base).write(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_vocab_variant: %s\n", e.what());
    return 1;
  }
  return 0;
}
