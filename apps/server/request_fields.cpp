#include "apps/server/request_fields.hpp"

#include "apps/server/openai_request.hpp"

namespace kiln {

void reject(const std::string& param, const std::string& rule) {
  throw RequestError(400, "'" + param + "' " + rule, param);
}

const RequestJson* field(const RequestJson& body, const char* key) {
  const auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::string string_field(const RequestJson& v, const std::string& name) {
  if (!v.is_string()) reject(name, "must be a string");
  return v.get<std::string>();
}

}  // namespace kiln
