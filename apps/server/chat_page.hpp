// The chat page the server answers GET / with (chat_page.html, built into the
// program as text by chat_page.cpp.in), so a person can talk to the model
// with a browser and nothing else.
#pragma once

#include <string_view>

namespace kiln {

std::string_view chat_page();

}  // namespace kiln
