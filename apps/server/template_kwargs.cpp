#include "apps/server/template_kwargs.hpp"

#include "engine/error/error.hpp"
#include "apps/server/request_fields.hpp"

namespace kiln {

namespace {

RequestJson object_or_empty(const std::string& text) { return text.empty() ? RequestJson::object() : RequestJson::parse(text); }

std::string text_or_empty(const RequestJson& object) { return object.empty() ? "" : object.dump(); }

}  // namespace

std::string server_template_kwargs(const std::string& flag, int reasoning_budget) {
  RequestJson kwargs = RequestJson::object();
  if (reasoning_budget == 0) kwargs["enable_thinking"] = false;
  if (flag.empty()) return text_or_empty(kwargs);
  RequestJson given;
  try {
    given = RequestJson::parse(flag);
  } catch (const RequestJson::exception& e) {
    throw Error("--chat-template-kwargs: not JSON: " + std::string(e.what()));
  }
  if (!given.is_object()) throw Error("--chat-template-kwargs: must be a JSON object, e.g. '{\"enable_thinking\": false}'");
  kwargs.update(given);
  return text_or_empty(kwargs);
}

std::string merged_template_kwargs(const std::string& server, const std::string& request) {
  RequestJson kwargs = object_or_empty(server);
  kwargs.update(object_or_empty(request));
  return text_or_empty(kwargs);
}

}  // namespace kiln
