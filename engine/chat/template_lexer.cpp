#include "engine/chat/template_lexer.hpp"

#include <algorithm>
#include <charconv>

#include "engine/error/error.hpp"
#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln::chat {

namespace {

// Longer tags are refused: the renderer's recursion grows with an expression's
// length (a + b + c + ...), and no real template comes near this.
constexpr size_t kMaxTokensPerTag = 2000;
// Longer templates are refused: real ones take a few kilobytes, and a
// template's tokens take some tens of times its bytes.
constexpr size_t kMaxTemplateBytes = size_t{1} << 20;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Jinja (3.x) reads "\r\n", "\r" and "\n" as line breaks and writes "\n",
// and drops one newline at the very end.
std::string normalize_newlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  Lexer(std::string source, const std::string& name) : src_(std::move(source)), name_(name) {
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    bool line_starting = true;
    size_t pos = 0;
    while (pos < src_.size()) {
      const size_t start = next_tag(pos);
      std::string text = src_.substr(pos, start - pos);
      if (start == src_.size()) {
        emit_text(std::move(text), pos);
        break;
      }
      const char kind = src_[start + 1];  // '{', '%' or '#'
      const char sign = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (sign == '-') {
        text.erase(std::find_if(text.rbegin(), text.rend(), [](char c) { return !is_space(c); }).base(), text.end());
      } else if (kind != '{' && sign != '+') {
        // lstrip_blocks: only spaces between the start of the line and the tag.
        const size_t line_start = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if ((line_start > 0 || line_starting) &&
            std::all_of(text.begin() + static_cast<std::ptrdiff_t>(line_start), text.end(), is_space)) {
          text.resize(line_start);
        }
      }
      emit_text(std::move(text), pos);
      const size_t body = start + 2 + ((sign == '-' || (sign == '+' && kind != '{')) ? 1 : 0);
      size_t end;   // just past the closing marker
      char end_sign;
      if (kind == '#') {
        const size_t close = src_.find("#}", body);
        if (close == std::string::npos) fail(start, "unterminated comment");
        end_sign = close > body && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : '\0';
        end = close + 2;
      } else if (kind == '%' && is_raw_tag(body)) {
        end = raw_block(start, body, end_sign);
      } else {
        tokens_.push_back({kind == '{' ? TokenKind::VarBegin : TokenKind::BlockBegin, "", position(start)});
        end = expression(body, kind, end_sign);
      }
      pos = end;
      line_starting = false;
      if (end_sign == '-') {
        while (pos < src_.size() && is_space(src_[pos])) ++pos;
        line_starting = pos > end && src_[pos - 1] == '\n';
      } else if (kind != '{' && end_sign != '+' && pos < src_.size() && src_[pos] == '\n') {
        ++pos;  // trim_blocks
        line_starting = true;
      }
    }
    tokens_.push_back({TokenKind::End, "", position(src_.size())});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    const SourcePos p = position(at);
    throw Error(name_ + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": " + what);
  }

  // Counts characters from the position asked for last when `at` is further
  // on the same line (the lexer mostly moves forward), so that lexing a long
  // line takes time in proportion to it, not to its square.
  SourcePos position(size_t at) const {
    at = std::min(at, src_.size());
    const size_t line = static_cast<size_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), at) - line_starts_.begin());
    const bool onward = at >= last_at_ && static_cast<size_t>(last_.line) == line;
    SourcePos p = onward ? last_ : SourcePos{static_cast<int>(line), 1};
    for (size_t i = onward ? last_at_ : line_starts_[line - 1]; i < at; ++i)
      if ((static_cast<unsigned char>(src_[i]) & 0xC0) != 0x80) ++p.column;  // count characters, not bytes
    last_at_ = at;
    last_ = p;
    return p;
  }

  size_t next_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return src_.size();
  }

  void emit_text(std::string text, size_t at) {
    if (!text.empty()) tokens_.push_back({TokenKind::Text, std::move(text), position(at)});
  }

  // "{% raw %}": everything up to "{% endraw %}" is text.
  bool is_raw_tag(size_t body) const {
    size_t i = body;
    while (i < src_.size() && is_space(src_[i])) ++i;
    if (src_.compare(i, 3, "raw") != 0) return false;
    i += 3;
    while (i < src_.size() && is_space(src_[i])) ++i;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
    return src_.compare(i, 2, "%}") == 0;
  }

  size_t raw_block(size_t start, size_t body, char& end_sign) {
    const size_t open_end = src_.find("%}", body) + 2;
    for (size_t i = src_.find("{%", open_end); i != std::string::npos; i = src_.find("{%", i + 2)) {
      size_t j = i + 2;
      const bool strip_before = j < src_.size() && src_[j] == '-';
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) ++j;
      while (j < src_.size() && is_space(src_[j])) ++j;
      if (src_.compare(j, 6, "endraw") != 0) continue;
      j += 6;
      while (j < src_.size() && is_space(src_[j])) ++j;
      end_sign = j < src_.size() && (src_[j] == '-' || src_[j] == '+') ? src_[j] : '\0';
      if (end_sign) ++j;
      if (src_.compare(j, 2, "%}") != 0) continue;
      std::string text = src_.substr(open_end, i - open_end);
      if (strip_before)
        text.erase(std::find_if(text.rbegin(), text.rend(), [](char c) { return !is_space(c); }).base(), text.end());
      emit_text(std::move(text), open_end);
      return j + 2;
    }
    fail(start, "unterminated raw block (no {% endraw %})");
  }

  // Tokens of a {{ ... }} or {% ... %} up to its closing marker; returns the
  // position after it.
  size_t expression(size_t pos, char kind, char& end_sign) {
    std::vector<char> open;  // brackets not yet closed: the closing marker does not count inside them
    const std::string close = kind == '{' ? "}}" : "%}";
    const size_t first_token = tokens_.size();
    while (true) {
      if (tokens_.size() - first_token > kMaxTokensPerTag)
        fail(pos, "tag longer than " + std::to_string(kMaxTokensPerTag) + " tokens");
      while (pos < src_.size() && is_space(src_[pos])) ++pos;
      if (pos >= src_.size()) fail(pos, std::string("unexpected end of template: missing '") + close + "'");
      if (open.empty()) {
        end_sign = '\0';
        size_t at = pos;
        if ((src_[at] == '-' || (src_[at] == '+' && kind == '%')) && src_.compare(at + 1, 2, close) == 0) {
          end_sign = src_[at];
          ++at;
        }
        if (src_.compare(at, 2, close) == 0) {
          tokens_.push_back({kind == '{' ? TokenKind::VarEnd : TokenKind::BlockEnd, "", position(pos)});
          return at + 2;
        }
      }
      const char c = src_[pos];
      if (is_digit(c)) {
        pos = number(pos);
      } else if (is_name_start(c)) {
        const size_t start = pos;
        while (pos < src_.size() && is_name_char(src_[pos])) ++pos;
        tokens_.push_back({TokenKind::Name, src_.substr(start, pos - start), position(start)});
      } else if (c == '\'' || c == '"') {
        pos = string_literal(pos);
      } else {
        pos = operator_token(pos, open);
      }
    }
  }

  size_t number(size_t start) {
    size_t pos = start;
    const auto digits = [&] {
      while (pos < src_.size() && (is_digit(src_[pos]) || (src_[pos] == '_' && pos + 1 < src_.size() && is_digit(src_[pos + 1]))))
        ++pos;
    };
    digits();
    bool is_float = false;
    if (pos + 1 < src_.size() && src_[pos] == '.' && is_digit(src_[pos + 1])) {
      is_float = true;
      ++pos;
      digits();
    }
    if (pos < src_.size() && (src_[pos] == 'e' || src_[pos] == 'E')) {
      size_t e = pos + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
      if (e < src_.size() && is_digit(src_[e])) {
        is_float = true;
        pos = e;
        digits();
      }
    }
    std::string text = src_.substr(start, pos - start);
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    Token t{is_float ? TokenKind::Float : TokenKind::Integer, text, position(start)};
    const char* b = text.data();
    const char* e = text.data() + text.size();
    const bool ok = is_float ? std::from_chars(b, e, t.number).ec == std::errc()
                             : std::from_chars(b, e, t.integer).ec == std::errc();
    if (!ok) fail(start, "number '" + text + "' is out of range");
    tokens_.push_back(std::move(t));
    return pos;
  }

  // A Python string literal with its escapes decoded.
  size_t string_literal(size_t start) {
    const char quote = src_[start];
    std::string out;
    size_t pos = start + 1;
    while (true) {
      if (pos >= src_.size()) fail(start, "unterminated string");
      const char c = src_[pos];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      if (pos + 1 >= src_.size()) fail(start, "unterminated string");
      const char e = src_[pos + 1];
      pos += 2;
      switch (e) {
        case '\n': break;  // a backslash at the end of a line continues it
        case '\\': out += '\\'; break;
        case '"': out += '"'; break;
        case '\'': out += '\''; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x': pos = hex_escape(pos, 2, out); break;
        case 'u': pos = hex_escape(pos, 4, out); break;
        case 'U': pos = hex_escape(pos, 8, out); break;
        case 'N': fail(pos - 2, "\\N{...} escapes are not supported");
        default:
          if (e >= '0' && e <= '7') {
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && pos < src_.size() && src_[pos] >= '0' && src_[pos] <= '7'; ++k, ++pos)
              v = v * 8 + static_cast<uint32_t>(src_[pos] - '0');
            append_utf8(v, out);
          } else {
            out += '\\';  // Python keeps unknown escapes as they are
            out += e;
          }
      }
    }
    tokens_.push_back({TokenKind::String, std::move(out), position(start)});
    return pos + 1;
  }

  size_t hex_escape(size_t pos, int n, std::string& out) {
    uint32_t v = 0;
    const auto r = std::from_chars(src_.data() + pos, src_.data() + std::min(src_.size(), pos + n), v, 16);
    if (r.ptr != src_.data() + pos + n) fail(pos - 2, "truncated \\x, \\u or \\U escape");
    if (v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) fail(pos - 2, "escape names no character");
    append_utf8(v, out);
    return pos + static_cast<size_t>(n);
  }

  size_t operator_token(size_t pos, std::vector<char>& open) {
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
    static constexpr std::string_view kOne = "+-*/%~<>=()[]{},.:|";
    for (std::string_view op : kTwo) {
      if (src_.compare(pos, 2, op) == 0) {
        tokens_.push_back({TokenKind::Operator, std::string(op), position(pos)});
        return pos + 2;
      }
    }
    const char c = src_[pos];
    if (kOne.find(c) == std::string_view::npos) fail(pos, std::string("unexpected character '") + c + "'");
    if (c == '(' || c == '[' || c == '{') open.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (open.empty()) fail(pos, std::string("unexpected '") + c + "'");
      if (open.back() != c) fail(pos, std::string("unexpected '") + c + "', expected '" + open.back() + "'");
      open.pop_back();
    }
    tokens_.push_back({TokenKind::Operator, std::string(1, c), position(pos)});
    return pos + 1;
  }

  std::string src_;
  std::string name_;
  std::vector<size_t> line_starts_{0};  // byte offset of each line
  std::vector<Token> tokens_;
  mutable size_t last_at_ = 0;  // the last position asked for, and where it is
  mutable SourcePos last_{1, 1};
};

}  // namespace

std::vector<Token> lex_template(std::string_view source, const std::string& name) {
  if (source.size() > kMaxTemplateBytes)
    throw Error(name + ": the template is " + std::to_string(source.size()) + " bytes, longer than " +
                std::to_string(kMaxTemplateBytes >> 20) + " MiB (the renderer's limit)");
  return Lexer(normalize_newlines(source), name).run();
}

}  // namespace kiln::chat
