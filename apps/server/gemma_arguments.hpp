// Gemma 4's tool-call values: JSON's shapes in its own spelling, as its chat
// template writes them (format_argument): strings between <|"|> marks, keys
// bare, no spaces: {city:<|"|>Paris<|"|>,days:2,tags:[<|"|>a<|"|>]}.
#pragma once

#include <optional>
#include <string_view>

#include "apps/server/request_fields.hpp"

namespace kiln {

// The string mark of Gemma 4's values.
inline constexpr std::string_view kGemmaQuote = "<|\"|>";

// Reads one value at text[at] and moves `at` past it; nullopt if it is not one.
std::optional<RequestJson> read_gemma_value(std::string_view text, size_t& at);

}  // namespace kiln
