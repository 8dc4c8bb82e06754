// A regex `pattern` (ECMA-262 syntax, the subset below) -> GBNF over the
// characters of a JSON string: literals, escapes, classes, `.`, groups,
// alternation and the quantifiers. What would need more than a context-free
// grammar (backreferences, lookaround, word boundaries) or Unicode tables
// (\p{...}) is refused by name. Each character set becomes its JSON
// spellings (json_chars), so a `"` in the pattern is `\"` in the JSON text.
#include <string>
#include <vector>

#include "engine/error/error.hpp"
#include "engine/grammar/json_schema_parts.hpp"

namespace kiln::grammar::schema {

namespace {

// Narrow where the regex engines differ, so that what the grammar writes
// matches in all of them: \s is ASCII space here, \S is all that no engine
// counts as space, `.` is all but the line ends of JavaScript and Python.
const std::vector<CodepointRange> kSpaceNarrow = {{'\t', '\r'}, {' ', ' '}};
const std::vector<CodepointRange> kSpaceWide = {{'\t', '\r'}, {' ', ' '}, {0x1C, 0x1F}, {0x85, 0x85}, {0xA0, 0xA0},
                                                {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F},
                                                {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const std::vector<CodepointRange> kDigit = {{'0', '9'}};
const std::vector<CodepointRange> kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const std::vector<CodepointRange> kLineEnds = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};

class PatternParser {
 public:
  explicit PatternParser(std::string_view pattern) : p_(pattern) {}

  std::string parse() {
    const bool anchored_start = peek() == '^';
    if (anchored_start) ++pos_;
    std::string body = alternation(0);
    if (pos_ < p_.size()) fail("an unmatched ')'");
    // The pattern may match anywhere in the string unless anchored.
    if (!anchored_start) body = "char* " + body;
    if (!anchored_end_) body += " char*";
    return body;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("pattern '" + std::string(p_) + "': " + what + " is not supported");
  }
  char peek(size_t ahead = 0) const { return pos_ + ahead < p_.size() ? p_[pos_ + ahead] : '\0'; }
  bool at_end() const { return pos_ >= p_.size(); }

  std::string alternation(int depth) {
    // Each group costs the grammar up to three levels of parentheses, of the 64 it allows.
    if (depth > 16) fail("nesting deeper than 16 groups");
    std::vector<std::string> alternatives{sequence(depth)};
    while (peek() == '|') {
      ++pos_;
      alternatives.push_back(sequence(depth));
    }
    if (alternatives.size() == 1) return alternatives[0];
    std::string out = "(";
    for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
    return out + ")";
  }

  std::string sequence(int depth) {
    std::string out = "(\"\"";  // an empty alternative is the empty string
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$') {
        ++pos_;
        if (!at_end() || depth > 0) fail("'$' before the end of the pattern");
        anchored_end_ = true;
        break;
      }
      if (peek() == '^') fail("'^' after the start of the pattern");
      const std::string item = atom(depth);
      out += ' ';
      out += quantified(item);
    }
    return out + ")";
  }

  std::string quantified(const std::string& item) {
    std::string suffix;
    const char q = peek();
    if (q == '*' || q == '+' || q == '?') {
      ++pos_;
      suffix = std::string(1, q);
    } else if (q == '{' && (peek(1) >= '0' && peek(1) <= '9')) {
      ++pos_;
      const size_t close = p_.find('}', pos_);
      if (close == std::string_view::npos) fail("an unclosed '{'");
      const std::string_view counts = p_.substr(pos_, close - pos_);
      for (const char c : counts) {
        if ((c < '0' || c > '9') && c != ',') fail("the quantifier {" + std::string(counts) + "}");
      }
      suffix.append("{").append(counts).append("}");
      pos_ = close + 1;
    } else {
      return item;
    }
    if (peek() == '?') ++pos_;  // lazy: the same strings match
    if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') fail("a quantifier after a quantifier");
    return "(" + item + ")" + suffix;
  }

  std::string atom(int depth) {
    const char c = peek();
    if (c == '(') {
      ++pos_;
      if (peek() == '?') {
        if (peek(1) == ':') {
          pos_ += 2;
        } else if (peek(1) == '<' && peek(2) != '=' && peek(2) != '!') {
          const size_t close = p_.find('>', pos_);
          if (close == std::string_view::npos) fail("an unclosed group name");
          pos_ = close + 1;
        } else {
          fail("lookaround (?" + std::string(1, peek(1)) + "...)");
        }
      }
      std::string inner = alternation(depth + 1);
      if (peek() != ')') fail("an unclosed '('");
      ++pos_;
      return inner;
    }
    if (c == '[') return json_chars(char_set());
    if (c == '.') {
      ++pos_;
      return json_chars(CharClass(kLineEnds, true));
    }
    if (c == '*' || c == '+' || c == '?') fail(std::string("a quantifier '") + c + "' with nothing before it");
    if (c == '\\') return json_chars(escape(false));
    return json_chars(single(next_codepoint()));
  }

  static CharClass single(uint32_t cp) { return CharClass({{cp, cp}}, false); }

  // One UTF-8 character of the pattern.
  uint32_t next_codepoint() {
    Utf8Partial state;
    while (!at_end()) {
      Utf8Partial next;
      uint32_t cp = 0;
      const auto step = state.feed(static_cast<uint8_t>(p_[pos_++]), next, cp);
      if (step == Utf8Partial::Step::Complete) return cp;
      if (step == Utf8Partial::Step::Invalid) break;
      state = next;
    }
    fail("invalid UTF-8");
  }

  uint32_t hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = peek();
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) fail("a malformed hexadecimal escape");
      v = v << 4 | static_cast<uint32_t>(d);
      ++pos_;
    }
    return v;
  }

  // After a backslash: a class escape or one character. `in_class`: inside
  // [...], where \b would mean backspace.
  CharClass escape(bool in_class) {
    ++pos_;
    if (at_end()) fail("a trailing backslash");
    const char e = p_[pos_++];
    switch (e) {
      case 'd': return CharClass(kDigit, false);
      case 'D': return CharClass(kDigit, true);
      case 'w': return CharClass(kWord, false);
      case 'W': return CharClass(kWord, true);
      case 's': return CharClass(kSpaceNarrow, false);
      case 'S': return CharClass(kSpaceWide, true);
      case 't': return single('\t');
      case 'n': return single('\n');
      case 'r': return single('\r');
      case 'f': return single('\f');
      case 'v': return single('\v');
      case '0': return single(0);
      case 'x': return single(hex(2));
      case 'u': return single(hex(4));
      case 'b':
        if (in_class) return single('\b');
        fail("the word boundary \\b");
      default:
        break;
    }
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9'))
      fail(std::string("the escape \\") + e);
    --pos_;
    return single(next_codepoint());  // an escaped symbol stands for itself
  }

  CharClass char_set() {
    ++pos_;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    std::vector<CodepointRange> ranges;
    while (peek() != ']') {  // "[]" is empty, "[^]" anything, as in JavaScript
      if (at_end()) fail("an unclosed '['");
      CharClass lo = peek() == '\\' ? escape(true) : single(next_codepoint());
      if (peek() == '-' && peek(1) != ']' && peek(1) != '\0') {
        ++pos_;
        const CharClass hi = peek() == '\\' ? escape(true) : single(next_codepoint());
        if (lo.ranges().size() != 1 || hi.ranges().size() != 1 || lo.ranges()[0].lo != lo.ranges()[0].hi ||
            hi.ranges()[0].lo != hi.ranges()[0].hi)
          fail("a range with a class at an end");
        if (hi.ranges()[0].lo < lo.ranges()[0].lo) fail("a range whose end comes before its start");
        ranges.push_back({lo.ranges()[0].lo, hi.ranges()[0].lo});
      } else {
        ranges.insert(ranges.end(), lo.ranges().begin(), lo.ranges().end());
      }
    }
    ++pos_;
    return CharClass(std::move(ranges), negated);
  }

  std::string_view p_;
  size_t pos_ = 0;
  bool anchored_end_ = false;
};

}  // namespace

std::string pattern_contents(std::string_view pattern) { return PatternParser(pattern).parse(); }

}  // namespace kiln::grammar::schema
