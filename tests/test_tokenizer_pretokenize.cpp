// The pieces below the BPE tokenizer: Unicode classes, GPT-2's byte-level
// alphabet and the pre-tokenizers, checked against what their regular
// expressions match.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/pretokenize.hpp"
#include "engine/tokenizer_byte_level.hpp"
#include "engine/unicode_category.hpp"

using kiln::CharCategory;
using kiln::PreTokenizer;

namespace {

std::vector<std::string> pieces(PreTokenizer kind, std::string_view text) {
  std::vector<std::string_view> views;
  kiln::pretokenize(kind, text, views);
  return {views.begin(), views.end()};
}

using Pieces = std::vector<std::string>;

}  // namespace

TEST_CASE("unicode classes: category groups and white space") {
  struct Expected {
    char32_t cp;
    CharCategory category;
    bool whitespace;
  };
  for (const Expected& e : std::vector<Expected>{
           {U'a', CharCategory::Letter, false},     {U'1', CharCategory::Number, false},
           {0xBD, CharCategory::Number, false},     // ½
           {U'!', CharCategory::Punctuation, false}, {U'$', CharCategory::Symbol, false},
           {U' ', CharCategory::Separator, true},   {U'\t', CharCategory::Other, true},
           {0x85, CharCategory::Other, true},       {0xA0, CharCategory::Separator, true},
           {0x0301, CharCategory::Mark, false},     {0x200D, CharCategory::Other, false},
           {0x3000, CharCategory::Separator, true}, {0x4E2D, CharCategory::Letter, false},   // 中
           {0x1F999, CharCategory::Symbol, false},  {0xD800, CharCategory::Other, false},    // 🦙, a surrogate
           {0x10FFFF, CharCategory::Other, false},  {0x110000, CharCategory::Other, false},
           {0, CharCategory::Other, false}}) {
    CAPTURE(static_cast<uint32_t>(e.cp));
    const kiln::CharClass c = kiln::char_class(e.cp);
    CHECK(c.category == e.category);
    CHECK(c.whitespace == e.whitespace);
  }
}

TEST_CASE("byte-level alphabet: GPT-2's mapping, and back") {
  CHECK(kiln::byte_level_code_point('A') == U'A');
  CHECK(kiln::byte_level_code_point(0xFF) == 0xFF);
  CHECK(kiln::byte_level_code_point(0x00) == 0x100);
  CHECK(kiln::byte_level_code_point('\n') == 0x10A);  // Ċ
  CHECK(kiln::byte_level_code_point(' ') == 0x120);   // Ġ
  CHECK(kiln::byte_level_code_point(0x7F) == 0x121);
  CHECK(kiln::byte_level_code_point(0xAD) == 0x143);
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += static_cast<char>(b);
  CHECK(kiln::decode_byte_level(kiln::encode_byte_level(all_bytes)) == all_bytes);
  CHECK(kiln::encode_byte_level(" hi\n") == "\xC4\xA0hi\xC4\x8A");
  // Outside the alphabet a character stands for its own UTF-8 bytes.
  CHECK(kiln::decode_byte_level("\xC4\xA0\xE4\xB8\xAD") == " \xE4\xB8\xAD");
}

TEST_CASE("gpt-2: contractions, letters, numbers, other, and spaces that lead the next word") {
  CHECK(pieces(PreTokenizer::Gpt2, "Hello world's  end!\n\n x") ==
        Pieces{"Hello", " world", "'s", " ", " end", "!", "\n\n", " x"});
  CHECK(pieces(PreTokenizer::Gpt2, "I'VE 123\tword  ") == Pieces{"I", "'", "VE", " 123", "\t", "word", "  "});
  CHECK(pieces(PreTokenizer::Gpt2, "ab\xFF" "cd") == Pieces{"ab", "\xFF", "cd"});  // invalid UTF-8 kept as is
  CHECK(pieces(PreTokenizer::Gpt2, "").empty());
}

TEST_CASE("llama3 and qwen2: any-case contractions, digit groups, line breaks") {
  CHECK(pieces(PreTokenizer::Llama3, "I'VE 12345 a\n\n  b!!\n") ==
        Pieces{"I", "'VE", " ", "123", "45", " a", "\n\n", " ", " b", "!!\n"});
  CHECK(pieces(PreTokenizer::Llama3, "\tword (x)") == Pieces{"\tword", " (", "x", ")"});
  CHECK(pieces(PreTokenizer::Qwen2, "a12345") == Pieces{"a", "1", "2", "3", "4", "5"});
}

TEST_CASE("deepseek and the others: several expressions in turn") {
  CHECK(pieces(PreTokenizer::DeepseekCoder, "int x = 10;\n") == Pieces{"int", " x", " = ", "1", "0", ";", "\n"});
  CHECK(pieces(PreTokenizer::DeepseekLlm, "Hello, \xE4\xB8\x96\xE7\x95\x8C 123  ") ==  // 世界
        Pieces{"Hello", ",", " ", "\xE4\xB8\x96\xE7\x95\x8C", " ", "123", "  "});
  CHECK(pieces(PreTokenizer::Smollm, "a12 b") == Pieces{"a", "1", "2", " b"});
  CHECK(pieces(PreTokenizer::Default, "a+b=12345 ok.") == Pieces{"a", "+", "b", "=", "123", "45", " ok", "."});
}

TEST_CASE("every pre-tokenizer keeps every byte, in order") {
  const std::string text =
      "  Hello, y'all! \xC3\x84pfel 3.14\t\t\n\r\n 1000000 \xE4\xB8\xAD\xE6\x96\x87 "
      "\xF0\x9F\xA6\x99\xE2\x80\x8D\xC3 end   ";
  for (PreTokenizer kind : {PreTokenizer::Gpt2, PreTokenizer::Llama3, PreTokenizer::Qwen2, PreTokenizer::DeepseekLlm,
                            PreTokenizer::DeepseekCoder, PreTokenizer::Smollm, PreTokenizer::Default}) {
    CAPTURE(static_cast<int>(kind));
    std::string joined;
    for (const std::string& piece : pieces(kind, text)) {
      CHECK_FALSE(piece.empty());
      joined += piece;
    }
    CHECK(joined == text);
  }
}
