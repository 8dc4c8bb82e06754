// Integer and number ranges as digit patterns: the numbers between two
// bounds are split by their count of digits, and each group of one length
// by the first digit where its bounds differ, down to classes of digits.
#include <string>
#include <vector>

#include "engine/grammar/json_schema_parts.hpp"

namespace kiln::grammar::schema {

namespace {

std::string join(const std::vector<std::string>& alternatives) {
  if (alternatives.empty()) return "[]";  // nothing is in the range
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
  return out + ")";
}

std::string digit_class(char lo, char hi) {
  if (lo == hi) return literal(std::string(1, lo));
  std::string out = "[0-0]";
  out[1] = lo;
  out[3] = hi;
  return out;
}

std::string any_digits(size_t n) { return n == 0 ? "" : n == 1 ? "[0-9]" : "[0-9]{" + std::to_string(n) + "}"; }

// Digit strings of one length from lo to hi (lo <= hi, same length).
void same_length(const std::string& lo, const std::string& hi, const std::string& prefix, std::vector<std::string>& out) {
  if (lo == hi) {
    out.push_back(literal(prefix + lo));
    return;
  }
  size_t k = 0;
  while (lo[k] == hi[k]) ++k;
  const std::string head = prefix + lo.substr(0, k);
  const size_t rest = lo.size() - k - 1;
  const std::string lo_tail = lo.substr(k + 1);
  const std::string hi_tail = hi.substr(k + 1);
  char first = lo[k];
  char last = hi[k];
  const auto glue = [](const std::string& a, const std::string& b) { return b.empty() ? a : a + " " + b; };
  if (lo_tail.find_first_not_of('0') != std::string::npos) {
    std::vector<std::string> tails;
    same_length(lo_tail, std::string(rest, '9'), "", tails);
    out.push_back(glue(literal(head + lo[k]), join(tails)));
    ++first;
  }
  std::string high;
  if (hi_tail.find_first_not_of('9') != std::string::npos) {
    std::vector<std::string> tails;
    same_length(std::string(rest, '0'), hi_tail, "", tails);
    high = glue(literal(head + hi[k]), join(tails));
    --last;
  }
  if (first <= last) {
    const std::string middle = digit_class(first, last);
    out.push_back(glue(head.empty() ? middle : literal(head) + " " + middle, any_digits(rest)));
  }
  if (!high.empty()) out.push_back(high);
}

// Non-negative integers from lo to hi (none: unbounded), without leading zeros.
void nonnegative(uint64_t lo, std::optional<uint64_t> hi, std::vector<std::string>& out) {
  const size_t lo_digits = std::to_string(lo).size();
  const size_t hi_digits = hi ? std::to_string(*hi).size() : lo_digits;
  uint64_t power = 1;  // 10^(length - 1)
  for (size_t i = 1; i < lo_digits; ++i) power *= 10;
  for (size_t length = lo_digits; length <= hi_digits; ++length, power *= 10) {
    const uint64_t first = std::max(lo, length == 1 ? 0 : power);
    const uint64_t last = hi ? std::min(*hi, power * 10 - 1) : power * 10 - 1;
    if (first <= last) same_length(std::to_string(first), std::to_string(last), "", out);
  }
  if (!hi) out.push_back("[1-9] " + any_digits(lo_digits) + " [0-9]*");
}

// A fraction part: any, or only zeros (for a number equal to its bound).
const char* kAnyFraction = "(\".\" [0-9]+)?";
const char* kZeroFraction = "(\".\" \"0\"+)?";

// Numbers whose magnitude is from lo to hi (none: unbounded), integer bounds.
void magnitudes(uint64_t lo, std::optional<uint64_t> hi, const std::string& sign, std::vector<std::string>& out) {
  const std::string pre = sign.empty() ? "" : literal(sign) + " ";
  if (!hi || *hi > lo) {
    std::vector<std::string> below;
    nonnegative(lo, hi ? std::optional<uint64_t>(*hi - 1) : std::nullopt, below);
    out.push_back(pre + join(below) + " " + kAnyFraction);
  }
  if (hi) out.push_back(pre + literal(std::to_string(*hi)) + " " + kZeroFraction);
}

// Splits [lo, hi] at zero: negative values are "-" and a magnitude.
template <class Part>
std::string signed_range(std::optional<int64_t> lo, std::optional<int64_t> hi, bool zero_is_negative, Part part) {
  std::vector<std::string> out;
  const auto magnitude = [](int64_t v) { return v < 0 ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); };
  if (!lo || *lo < 0) {
    // Negative values v: -v from max(1, -hi) (0 for numbers, "-0.5") to -lo.
    const uint64_t from = hi && *hi < 0 ? magnitude(*hi) : zero_is_negative ? 0 : 1;
    part(from, lo ? std::optional<uint64_t>(magnitude(*lo)) : std::nullopt, "-", out);
  }
  if (!hi || *hi >= 0) part(lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0, hi ? std::optional<uint64_t>(*hi) : std::nullopt, "", out);
  return join(out);
}

}  // namespace

std::string integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  if (lo && hi && *lo > *hi) return "[]";
  return signed_range(lo, hi, false, [](uint64_t from, std::optional<uint64_t> to, const std::string& sign,
                                        std::vector<std::string>& out) {
    std::vector<std::string> digits;
    nonnegative(from, to, digits);
    out.push_back(sign.empty() ? join(digits) : literal(sign) + " " + join(digits));
  });
}

std::string number_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  if (lo && hi && *lo > *hi) return "[]";
  // A negative number's magnitude can be below 1 ("-0.5"), so from 0, with
  // "-0" and "-0.0" only when 0 is in the range.
  return signed_range(lo, hi, true, magnitudes);
}

}  // namespace kiln::grammar::schema
