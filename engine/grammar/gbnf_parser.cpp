// GBNF text -> Grammar: a recursive-descent parser over the text, handing
// rules to GrammarBuilder. A rule ends at the end of its line, except
// inside parentheses and after `|`.
#include <string>

#include "engine/error/error.hpp"
#include "engine/grammar/grammar.hpp"
#include "engine/grammar/grammar_builder.hpp"

namespace kiln::grammar {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Parser {
 public:
  Parser(std::string_view text, const GrammarLimits& limits) : text_(text), builder_(limits), limits_(limits) {}

  std::shared_ptr<const Grammar> parse() {
    skip_space(true);
    while (!at_end()) {
      parse_rule();
      skip_space(true);
    }
    return builder_.finish();
  }

 private:
  using Sequence = GrammarBuilder::Sequence;

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  // Counted on from the last place asked for, which is most often before
  // this one, so that naming every rule's place stays linear in the text.
  TextLocation location(size_t at) const {
    if (at < counted_to_) {
      counted_to_ = 0;
      counted_ = TextLocation();
    }
    for (; counted_to_ < at && counted_to_ < text_.size(); ++counted_to_) {
      if (text_[counted_to_] == '\n') {
        ++counted_.line;
        counted_.column = 1;
      } else if ((static_cast<unsigned char>(text_[counted_to_]) & 0xC0) != 0x80) {
        ++counted_.column;  // columns count characters, not bytes
      }
    }
    return counted_;
  }
  [[noreturn]] void fail(const std::string& what) const { throw_at(location(pos_), what); }
  std::string found() const {
    if (at_end()) return "the end of the grammar";
    const char c = peek();
    if (c == '\n') return "the end of the line";
    if (static_cast<unsigned char>(c) < 0x20) return "a control character";
    std::string quoted = "''";
    quoted.insert(1, 1, c);
    return quoted;
  }

  // Spaces, tabs and comments; line ends too where `newlines`.
  void skip_space(bool newlines) {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t') {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && peek() != '\n' && peek() != '\r') ++pos_;
      } else if (newlines && (c == '\n' || c == '\r')) {
        ++pos_;
      } else {
        return;
      }
    }
  }

  std::string_view parse_name() {
    const size_t start = pos_;
    while (is_name_char(peek())) ++pos_;
    if (pos_ == start) fail("expected a rule name, found " + found());
    return text_.substr(start, pos_ - start);
  }

  void parse_rule() {
    const size_t start = pos_;
    const std::string_view name = parse_name();
    const uint32_t rule = builder_.rule(name, location(start));
    skip_space(false);
    if (text_.substr(pos_, 3) != "::=") fail("expected '::=' after the rule name, found " + found());
    pos_ += 3;
    skip_space(true);
    current_rule_ = rule;
    std::vector<Sequence> alternatives = parse_alternatives(false);
    builder_.define(rule, std::move(alternatives), location(start));
    if (!at_end() && peek() != '\n' && peek() != '\r') fail("expected the end of the line, found " + found());
  }

  std::vector<Sequence> parse_alternatives(bool nested) {
    std::vector<Sequence> alternatives;
    alternatives.push_back(parse_sequence(nested));
    while (peek() == '|') {
      ++pos_;
      skip_space(true);
      alternatives.push_back(parse_sequence(nested));
    }
    return alternatives;
  }

  Sequence parse_sequence(bool nested) {
    Sequence sequence;
    while (!at_end()) {
      const char c = peek();
      if (c == '|' || c == ')' || c == '\n' || c == '\r') break;
      Sequence atom = parse_atom();
      skip_space(nested);
      while (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') {
        const TextLocation where = location(pos_);
        uint32_t min = 0;
        uint32_t max = GrammarBuilder::kUnbounded;
        parse_repetition(min, max);
        Sequence repeated;
        builder_.repeat(as_one_element(std::move(atom), where), min, max, current_rule_, where, repeated);
        atom = std::move(repeated);
        skip_space(nested);
      }
      sequence.insert(sequence.end(), atom.begin(), atom.end());
    }
    return sequence;
  }

  // A repetition applies to a whole literal or group: several elements
  // become one rule first.
  Element as_one_element(Sequence atom, TextLocation where) {
    if (atom.size() == 1) return atom[0];
    return Element{ElementKind::Rule, builder_.add_generated(current_rule_, {std::move(atom)}, where)};
  }

  void parse_repetition(uint32_t& min, uint32_t& max) {
    const char op = peek();
    ++pos_;
    if (op == '*') return;
    if (op == '+') {
      min = 1;
      return;
    }
    if (op == '?') {
      max = 1;
      return;
    }
    skip_space(false);
    min = parse_count();
    skip_space(false);
    if (peek() == ',') {
      ++pos_;
      skip_space(false);
      if (peek() != '}') max = parse_count();
      skip_space(false);
    } else {
      max = min;
    }
    if (peek() != '}') fail("expected '}' to close the repetition, found " + found());
    ++pos_;
  }

  uint32_t parse_count() {
    if (peek() < '0' || peek() > '9') fail("expected a repetition count, found " + found());
    uint64_t n = 0;
    while (peek() >= '0' && peek() <= '9') {
      n = n * 10 + static_cast<uint64_t>(peek() - '0');
      if (n > limits_.max_repetition) fail("a repetition count above " + std::to_string(limits_.max_repetition));
      ++pos_;
    }
    return static_cast<uint32_t>(n);
  }

  Sequence parse_atom() {
    const char c = peek();
    if (c == '"') return parse_literal();
    if (c == '[') return {class_element(parse_class())};
    if (c == '.') {
      ++pos_;
      return {class_element(CharClass({}, true))};
    }
    if (c == '(') return parse_group();
    if (c == '<') fail("token references (<...>) are not supported");
    if (is_name_char(c)) {
      const size_t start = pos_;
      const std::string_view name = parse_name();
      return {Element{ElementKind::Rule, builder_.rule(name, location(start))}};
    }
    fail("unexpected " + found());
  }

  Element class_element(const CharClass& c) { return Element{ElementKind::Char, builder_.add_class(c)}; }

  Sequence parse_group() {
    const TextLocation where = location(pos_);
    if (++depth_ > limits_.max_nesting)
      fail("parentheses nested more than " + std::to_string(limits_.max_nesting) + " deep");
    ++pos_;
    skip_space(true);
    std::vector<Sequence> alternatives = parse_alternatives(true);
    if (peek() != ')') fail("expected ')', found " + found());
    ++pos_;
    --depth_;
    // A group of one alternative is spliced into the sequence.
    if (alternatives.size() == 1) return std::move(alternatives[0]);
    return {Element{ElementKind::Rule, builder_.add_generated(current_rule_, std::move(alternatives), where)}};
  }

  Sequence parse_literal() {
    ++pos_;
    Sequence chars;
    while (peek() != '"') {
      if (at_end() || peek() == '\n' || peek() == '\r') fail("unterminated string literal");
      const uint32_t cp = parse_char();
      chars.push_back(class_element(CharClass({{cp, cp}}, false)));
    }
    ++pos_;
    return chars;
  }

  CharClass parse_class() {
    ++pos_;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    std::vector<CodepointRange> ranges;
    while (peek() != ']') {
      if (at_end() || peek() == '\n' || peek() == '\r') fail("unterminated character class");
      const size_t start = pos_;
      const uint32_t lo = parse_char();
      uint32_t hi = lo;
      if (peek() == '-' && peek(1) != ']' && pos_ + 1 < text_.size()) {
        ++pos_;
        hi = parse_char();
        if (hi < lo) throw_at(location(start), "a character range whose end comes before its start");
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;
    return CharClass(std::move(ranges), negated);
  }

  // One character of a literal or class: an escape or a UTF-8 character.
  uint32_t parse_char() {
    if (peek() == '\\') {
      ++pos_;
      const char e = peek();
      ++pos_;
      switch (e) {
        case 'x': return parse_hex(2);
        case 'u': return parse_hex(4);
        case 'U': return parse_hex(8);
        case 't': return '\t';
        case 'n': return '\n';
        case 'r': return '\r';
        case 'f': return '\f';
        case '0': return 0;
        case '\\': case '"': case '[': case ']': case '-': case '^': case '/': case '\'':
          return static_cast<unsigned char>(e);
        default:
          pos_ -= 2;
          fail("unknown escape \\" + (at_end() ? std::string() : std::string(1, e)));
      }
    }
    for (Utf8Partial state;;) {
      uint32_t cp = 0;
      Utf8Partial next;
      if (at_end()) fail("invalid UTF-8");
      const auto step = state.feed(static_cast<uint8_t>(peek()), next, cp);
      if (step == Utf8Partial::Step::Invalid) fail("invalid UTF-8");
      ++pos_;
      if (step == Utf8Partial::Step::Complete) return cp;
      state = next;
    }
  }

  uint32_t parse_hex(int digits) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const int d = hex_value(peek());
      if (d < 0) fail("expected " + std::to_string(digits) + " hexadecimal digits in the escape");
      value = value << 4 | static_cast<uint32_t>(d);
      ++pos_;
    }
    if (value > kMaxCodepoint) fail("an escape past U+10FFFF");
    return value;
  }

  std::string_view text_;
  size_t pos_ = 0;
  GrammarBuilder builder_;
  GrammarLimits limits_;
  uint32_t current_rule_ = 0;
  int depth_ = 0;
  mutable size_t counted_to_ = 0;  // location(): the text before this is counted in counted_
  mutable TextLocation counted_;
};

}  // namespace

std::shared_ptr<const Grammar> parse_gbnf(std::string_view text, const GrammarLimits& limits) {
  return Parser(text, limits).parse();
}

}  // namespace kiln::grammar
