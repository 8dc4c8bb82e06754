// JSON schema -> GBNF: one rule per schema node, named after where it is
// ("root-address-city"), one per $ref target (so recursive schemas are
// recursive rules), and the shared rules of json_schema_text.cpp.
#include "engine/grammar/json_schema.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "engine/error/error.hpp"
#include "engine/grammar/json_schema_parts.hpp"

namespace kiln::grammar {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDepth = 64;
// Bounds must be integers a double holds exactly.
constexpr double kMaxBound = 9007199254740992.0;  // 2^53

const std::set<std::string> kAnnotations = {"title", "description", "examples", "default", "$schema", "$id",
                                            "$comment", "deprecated", "readOnly", "writeOnly", "$anchor"};
const std::set<std::string> kObjectKeywords = {"properties", "required", "additionalProperties"};
const std::set<std::string> kArrayKeywords = {"items", "minItems", "maxItems"};
const std::set<std::string> kStringKeywords = {"minLength", "maxLength", "pattern", "format"};
const std::set<std::string> kNumberKeywords = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
const std::set<std::string> kOtherKeywords = {"type", "enum", "const", "anyOf", "oneOf", "$ref", "$defs", "definitions",
                                              "nullable"};

std::string join(const std::vector<std::string>& alternatives) {
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
  return out + ")";
}

// The JSON type names a value has ("integer" values are "number"s too).
bool has_type(const Json& v, const std::string& type) {
  if (type == "number") return v.is_number();
  if (type == "integer") return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return false;
}

class Converter {
 public:
  Converter(const Json& root, std::string prefix) : root_(root), prefix_(std::move(prefix)) {}

  SchemaRules convert() {
    SchemaRules out;
    out.start = visit(root_, "root", "", 0);
    for (const auto& [name, body] : rules_) out.rules += name + " ::= " + body + "\n";
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw Error("JSON schema at " + (path.empty() ? std::string("/") : path) + ": " + what);
  }

  std::string unique_name(const std::string& hint) {
    std::string name = prefix_;
    for (const char c : hint) {
      const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      name += word ? c : '-';
    }
    const int n = used_names_[name]++;
    return n == 0 ? name : name + "-" + std::to_string(n);
  }

  // A rule for the schema; its name.
  std::string visit(const Json& schema, const std::string& name_hint, const std::string& path, int depth) {
    if (depth > kMaxDepth) fail(path, "nested deeper than " + std::to_string(kMaxDepth));
    const std::string name = unique_name(name_hint == "root" ? "root-value" : name_hint);
    rules_[name] = expression(schema, name, path, depth);
    return name;
  }

  std::string expression(const Json& schema, const std::string& name, const std::string& path, int depth) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(path, "the schema false allows nothing");
      return "value";
    }
    if (!schema.is_object()) fail(path, "a schema must be an object or a boolean");
    std::set<std::string> groups;  // the types the keywords present are for
    for (const auto& [key, value] : schema.items()) {
      if (kAnnotations.count(key) || kOtherKeywords.count(key)) continue;
      if (kObjectKeywords.count(key)) groups.insert("object");
      else if (kArrayKeywords.count(key)) groups.insert("array");
      else if (kStringKeywords.count(key)) groups.insert("string");
      else if (kNumberKeywords.count(key)) groups.insert("number");
      else fail(path, "unsupported keyword '" + key + "'");
    }
    if (schema.contains("$ref")) return reference(schema, path, depth);
    if (schema.contains("anyOf") || schema.contains("oneOf")) return any_of(schema, name, path, depth);

    std::vector<std::string> types;
    if (schema.contains("type")) {
      const Json& type = schema["type"];
      if (type.is_string()) types.push_back(type.get<std::string>());
      else if (type.is_array() && !type.empty())
        for (const Json& t : type) types.push_back(t.is_string() ? t.get<std::string>() : "");
      else fail(path, "'type' must be a string or a list of strings");
    } else if (groups.size() > 1) {
      fail(path, "keywords for several types and no 'type'");
    } else if (groups.size() == 1) {
      types.push_back(*groups.begin());
    }
    if (schema.value("nullable", false)) types.push_back("null");

    if (schema.contains("const")) return enumeration(Json::array({schema["const"]}), types, path);
    if (schema.contains("enum")) {
      if (!schema["enum"].is_array()) fail(path, "'enum' must be a list");
      return enumeration(schema["enum"], types, path);
    }
    if (types.empty()) return "value";
    std::vector<std::string> alternatives;
    for (const std::string& type : types) alternatives.push_back(typed(schema, type, name, path, depth));
    return join(alternatives);
  }

  std::string typed(const Json& schema, const std::string& type, const std::string& name, const std::string& path,
                    int depth) {
    if (type == "null" || type == "boolean") return type;
    if (type == "string") return string(schema, path);
    if (type == "integer") return integer(schema, path);
    if (type == "number") return number(schema, path);
    if (type == "object") return object(schema, name, path, depth);
    if (type == "array") return array(schema, name, path, depth);
    fail(path, "unknown type '" + type + "'");
  }

  std::string enumeration(const Json& values, const std::vector<std::string>& types, const std::string& path) {
    std::vector<std::string> alternatives;
    for (const Json& v : values) {
      bool typed_ok = types.empty();
      for (const std::string& t : types) typed_ok = typed_ok || has_type(v, t);
      if (typed_ok) alternatives.push_back(schema::literal(v.dump()));
    }
    if (alternatives.empty()) fail(path, "no value of 'enum' or 'const' has the schema's type");
    return join(alternatives);
  }

  std::string reference(const Json& schema, const std::string& path, int depth) {
    for (const auto& [key, value] : schema.items()) {
      if (key != "$ref" && key != "$defs" && key != "definitions" && !kAnnotations.count(key))
        fail(path, "'$ref' with '" + key + "' beside it");
    }
    if (!schema["$ref"].is_string()) fail(path, "'$ref' must be a string");
    const std::string ref = schema["$ref"].get<std::string>();
    if (const auto it = refs_.find(ref); it != refs_.end()) return it->second;
    if (ref.empty() || ref[0] != '#') fail(path, "'$ref' " + ref + " is not in this document (only \"#...\" is)");
    const Json* target = nullptr;
    try {
      target = &root_.at(Json::json_pointer(ref.substr(1)));
    } catch (const nlohmann::json::exception&) {
      fail(path, "'$ref' " + ref + " points at nothing");
    }
    // Named before it is visited, so that a reference inside it to itself
    // is the rule's own name.
    const std::string name = unique_name("ref" + ref.substr(1));
    refs_[ref] = name;
    rules_[name] = expression(*target, name, ref.substr(1), depth + 1);
    return name;
  }

  std::string any_of(const Json& schema, const std::string& name, const std::string& path, int depth) {
    const char* key = schema.contains("anyOf") ? "anyOf" : "oneOf";
    for (const auto& [k, value] : schema.items()) {
      if (k != key && k != "$defs" && k != "definitions" && !kAnnotations.count(k))
        fail(path, std::string("'") + key + "' with '" + k + "' beside it");
    }
    const Json& options = schema[key];
    if (!options.is_array() || options.empty()) fail(path, std::string("'") + key + "' must be a non-empty list");
    std::vector<std::string> alternatives;
    for (size_t i = 0; i < options.size(); ++i) {
      alternatives.push_back(
          visit(options[i], name + "-" + std::to_string(i), path + "/" + key + "/" + std::to_string(i), depth + 1));
    }
    return join(alternatives);
  }

  std::optional<uint64_t> count(const Json& schema, const char* key, const std::string& path) {
    if (!schema.contains(key)) return std::nullopt;
    const Json& v = schema[key];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      fail(path, std::string("'") + key + "' must be a non-negative integer");
    return v.get<uint64_t>();
  }

  std::optional<double> bound(const Json& schema, const char* key, const std::string& path) {
    if (!schema.contains(key)) return std::nullopt;
    const Json& v = schema[key];
    if (!v.is_number()) fail(path, std::string("'") + key + "' must be a number");
    const double d = v.get<double>();
    if (std::fabs(d) > kMaxBound) fail(path, std::string("'") + key + "' beyond 2^53 cannot be enforced");
    return d;
  }

  std::string string(const Json& schema, const std::string& path) {
    const auto min = count(schema, "minLength", path);
    const auto max = count(schema, "maxLength", path);
    const bool lengths = min || max;
    if (schema.contains("format")) {
      if (lengths || schema.contains("pattern")) fail(path, "'format' with 'pattern', 'minLength' or 'maxLength'");
      const Json& f = schema["format"];
      const auto rule = f.is_string() ? schema::format_string(f.get<std::string>()) : std::nullopt;
      if (!rule) fail(path, "format '" + (f.is_string() ? f.get<std::string>() : f.dump()) + "'");
      return *rule;
    }
    if (schema.contains("pattern")) {
      if (lengths) fail(path, "'pattern' with 'minLength' or 'maxLength'");
      if (!schema["pattern"].is_string()) fail(path, "'pattern' must be a string");
      try {
        return "\"\\\"\" " + schema::pattern_contents(schema["pattern"].get<std::string>()) + " \"\\\"\"";
      } catch (const Error& e) {
        fail(path, e.what());
      }
    }
    if (!lengths) return "string";
    if (min && max && *min > *max) fail(path, "'minLength' above 'maxLength'");
    return "\"\\\"\" char{" + std::to_string(min.value_or(0)) + "," + (max ? std::to_string(*max) : "") + "} \"\\\"\"";
  }

  std::string integer(const Json& schema, const std::string& path) {
    std::optional<int64_t> lo;
    std::optional<int64_t> hi;
    const auto tighten_lo = [&](int64_t v) { lo = lo ? std::max(*lo, v) : v; };
    const auto tighten_hi = [&](int64_t v) { hi = hi ? std::min(*hi, v) : v; };
    if (const auto v = bound(schema, "minimum", path)) tighten_lo(static_cast<int64_t>(std::ceil(*v)));
    if (const auto v = bound(schema, "exclusiveMinimum", path)) tighten_lo(static_cast<int64_t>(std::floor(*v)) + 1);
    if (const auto v = bound(schema, "maximum", path)) tighten_hi(static_cast<int64_t>(std::floor(*v)));
    if (const auto v = bound(schema, "exclusiveMaximum", path)) tighten_hi(static_cast<int64_t>(std::ceil(*v)) - 1);
    if (!lo && !hi) return "integer";
    if (lo && hi && *lo > *hi) fail(path, "no integer is within the bounds");
    return schema::integer_range(lo, hi);
  }

  std::string number(const Json& schema, const std::string& path) {
    for (const char* key : {"exclusiveMinimum", "exclusiveMaximum"}) {
      if (schema.contains(key)) fail(path, std::string("'") + key + "' on a number cannot be enforced");
    }
    std::optional<int64_t> lo;
    std::optional<int64_t> hi;
    for (const char* key : {"minimum", "maximum"}) {
      const auto v = bound(schema, key, path);
      if (!v) continue;
      if (std::floor(*v) != *v)
        fail(path, std::string("'") + key + "' " + schema[key].dump() + " on a number (only integer bounds are enforced)");
      (key[1] == 'i' ? lo : hi) = static_cast<int64_t>(*v);
    }
    if (!lo && !hi) return "number";
    if (lo && hi && *lo > *hi) fail(path, "'minimum' above 'maximum'");
    return schema::number_range(lo, hi);
  }

  std::string object(const Json& schema, const std::string& name, const std::string& path, int depth) {
    const Json empty = Json::object();
    const Json& properties = schema.contains("properties") ? schema["properties"] : empty;
    if (!properties.is_object()) fail(path, "'properties' must be an object");
    std::set<std::string> required;
    if (schema.contains("required")) {
      if (!schema["required"].is_array()) fail(path, "'required' must be a list");
      for (const Json& r : schema["required"]) {
        if (!r.is_string()) fail(path, "'required' must list strings");
        if (!properties.contains(r.get<std::string>()))
          fail(path, "required property '" + r.get<std::string>() + "' is not in 'properties'");
        required.insert(r.get<std::string>());
      }
    }
    std::vector<Member> members;
    for (const auto& [key, value] : properties.items()) {
      const std::string value_rule = visit(value, name + "-" + key, path + "/properties/" + key, depth + 1);
      members.push_back(Member{key, schema::literal(Json(key).dump()) + " ws \":\" ws " + value_rule,
                               required.count(key) > 0});
    }
    std::string extra;  // one additional property, if they are allowed
    if (schema.contains("additionalProperties")) {
      const Json& additional = schema["additionalProperties"];
      if (!additional.is_boolean() || additional.get<bool>()) {
        std::vector<std::string> names;
        for (const Member& m : members) names.push_back(m.key);
        const std::string value_rule =
            additional.is_boolean() ? "value"
                                    : visit(additional, name + "-additional", path + "/additionalProperties", depth + 1);
        extra = other_key(names, name) + " ws \":\" ws " + value_rule + " ws";
      }
    }
    // The members from i on, in the schema's order, optional ones optional,
    // as two rules: before any member is written (no comma) and after.
    // Built from the last, each from the next's two.
    std::string next_first = "\"\"";
    std::string next_more = "\"\"";
    if (!extra.empty()) {
      next_more = "(\",\" ws " + extra + ")*";
      next_first = "(" + extra + " " + next_more + ")?";
    }
    for (size_t i = members.size(); i-- > 0;) {
      const std::string present = members[i].pair + " ws " + next_more;
      const std::string first = unique_name(name + "-members-" + std::to_string(i) + "-first");
      rules_[first] = members[i].required ? present : present + " | " + next_first;
      if (i > 0) {
        const std::string more = unique_name(name + "-members-" + std::to_string(i));
        rules_[more] = "\",\" ws " + present + (members[i].required ? "" : " | " + next_more);
        next_more = more;
      }
      next_first = first;
    }
    return "\"{\" ws " + next_first + " \"}\"";
  }

  struct Member {
    std::string key;
    std::string pair;  // "key" ws ":" ws value
    bool required;
  };

  // A JSON string that is none of `names`: the names' trie, each node a
  // rule that either follows a name or leaves them all (a character no name
  // has there, or the string's end where no name ends).
  std::string other_key(const std::vector<std::string>& names, const std::string& name) {
    if (names.empty()) return "string";
    struct Node {
      std::map<uint32_t, size_t> children;
      bool name_ends = false;
    };
    std::vector<Node> trie(1);
    for (const std::string& n : names) {
      size_t at = 0;
      Utf8Partial state;
      for (const char c : n) {
        Utf8Partial next;
        uint32_t cp = 0;
        const auto step = state.feed(static_cast<uint8_t>(c), next, cp);
        state = next;
        if (step != Utf8Partial::Step::Complete) continue;  // nlohmann has checked the UTF-8
        state = Utf8Partial();
        const auto [it, added] = trie[at].children.emplace(cp, trie.size());
        if (added) trie.emplace_back();
        at = it->second;
      }
      trie[at].name_ends = true;
    }
    const std::string base = unique_name(name + "-other-key");
    for (size_t i = 0; i < trie.size(); ++i) {
      std::vector<std::string> alternatives;
      std::vector<CodepointRange> next;
      for (const auto& [cp, child] : trie[i].children) {
        alternatives.push_back(schema::json_chars(CharClass({{cp, cp}}, false)) + " " + base + "-" + std::to_string(child));
        next.push_back({cp, cp});
      }
      alternatives.push_back(schema::json_chars(CharClass(next, true)) + " char* \"\\\"\"");
      if (!trie[i].name_ends) alternatives.push_back("\"\\\"\"");
      rules_[base + "-" + std::to_string(i)] = join(alternatives);
    }
    return "\"\\\"\" " + base + "-0";
  }

  std::string array(const Json& schema, const std::string& name, const std::string& path, int depth) {
    const uint64_t min = count(schema, "minItems", path).value_or(0);
    const auto max = count(schema, "maxItems", path);
    if (max && min > *max) fail(path, "'minItems' above 'maxItems'");
    if (max && *max == 0) return "\"[\" ws \"]\"";
    std::string item = "value";
    if (schema.contains("items")) {
      if (schema["items"].is_array()) fail(path, "'items' as a list (tuples) is not supported");
      item = visit(schema["items"], name + "-item", path + "/items", depth + 1);
    }
    const std::string more_min = std::to_string(min > 0 ? min - 1 : 0);
    const std::string more_max = max ? std::to_string(*max - 1) : "";
    const std::string items = item + " ws (\",\" ws " + item + " ws){" + more_min + "," + more_max + "}";
    return "\"[\" ws " + (min > 0 ? items : "(" + items + ")?") + " \"]\"";
  }

  const Json& root_;
  std::map<std::string, std::string> rules_;
  std::map<std::string, std::string> refs_;  // $ref -> its rule
  std::map<std::string, int> used_names_;
  std::string prefix_;  // of every rule's name
};

}  // namespace

SchemaRules json_schema_rules(std::string_view schema, const std::string& prefix) {
  Json root;
  try {
    root = Json::parse(schema);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("JSON schema: not JSON (") + e.what() + ")");
  }
  try {
    return Converter(root, prefix).convert();
  } catch (const nlohmann::json::exception& e) {  // a keyword's value of a type the converter did not check
    throw Error(std::string("JSON schema: a keyword's value has the wrong type (") + e.what() + ")");
  }
}

std::string json_schema_to_gbnf(std::string_view schema) {
  const SchemaRules r = json_schema_rules(schema, "");
  return "root ::= " + r.start + "\n" + schema::common_rules() + r.rules;
}

std::string json_common_gbnf() { return schema::common_rules(); }

std::string json_object_gbnf() { return "root ::= object\n" + schema::common_rules(); }

}  // namespace kiln::grammar
