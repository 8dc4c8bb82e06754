#include "engine/tokenizer/pretokenize.hpp"

#include <algorithm>
#include <cstdint>
#include <span>

#include "engine/tokenizer/unicode_category.hpp"
#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln {

namespace {

struct CodePoint {
  char32_t value;
  CharClass cls;
};

using Piece = std::span<const CodePoint>;

// A stretch [begin, end) of code points.
struct Range {
  size_t begin;
  size_t end;
};

// Where an expression first matches in a piece at or after a position; a
// Range with begin == end when it matches nowhere. Expressions never match
// empty text.
using Finder = Range (*)(Piece piece, size_t from);

// The length of the match of an expression that starts exactly at `at`, 0
// when it does not match there.
using Matcher = size_t (*)(Piece piece, size_t at);

// ---- character classes ------------------------------------------------------

using Predicate = bool (*)(const CodePoint&);

bool is_letter(const CodePoint& c) { return c.cls.category == CharCategory::Letter; }
bool is_number(const CodePoint& c) { return c.cls.category == CharCategory::Number; }
bool is_punctuation(const CodePoint& c) { return c.cls.category == CharCategory::Punctuation; }
bool is_space(const CodePoint& c) { return c.cls.whitespace; }
bool is_newline(const CodePoint& c) { return c.value == '\r' || c.value == '\n'; }
bool is_newline_or_slash(const CodePoint& c) { return is_newline(c) || c.value == '/'; }
bool is_blank(const CodePoint& c) { return c.value == ' '; }
bool is_ascii_digit(const CodePoint& c) { return c.value >= '0' && c.value <= '9'; }
// GPT-4o's U and W (see PreTokenizer::Gpt4o)
bool is_letter_but_ascii_small(const CodePoint& c) { return is_letter(c) && !(c.value >= 'a' && c.value <= 'z'); }
bool is_letter_but_ascii_capital(const CodePoint& c) { return is_letter(c) && !(c.value >= 'A' && c.value <= 'Z'); }
// [^\s\p{L}\p{N}]
bool is_other(const CodePoint& c) { return !is_space(c) && !is_letter(c) && !is_number(c); }
// [^\r\n\p{L}\p{N}]
bool is_not_newline_letter_number(const CodePoint& c) { return !is_newline(c) && !is_letter(c) && !is_number(c); }
// [\p{P}\$\+<=>\^~\|]
bool is_punctuation_or_operator(const CodePoint& c) {
  return is_punctuation(c) || std::u32string_view(U"$+<=>^~|").find(c.value) != std::u32string_view::npos;
}

struct CodePointRange {
  char32_t first;
  char32_t last;
};

template <size_t N>
bool in_ranges(const CodePointRange (&ranges)[N], char32_t cp) {
  const auto* it = std::upper_bound(std::begin(ranges), std::end(ranges), cp,
                                    [](char32_t value, const CodePointRange& r) { return value < r.first; });
  return it != std::begin(ranges) && cp <= (it - 1)->last;
}

// [一-龥ࠀ-一가-퟿] of the DeepSeek tokenizers (CJK ideographs, everything from
// Samaritan up to them, and Hangul syllables onwards to the surrogates).
constexpr CodePointRange kDeepseekCjk[] = {{0x0800, 0x9FA5}, {0xAC00, 0xD7FF}};

// [!-/:-~！-／：-～‘-‟　-。] of DeepSeek LLM's tokenizer.
constexpr CodePointRange kDeepseekPunctuation[] = {{0x0021, 0x002F}, {0x003A, 0x007E}, {0x2018, 0x201F},
                                                   {0x3000, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}};

// DeepSeek LLM's letter class, as listed in its tokenizer.json (a subset of
// the cased letters Lu, Ll and Lt).
constexpr CodePointRange kDeepseekLetters[] = {
    {0x0041, 0x005A},   {0x0061, 0x007A},   {0x00B5, 0x00B5},   {0x00C0, 0x00D6},   {0x00D8, 0x00F6},
    {0x00F8, 0x01BA},   {0x01BC, 0x01BF},   {0x01C4, 0x0293},   {0x0295, 0x02AF},   {0x0370, 0x0373},
    {0x0376, 0x0377},   {0x037B, 0x037D},   {0x037F, 0x037F},   {0x0386, 0x0386},   {0x0388, 0x038A},
    {0x038C, 0x038C},   {0x038E, 0x03A1},   {0x03A3, 0x03F5},   {0x03F7, 0x0481},   {0x048A, 0x052F},
    {0x0531, 0x0556},   {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},   {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},   {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},   {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B},   {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},   {0x1FD6, 0x1FDB},
    {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},   {0x2102, 0x2102},   {0x2107, 0x2107},
    {0x210A, 0x2113},   {0x2115, 0x2115},   {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},
    {0x2128, 0x2128},   {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},   {0x2C7E, 0x2CE4},
    {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},   {0xA680, 0xA69B},   {0xA722, 0xA76F},
    {0xA771, 0xA787},   {0xA78B, 0xA78E},   {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},
    {0xFF21, 0xFF3A},   {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

constexpr bool sorted_and_disjoint(std::span<const CodePointRange> ranges) {
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].first > ranges[i].last) return false;
    if (i > 0 && ranges[i - 1].last >= ranges[i].first) return false;
  }
  return true;
}
static_assert(sorted_and_disjoint(kDeepseekCjk) && sorted_and_disjoint(kDeepseekPunctuation) &&
              sorted_and_disjoint(kDeepseekLetters));

bool is_deepseek_cjk(const CodePoint& c) { return in_ranges(kDeepseekCjk, c.value); }
bool is_deepseek_punctuation(const CodePoint& c) { return in_ranges(kDeepseekPunctuation, c.value); }
bool is_deepseek_letter(const CodePoint& c) { return in_ranges(kDeepseekLetters, c.value); }

// ---- building blocks of the expressions ---------------------------------------

// Y+ : how many code points from `at` on satisfy `y`, up to `limit`.
size_t run(Piece piece, size_t at, Predicate y, size_t limit = SIZE_MAX) {
  const size_t end = at + std::min(limit, piece.size() - at);
  size_t stop = at;
  while (stop < end && y(piece[stop])) ++stop;
  return stop - at;
}

// X?Y+ (greedy): one optional X, then as many Y as there are.
size_t optional_then_run(Piece piece, size_t at, Predicate x, Predicate y) {
  if (at + 1 < piece.size() && x(piece[at]) && y(piece[at + 1])) return 1 + run(piece, at + 1, y);
  return run(piece, at, y);
}

// 's|'t|'re|'ve|'m|'ll|'d, with any_case also 'S, 'RE, 'rE, ... (ASCII only).
size_t contraction(Piece piece, size_t at, bool any_case) {
  if (at >= piece.size() || piece[at].value != '\'') return 0;
  auto is = [&](size_t offset, char lower) {
    if (at + offset >= piece.size()) return false;
    const char32_t c = piece[at + offset].value;
    return c == static_cast<char32_t>(lower) || (any_case && c == static_cast<char32_t>(lower - 'a' + 'A'));
  };
  if (is(1, 's') || is(1, 't') || is(1, 'm') || is(1, 'd')) return 2;
  if ((is(1, 'r') && is(2, 'e')) || (is(1, 'v') && is(2, 'e')) || (is(1, 'l') && is(2, 'l'))) return 3;
  return 0;
}

// \s+(?!\S)|\s+ : a run of white space; when a non-space follows it, its last
// space is left out, to lead the next piece (" word").
size_t white_space(Piece piece, size_t at) {
  const size_t length = run(piece, at, is_space);
  return length > 1 && at + length < piece.size() ? length - 1 : length;
}

// \s*[\r\n]+ : white space up to and including its last line break.
size_t white_space_through_newline(Piece piece, size_t at) {
  size_t end = 0;
  for (size_t i = at; i < piece.size() && is_space(piece[i]); ++i) {
    if (is_newline(piece[i])) end = i + 1;
  }
  return end == 0 ? 0 : end - at;
}

// ---- the expressions ---------------------------------------------------------------

size_t gpt2(Piece piece, size_t at) {
  if (const size_t n = contraction(piece, at, /*any_case=*/false)) return n;
  for (Predicate y : {is_letter, is_number, is_other}) {
    if (const size_t n = optional_then_run(piece, at, is_blank, y)) return n;
  }
  return white_space(piece, at);
}

// \p{N}{1,MaxDigits}| ?[^\s\p{L}\p{N}]+After*|\s*[\r\n]+|\s+(?!\S)|\s+ : how
// Llama 3's and GPT-4o's expressions go on after their words.
template <size_t MaxDigits, Predicate After>
size_t numbers_symbols_spaces(Piece piece, size_t at) {
  if (const size_t n = run(piece, at, is_number, MaxDigits)) return n;
  if (const size_t n = optional_then_run(piece, at, is_blank, is_other)) return n + run(piece, at + n, After);
  if (const size_t n = white_space_through_newline(piece, at)) return n;
  return white_space(piece, at);
}

template <size_t MaxDigits>
size_t llama3(Piece piece, size_t at) {
  if (const size_t n = contraction(piece, at, /*any_case=*/true)) return n;
  if (const size_t n = optional_then_run(piece, at, is_not_newline_letter_number, is_letter)) return n;
  return numbers_symbols_spaces<MaxDigits, is_newline>(piece, at);
}

// U*W+|U+W* (GPT-4o's words without their lead and contraction), as a
// backtracking regex engine matches it: U* first takes every letter it can,
// then gives them back one at a time until W+ can start.
size_t cased_word(Piece piece, size_t at) {
  const size_t upper = run(piece, at, is_letter_but_ascii_small);
  if (at + upper < piece.size() && is_letter_but_ascii_capital(piece[at + upper])) {
    return upper + run(piece, at + upper, is_letter_but_ascii_capital);
  }
  // W+ starts on the last letter U* took that is also a W, and ends there:
  // every letter after it is an ASCII capital.
  for (size_t n = upper; n > 0; --n) {
    if (is_letter_but_ascii_capital(piece[at + n - 1])) return n;
  }
  return upper;  // U+ alone: ASCII capitals only (or no letter at all)
}

size_t gpt4o(Piece piece, size_t at) {
  // The lead [^\r\n\p{L}\p{N}] is never a letter, so without it no word
  // starts at `at` either.
  const size_t lead = is_not_newline_letter_number(piece[at]) ? 1 : 0;
  if (const size_t n = cased_word(piece, at + lead)) {
    return lead + n + contraction(piece, at + lead + n, /*any_case=*/true);
  }
  return numbers_symbols_spaces<3, is_newline_or_slash>(piece, at);
}

template <Predicate Y>
size_t one(Piece piece, size_t at) {
  return Y(piece[at]) ? 1 : 0;
}

template <Predicate Y>
size_t many(Piece piece, size_t at) {
  return run(piece, at, Y);
}

// \s?Y+
template <Predicate Y>
size_t space_then_many(Piece piece, size_t at) {
  return optional_then_run(piece, at, is_space, Y);
}

// [0-9][0-9][0-9]
size_t three_ascii_digits(Piece piece, size_t at) { return run(piece, at, is_ascii_digit, 3) == 3 ? 3 : 0; }

// The first position from `from` on where `match` succeeds.
template <Matcher match>
Range first_match(Piece piece, size_t from) {
  for (size_t at = from; at < piece.size(); ++at) {
    if (const size_t length = match(piece, at)) return {at, at + length};
  }
  return {piece.size(), piece.size()};
}

// \s+$ : the white space that ends the piece. Searched from the end, which
// a position-by-position search would make quadratic on long runs of spaces.
Range trailing_space(Piece piece, size_t from) {
  size_t begin = piece.size();
  while (begin > from && is_space(piece[begin - 1])) --begin;
  return {begin, piece.size()};
}

std::span<const Finder> finders(PreTokenizer kind) {
  static constexpr Finder kGpt2[] = {first_match<gpt2>};
  static constexpr Finder kLlama3[] = {first_match<llama3<3>>};
  static constexpr Finder kQwen2[] = {first_match<llama3<1>>};
  static constexpr Finder kGpt4o[] = {first_match<gpt4o>};
  static constexpr Finder kDeepseekLlm[] = {
      first_match<one<is_newline>>,
      first_match<space_then_many<is_deepseek_letter>>,
      first_match<space_then_many<is_deepseek_punctuation>>,
      trailing_space,
      first_match<many<is_deepseek_cjk>>,
      first_match<many<is_number>>,
  };
  static constexpr Finder kDeepseekCoder[] = {
      first_match<one<is_newline>>,
      first_match<space_then_many<is_letter>>,
      first_match<space_then_many<is_punctuation>>,
      first_match<many<is_deepseek_cjk>>,
      first_match<one<is_number>>,
  };
  static constexpr Finder kSmollm[] = {first_match<one<is_number>>, first_match<gpt2>};
  static constexpr Finder kDefault[] = {first_match<many<is_punctuation_or_operator>>, first_match<gpt2>,
                                        first_match<many<is_number>>, first_match<three_ascii_digits>};
  switch (kind) {
    case PreTokenizer::Gpt2: return kGpt2;
    case PreTokenizer::Llama3: return kLlama3;
    case PreTokenizer::Qwen2: return kQwen2;
    case PreTokenizer::Gpt4o: return kGpt4o;
    case PreTokenizer::DeepseekLlm: return kDeepseekLlm;
    case PreTokenizer::DeepseekCoder: return kDeepseekCoder;
    case PreTokenizer::Smollm: return kSmollm;
    case PreTokenizer::Default: return kDefault;
  }
  return {};
}

// Splits `range` of `text` at every match of `find`, keeping the stretches
// between matches too (HF's "isolated" split behaviour).
void split(std::span<const CodePoint> text, Range range, Finder find, std::vector<Range>& out) {
  const Piece piece = text.subspan(range.begin, range.end - range.begin);
  size_t done = 0;
  while (done < piece.size()) {
    const Range match = find(piece, done);
    if (match.begin > done) out.push_back({range.begin + done, range.begin + match.begin});
    if (match.begin == match.end) break;
    out.push_back({range.begin + match.begin, range.begin + match.end});
    done = match.end;
  }
}

}  // namespace

void pretokenize(PreTokenizer kind, std::string_view text, std::vector<std::string_view>& pieces) {
  std::vector<CodePoint> code_points;
  std::vector<size_t> offsets;  // where each code point starts in `text`, and the end
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Unit unit = next_utf8_unit(text.substr(pos));
    code_points.push_back({unit.code_point, char_class(unit.code_point)});
    offsets.push_back(pos);
    pos += unit.length;
  }
  offsets.push_back(text.size());

  std::vector<Range> ranges, next;
  if (!code_points.empty()) ranges.push_back({0, code_points.size()});
  for (Finder find : finders(kind)) {
    next.clear();
    for (Range range : ranges) split(code_points, range, find, next);
    ranges.swap(next);
  }
  for (Range range : ranges) {
    pieces.push_back(text.substr(offsets[range.begin], offsets[range.end] - offsets[range.begin]));
  }
}

}  // namespace kiln
