#include "tests/support/json_schema_check.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

namespace kiln::test {

namespace {

using Json = nlohmann::ordered_json;

bool valid_date(const std::string& s) {
  static const std::regex shape(R"(\d{4}-(\d\d)-(\d\d))");
  std::smatch m;
  if (!std::regex_match(s, m, shape)) return false;
  const int month = std::stoi(m[1]);
  const int day = std::stoi(m[2]);
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month >= 1 && month <= 12 && day >= 1 && day <= days[month - 1];
}

bool valid_format(const std::string& format, const std::string& s) {
  static const std::regex time(R"(([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))");
  static const std::regex uuid(R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})");
  if (format == "date") return valid_date(s);
  if (format == "time") return std::regex_match(s, time);
  if (format == "date-time") {
    const size_t t = s.find('T');
    return t != std::string::npos && valid_date(s.substr(0, t)) && std::regex_match(s.substr(t + 1), time);
  }
  if (format == "uuid") return std::regex_match(s, uuid);
  return false;
}

bool valid(const Json& s, const Json& v, const Json& root) {
  if (s.is_boolean()) return s.get<bool>();
  if (s.contains("$ref")) return valid(root.at(Json::json_pointer(s["$ref"].get<std::string>().substr(1))), v, root);
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!s.contains(key)) continue;
    for (const Json& option : s[key]) {
      if (valid(option, v, root)) return true;
    }
    return false;
  }
  if (s.contains("const") && v != s["const"]) return false;
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) return false;
  if (s.contains("type")) {
    std::vector<std::string> types;
    if (s["type"].is_string()) types.push_back(s["type"]);
    else for (const Json& t : s["type"]) types.push_back(t);
    bool any = false;
    for (const std::string& t : types) {
      any = any || (t == "null" && v.is_null()) || (t == "boolean" && v.is_boolean()) || (t == "string" && v.is_string()) ||
            (t == "number" && v.is_number()) || (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
            (t == "integer" && v.is_number() && std::floor(v.get<double>()) == v.get<double>());
    }
    if (!any) return false;
  }
  if (v.is_string()) {
    const std::string text = v;
    size_t length = 0;  // in code points
    for (const char c : text) length += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (s.contains("minLength") && length < s["minLength"].get<size_t>()) return false;
    if (s.contains("maxLength") && length > s["maxLength"].get<size_t>()) return false;
    if (s.contains("pattern") && !std::regex_search(text, std::regex(s["pattern"].get<std::string>()))) return false;
    if (s.contains("format") && !valid_format(s["format"], text)) return false;
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return false;
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return false;
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return false;
    if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return false;
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return false;
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return false;
    for (const Json& item : v) {
      if (s.contains("items") && !valid(s["items"], item, root)) return false;
    }
  }
  if (v.is_object()) {
    const Json props = s.value("properties", Json::object());
    for (const Json& r : s.value("required", Json::array())) {
      if (!v.contains(r.get<std::string>())) return false;
    }
    const Json additional = s.value("additionalProperties", Json(false));
    for (const auto& [key, value] : v.items()) {
      if (props.contains(key) ? !valid(props[key], value, root) : !valid(additional, value, root)) return false;
    }
  }
  return true;
}

}  // namespace

bool satisfies(const nlohmann::ordered_json& schema, const nlohmann::ordered_json& value) {
  return valid(schema, value, schema);
}

}  // namespace kiln::test
