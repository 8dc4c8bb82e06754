// Python's str methods on chat::Text, by code point, keeping the marks of
// user content on every byte that comes from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/chat/text.hpp"

namespace kiln::chat {

// str.isspace() for one code point.
bool is_python_space(char32_t c);

// strip / lstrip / rstrip: `chars` absent means whitespace.
Text strip(const Text& s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit) (sep absent: runs of whitespace, no empty parts).
std::vector<Text> split(const Text& s, const std::optional<std::string>& sep, long long maxsplit);
// str.replace(old, new, count); count < 0 is all.
Text replace(const Text& s, const std::string& old_text, const Text& new_text, long long count);
// Python's slice s[start:stop:step] over code points (absent parts: defaults).
Text slice(const Text& s, std::optional<long long> start, std::optional<long long> stop, long long step);
// Number of code points.
size_t length(const Text& s);

// Case changes, as Python's str.upper / lower / capitalize and Jinja's title filter.
Text upper(const Text& s);
Text lower(const Text& s);
Text capitalize(const Text& s);
Text title(const Text& s);

// The indices Python's slice(start, stop, step).indices(n) walks.
std::vector<size_t> slice_indices(size_t n, std::optional<long long> start, std::optional<long long> stop, long long step);

}  // namespace kiln::chat
