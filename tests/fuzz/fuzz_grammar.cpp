// libFuzzer target for constrained decoding's two parsers: the input is GBNF
// text, or with KILN_FUZZ_JSON_SCHEMA a JSON schema converted to GBNF and
// parsed. A grammar that parses is then matched against the input's own
// bytes, so the matcher and its limits run on hostile grammars too.
// Anything refused must be a kiln::Error; a crash, a sanitizer report or
// another exception is a bug.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/error/error.hpp"
#include "engine/grammar/grammar.hpp"
#include "engine/grammar/json_schema.hpp"
#include "engine/grammar/matcher.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
#ifdef KILN_FUZZ_JSON_SCHEMA
    const auto grammar = kiln::grammar::parse_gbnf(kiln::grammar::json_schema_to_gbnf(text));
#else
    const auto grammar = kiln::grammar::parse_gbnf(text);
#endif
    kiln::grammar::Matcher m(grammar);
    for (size_t i = 0; i < size && i < 512; ++i) {
      if (!m.accept(text.substr(i, 1))) break;
    }
    (void)m.can_end();
  } catch (const kiln::Error&) {
  }
  return 0;
}
