// The pieces below the BPE tokenizer: Unicode classes, GPT-2's byte-level
// alphabet and the pre-tokenizers, checked against what their regular
// expressions match.
#include <doctest/doctest.h>

#include <span>
#include <string>
#include <vector>

#include "engine/tokenizer/pretokenize.hpp"
#include "engine/tokenizer/tokenizer_byte_level.hpp"
#include "engine/tokenizer/unicode_category.hpp"

using kiln::CharCategory;
using kiln::PreTokenizer;

namespace {

std::vector<std::string> pieces(PreTokenizer kind, std::string_view text) {
  std::vector<std::string_view> views;
  kiln::pretokenize(kind, text, views);
  return {views.begin(), views.end()};
}

using Pieces = std::vector<std::string>;

// Conformance-style lists for the two pre-tokenizers no vocab in ../shared
// uses. The expected pieces were computed outside kiln: llama.cpp's regular
// expressions for each (SmolLM: \p{N}, then GPT-2's; default: punctuation
// runs, GPT-2's, \p{N}+, then three-digit groups), applied in turn with
// Python's `regex` module, every match and every gap between matches a piece.
struct PieceCase {
  std::string text;
  Pieces expected;
};

const PieceCase kSmollmCases[] = {
    {"Hello world", {"Hello", " world"}},
    {" leading space", {" leading", " space"}},
    {"trailing spaces   ", {"trailing", " spaces", "   "}},
    {"it's we'll I'd they're", {"it", "'s", " we", "'ll", " I", "'d", " they", "'re"}},
    {"DON'T Stop", {"DON", "'", "T", " Stop"}},
    {"x=1234567;", {"x", "=", "1", "2", "3", "4", "5", "6", "7", ";"}},
    {"3.14159 and 2,718", {"3", ".", "1", "4", "1", "5", "9", " and", " ", "2", ",", "7", "1", "8"}},
    {"a12b345c", {"a", "1", "2", "b", "3", "4", "5", "c"}},
    {"tabs\tand\nnew\n\nlines", {"tabs", "\t", "and", "\n", "new", "\n", "\n", "lines"}},
    {"  two  spaces  ", {" ", " two", " ", " spaces", "  "}},
    {"e-mail: a@b.com!", {"e", "-", "mail", ":", " a", "@", "b", ".", "com", "!"}},
    {"$100 + 20% <ok> ^~|", {"$", "1", "0", "0", " +", " ", "2", "0", "%", " <", "ok", ">", " ^~|"}},
    {"Gr\xC3\xBC\xC3\x9F" "e, na\xC3\xAFve caf\xC3\xA9", {"Gr\xC3\xBC\xC3\x9F" "e", ",", " na\xC3\xAFve", " caf\xC3\xA9"}},
    {"\xE6\x95\xB0\xE5\xAD\x97" "123\xE4\xB8\xAD\xE6\x96\x87", {"\xE6\x95\xB0\xE5\xAD\x97", "1", "2", "3", "\xE4\xB8\xAD\xE6\x96\x87"}},
    {"\xC3\x84\xC3\x96\xC3\x9C 1\xD9\xA2" "3", {"\xC3\x84\xC3\x96\xC3\x9C", " ", "1", "\xD9\xA2", "3"}},
    {"(parens) [brackets] {braces}", {"(", "parens", ")", " [", "brackets", "]", " {", "braces", "}"}},
    {"...!!!???", {"...!!!???"}},
    {"\n", {"\n"}},
    {"a  \n  b", {"a", "  \n ", " b"}},
};

const PieceCase kDefaultCases[] = {
    {"Hello world", {"Hello", " world"}},
    {" leading space", {" leading", " space"}},
    {"trailing spaces   ", {"trailing", " spaces", "   "}},
    {"it's we'll I'd they're", {"it", "'", "s", " we", "'", "ll", " I", "'", "d", " they", "'", "re"}},
    {"DON'T Stop", {"DON", "'", "T", " Stop"}},
    {"x=1234567;", {"x", "=", "123", "456", "7", ";"}},
    {"3.14159 and 2,718", {"3", ".", "141", "59", " and", " ", "2", ",", "718"}},
    {"a12b345c", {"a", "12", "b", "345", "c"}},
    {"tabs\tand\nnew\n\nlines", {"tabs", "\t", "and", "\n", "new", "\n", "\n", "lines"}},
    {"  two  spaces  ", {" ", " two", " ", " spaces", "  "}},
    {"e-mail: a@b.com!", {"e", "-", "mail", ":", " a", "@", "b", ".", "com", "!"}},
    {"$100 + 20% <ok> ^~|", {"$", "100", " ", "+", " ", "20", "%", " ", "<", "ok", ">", " ", "^~|"}},
    {"Gr\xC3\xBC\xC3\x9F" "e, na\xC3\xAFve caf\xC3\xA9", {"Gr\xC3\xBC\xC3\x9F" "e", ",", " na\xC3\xAFve", " caf\xC3\xA9"}},
    {"\xE6\x95\xB0\xE5\xAD\x97" "123\xE4\xB8\xAD\xE6\x96\x87", {"\xE6\x95\xB0\xE5\xAD\x97", "123", "\xE4\xB8\xAD\xE6\x96\x87"}},
    {"\xC3\x84\xC3\x96\xC3\x9C 1\xD9\xA2" "3", {"\xC3\x84\xC3\x96\xC3\x9C", " ", "1\xD9\xA2" "3"}},
    {"(parens) [brackets] {braces}", {"(", "parens", ")", " ", "[", "brackets", "]", " ", "{", "braces", "}"}},
    {"...!!!???", {"...!!!???"}},
    {"\n", {"\n"}},
    {"a  \n  b", {"a", "  \n ", " b"}},
};

// GPT-4o's expression as llama.cpp runs it: with std::regex, over the text
// with every code point past ASCII replaced by a byte standing for its class
// (letter, number, white space, ...), and \p{L} / \p{N} by classes of those
// bytes and ASCII. The pieces were computed that way with Python's `re` on
// bytes; the tests of tests/vocab_variants check the same against llama.cpp.
const PieceCase kGpt4oCases[] = {
    {"HelloWorld XMLHttpRequest iPhone", {"Hello", "World", " XMLHttp", "Request", " i", "Phone"}},
    {"ALLCAPS camelCase PascalCase snake_case", {"ALLCAPS", " camel", "Case", " Pascal", "Case", " snake", "_case"}},
    {"DON'T they're it's O'Neil 'quoted'", {"DON'T", " they're", " it's", " O", "'Neil", " '", "quoted", "'"}},
    // Letters past ASCII are both cases: U* gives one back to W+ ("ABCé"), or
    // W+ starts and ends on the last one before ASCII capitals (" Ä", "BC").
    {"ABC\xC3\xA9 \xC3\x84" "BC AB\xC3\x84 a\xC3\x84" "B",
     {"ABC\xC3\xA9", " \xC3\x84", "BC", " AB\xC3\x84", " a\xC3\x84", "B"}},
    {"\xC3\x84pfel\xC3\x96l \xC3\x89" "COLE \xCE\x91\xCE\x92\xCE\x93\xCE\xB4\xCE\xB5",
     {"\xC3\x84pfel\xC3\x96l", " \xC3\x89", "COLE", " \xCE\x91\xCE\x92\xCE\x93\xCE\xB4\xCE\xB5"}},
    {"e\xCC\x81" "cole", {"e", "\xCC\x81" "cole"}},  // a combining mark leads the next word
    {"path/to/file a//b ///\n", {"path", "/to", "/file", " a", "//", "b", " ///\n"}},
    {"x+=1;\n\n// line", {"x", "+=", "1", ";\n\n//", " line"}},
    {"12345678 3.14", {"123", "456", "78", " ", "3", ".", "14"}},
    {"tabs\tand\r\nCRLF  \n  end  ", {"tabs", "\tand", "\r\n", "CRLF", "  \n", " ", " end", "  "}},
    {"\xC2\xA0non-breaking\xE3\x80\x80wide", {"\xC2\xA0non", "-breaking", "\xE3\x80\x80wide"}},
    {"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E English\xE4\xB8\xAD\xE6\x96\x87" "123",
     {"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", " English\xE4\xB8\xAD\xE6\x96\x87", "123"}},
};

void check_cases(PreTokenizer kind, std::span<const PieceCase> cases) {
  for (const PieceCase& c : cases) {
    CAPTURE(c.text);
    CHECK(pieces(kind, c.text) == c.expected);
  }
}

}  // namespace

TEST_CASE("smollm: digits one by one, then GPT-2's expression (case list)") { check_cases(PreTokenizer::Smollm, kSmollmCases); }

TEST_CASE("default: punctuation runs, GPT-2's expression, digit runs in threes (case list)") {
  check_cases(PreTokenizer::Default, kDefaultCases);
}

TEST_CASE("gpt-4o: words split where ASCII case changes (case list)") { check_cases(PreTokenizer::Gpt4o, kGpt4oCases); }

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
  for (PreTokenizer kind : {PreTokenizer::Gpt2, PreTokenizer::Llama3, PreTokenizer::Qwen2, PreTokenizer::Gpt4o,
                            PreTokenizer::DeepseekLlm, PreTokenizer::DeepseekCoder, PreTokenizer::Smollm,
                            PreTokenizer::Default}) {
    CAPTURE(static_cast<int>(kind));
    std::string joined;
    for (const std::string& piece : pieces(kind, text)) {
      CHECK_FALSE(piece.empty());
      joined += piece;
    }
    CHECK(joined == text);
  }
}
