#include "engine/chat/string_ops.hpp"

#include <algorithm>
#include <cwctype>
#include <locale.h>

#include "engine/chat/value.hpp"
#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln::chat {

namespace {

struct CodePoints {
  std::vector<size_t> offsets;  // offsets[i]: byte where code point i starts; back(): size
  std::vector<char32_t> chars;
};

CodePoints decode(const std::string& s) {
  CodePoints cp;
  cp.offsets = code_point_offsets(s);
  for (size_t i = 0; i + 1 < cp.offsets.size(); ++i)
    cp.chars.push_back(next_utf8_unit(std::string_view(s).substr(cp.offsets[i])).code_point);
  return cp;
}

std::vector<char32_t> decode_chars(const std::string& s) { return decode(s).chars; }

// Simple one-to-one case mappings from the C library's Unicode tables (its
// C.UTF-8 locale, without changing the program's locale); ASCII only if that
// locale is missing.
locale_t utf8_locale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  return locale;
}

char32_t to_upper(char32_t c) {
  if (utf8_locale()) return static_cast<char32_t>(towupper_l(static_cast<wint_t>(c), utf8_locale()));
  return c >= 'a' && c <= 'z' ? c - 32 : c;
}

char32_t to_lower(char32_t c) {
  if (utf8_locale()) return static_cast<char32_t>(towlower_l(static_cast<wint_t>(c), utf8_locale()));
  return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

// The characters Python upper-cases into more than one (its full case
// mapping, SpecialCasing.txt); the C library maps one to one.
std::u32string_view upper_expansion(char32_t c) {
  switch (c) {
    case U'\u00DF': return U"SS";
    case U'\uFB00': return U"FF";
    case U'\uFB01': return U"FI";
    case U'\uFB02': return U"FL";
    case U'\uFB03': return U"FFI";
    case U'\uFB04': return U"FFL";
    case U'\uFB05':
    case U'\uFB06': return U"ST";
    case U'\u0149': return U"\u02BCN";
    default: return {};
  }
}

template <class Map>
Text map_chars(const Text& s, Map map, bool upper_case = false) {
  std::string out;
  const CodePoints cp = decode(s.str());
  for (size_t i = 0; i < cp.chars.size(); ++i) {
    const char32_t c = map(i, cp.chars);
    if (upper_case && c == cp.chars[i] && !upper_expansion(c).empty()) {
      for (char32_t x : upper_expansion(c)) append_utf8(x, out);
    } else if (c == cp.chars[i]) {
      out.append(s.str(), cp.offsets[i], cp.offsets[i + 1] - cp.offsets[i]);
    } else {
      append_utf8(c, out);
    }
  }
  return Text::derived(std::move(out), s);
}

}  // namespace

bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

Text strip(const Text& s, const std::optional<std::string>& chars, bool left, bool right) {
  const CodePoints cp = decode(s.str());
  const std::vector<char32_t> set = chars ? decode_chars(*chars) : std::vector<char32_t>{};
  const auto strippable = [&](char32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : is_python_space(c);
  };
  size_t begin = 0, end = cp.chars.size();
  while (left && begin < end && strippable(cp.chars[begin])) ++begin;
  while (right && end > begin && strippable(cp.chars[end - 1])) --end;
  return s.substr(cp.offsets[begin], cp.offsets[end] - cp.offsets[begin]);
}

std::vector<Text> split(const Text& s, const std::optional<std::string>& sep, long long maxsplit) {
  std::vector<Text> parts;
  const auto add = [&parts](Text part) {
    check_list_size(parts.size() + 1);
    parts.push_back(std::move(part));
  };
  const std::string& str = s.str();
  if (sep) {
    if (sep->empty()) throw ValueError("empty separator");
    size_t start = 0;
    for (size_t found; (maxsplit < 0 || static_cast<long long>(parts.size()) < maxsplit) &&
                       (found = str.find(*sep, start)) != std::string::npos;) {
      add(s.substr(start, found - start));
      start = found + sep->size();
    }
    add(s.substr(start));
    return parts;
  }
  const CodePoints cp = decode(str);
  size_t i = 0;
  const size_t n = cp.chars.size();
  while (true) {
    while (i < n && is_python_space(cp.chars[i])) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<long long>(parts.size()) == maxsplit) {
      size_t end = n;  // the rest, without trailing whitespace
      while (end > i && is_python_space(cp.chars[end - 1])) --end;
      add(s.substr(cp.offsets[i], cp.offsets[end] - cp.offsets[i]));
      break;
    }
    const size_t start = i;
    while (i < n && !is_python_space(cp.chars[i])) ++i;
    add(s.substr(cp.offsets[start], cp.offsets[i] - cp.offsets[start]));
  }
  return parts;
}

Text replace(const Text& s, const std::string& old_text, const Text& new_text, long long count) {
  Text out;
  const std::string& str = s.str();
  if (old_text.empty()) {  // Python inserts `new` before every character and at the end
    const std::vector<size_t> offsets = code_point_offsets(str);
    long long done = 0;
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      if (count < 0 || done < count) {
        out.append(new_text);
        ++done;
      }
      out.append(s.substr(offsets[i], offsets[i + 1] - offsets[i]));
    }
    if (count < 0 || done < count) out.append(new_text);
    return out;
  }
  size_t start = 0;
  long long done = 0;
  for (size_t found; (count < 0 || done < count) && (found = str.find(old_text, start)) != std::string::npos; ++done) {
    out.append(s.substr(start, found - start));
    out.append(new_text);
    start = found + old_text.size();
  }
  out.append(s.substr(start));
  return out;
}

std::vector<size_t> slice_indices(size_t n, std::optional<long long> start, std::optional<long long> stop, long long step) {
  if (step == 0) throw ValueError("slice step cannot be zero");
  const long long len = static_cast<long long>(n);
  const auto clamp = [&](std::optional<long long> v, long long dflt) {
    if (!v) return dflt;
    long long x = *v < 0 ? *v + len : *v;
    if (step > 0) return std::clamp(x, 0LL, len);
    return std::clamp(x, -1LL, len - 1);
  };
  const long long b = clamp(start, step > 0 ? 0 : len - 1);
  const long long e = clamp(stop, step > 0 ? len : -1);
  std::vector<size_t> idx;
  for (long long i = b; step > 0 ? i < e : i > e; i += step) idx.push_back(static_cast<size_t>(i));
  return idx;
}

Text slice(const Text& s, std::optional<long long> start, std::optional<long long> stop, long long step) {
  const std::vector<size_t> offsets = code_point_offsets(s.str());
  Text out;
  for (size_t i : slice_indices(offsets.size() - 1, start, stop, step))
    out.append(s.substr(offsets[i], offsets[i + 1] - offsets[i]));
  return out;
}

size_t length(const Text& s) { return code_point_offsets(s.str()).size() - 1; }

Text upper(const Text& s) {
  return map_chars(s, [](size_t i, const std::vector<char32_t>& c) { return to_upper(c[i]); }, true);
}

Text lower(const Text& s) {
  return map_chars(s, [](size_t i, const std::vector<char32_t>& c) { return to_lower(c[i]); });
}

Text capitalize(const Text& s) {
  return map_chars(s, [](size_t i, const std::vector<char32_t>& c) { return i == 0 ? to_upper(c[i]) : to_lower(c[i]); });
}

Text title(const Text& s) {
  // Jinja's title filter: a word starts after whitespace or one of "-({[<".
  return map_chars(s, [](size_t i, const std::vector<char32_t>& c) {
    const bool starts_word = i == 0 || is_python_space(c[i - 1]) || std::u32string_view(U"-({[<").find(c[i - 1]) !=
                                                                           std::u32string_view::npos;
    return starts_word ? to_upper(c[i]) : to_lower(c[i]);
  });
}

}  // namespace kiln::chat
