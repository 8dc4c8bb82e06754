#include "apps/server/tool_call_grammar.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/error/error.hpp"
#include "engine/grammar/json_schema.hpp"
#include "engine/grammar/json_schema_parts.hpp"
#include "apps/server/gemma_arguments.hpp"
#include "apps/server/request_fields.hpp"
#include "apps/server/string_schema.hpp"
#include "apps/server/tool_prompt.hpp"

namespace kiln {

namespace {

using json = RequestJson;
using grammar::schema::literal;

// Keywords a string parameter may have where its value is bare text (no
// '<'; the XML and Gemma 4 formats): only its length, enum and const can be
// enforced there.
const std::set<std::string> kBareStringKeywords = {"type",  "enum",        "const",    "minLength", "maxLength",
                                                  "title", "description", "examples", "default"};

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class ToolGrammar {
 public:
  explicit ToolGrammar(ToolCallFormat format) : format_(format) {}

  // The rule that writes a call of `tool` (the `index`th offered).
  std::string call(const Tool& tool, size_t index) {
    const std::string prefix = "tool" + std::to_string(index) + "-";
    const std::string quoted_name = json(tool.name).dump();
    if (format_ == ToolCallFormat::QwenXml)
      return literal("<tool_call>\n<function=" + tool.name + ">\n") + " " + xml_parameters(tool, prefix) + " " +
             literal("</function>\n</tool_call>");
    if (format_ == ToolCallFormat::Gemma4)
      return literal("<|tool_call>call:" + tool.name + "{") + " " + gemma_members(tool, prefix) + " " +
             literal("}<tool_call|>");
    const std::string args = schema_rule(tool.parameters, prefix);
    switch (format_) {
      case ToolCallFormat::Hermes:
        return literal("<tool_call>\n{\"name\": " + quoted_name + ", \"arguments\": ") + " " + args + " " +
               literal("}\n</tool_call>");
      case ToolCallFormat::Llama31:
        return literal("{\"name\": " + quoted_name + ", \"parameters\": ") + " " + args + " " + literal("}");
      case ToolCallFormat::Mistral: return literal("[TOOL_CALLS]" + tool.name + "[ARGS]") + " " + args;
      case ToolCallFormat::Harmony: return literal("to=functions." + tool.name) + " harmony-header " + args;
      default: return literal("{\"name\": " + quoted_name + ", \"arguments\": ") + " " + args + " " + literal("}");
    }
  }

  std::string text(const std::string& root) const { return "root ::= " + root + "\n" + rules_ + grammar::json_common_gbnf(); }

  void add_rule(const std::string& name, const std::string& body) { rules_ += name + " ::= " + body + "\n"; }

 private:
  std::string schema_rule(const std::string& schema, const std::string& prefix) {
    const grammar::SchemaRules r = grammar::json_schema_rules(schema, prefix);
    rules_ += r.rules;
    return r.start;
  }

  // The schema's properties (none if it has no object of them) and the names it requires.
  static std::pair<json, std::set<std::string>> properties(const Tool& tool) {
    const json schema = json::parse(tool.parameters);
    const json* props = field(schema, "properties");
    std::set<std::string> required;
    if (const json* req = field(schema, "required"); req && req->is_array())
      for (const json& name : *req)
        if (name.is_string()) required.insert(name.get<std::string>());
    return {props && props->is_object() ? *props : json::object(), required};
  }

  // <parameter=P>\nVALUE\n</parameter>\n for each property in the schema's
  // order, the required ones always; strings bare, other values as JSON.
  std::string xml_parameters(const Tool& tool, const std::string& prefix) {
    const auto [props, required] = properties(tool);
    if (props.empty()) return "\"\"";
    std::string out;
    size_t n = 0;
    for (const auto& [key, sub] : props.items()) {
      const std::string p = prefix + "p" + std::to_string(n++) + "-";
      const std::string value = is_string_schema(sub) ? bare_string(tool, key, sub, p) : schema_rule(sub.dump(), p);
      const std::string one = literal("<parameter=" + key + ">\n") + " " + value + " " + literal("\n</parameter>\n");
      out += (out.empty() ? "" : " ") + (required.count(key) ? one : "(" + one + ")?");
    }
    return "(" + out + ")";
  }

  // Gemma 4's key:value members, keys sorted as its template's dictsort
  // sorts them, comma-separated; strings between <|"|> marks, numbers and
  // booleans as JSON writes them (the only other values it spells alike).
  std::string gemma_members(const Tool& tool, const std::string& prefix) {
    const auto [props, required] = properties(tool);
    std::vector<std::pair<std::string, json>> members;
    for (const auto& [key, sub] : props.items()) members.emplace_back(key, sub);
    std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
      return lowercase(a.first) < lowercase(b.first);
    });
    // first-i: members i.. with none before them; rest-i: the same after one (each then after a comma).
    const auto name = [&](const char* kind, size_t i) { return prefix + kind + "-" + std::to_string(i); };
    add_rule(name("first", members.size()), "\"\"");
    add_rule(name("rest", members.size()), "\"\"");
    for (size_t i = members.size(); i-- > 0;) {
      const auto& [key, sub] = members[i];
      const std::string p = prefix + "p" + std::to_string(i) + "-";
      std::string value;
      if (is_string_schema(sub)) value = literal(kGemmaQuote) + " " + bare_string(tool, key, sub, p) + " " + literal(kGemmaQuote);
      else if (sub.is_object() && sub.contains("type") && (sub["type"] == "integer" || sub["type"] == "number" || sub["type"] == "boolean"))
        value = schema_rule(sub.dump(), p);
      else
        throw Error("tools: " + tool.name + "." + key +
                    ": Gemma 4's tool calls are constrained only for string, number, integer and boolean parameters");
      const std::string item = literal(key + ":") + " " + value;
      const bool needed = required.count(key) > 0;
      const std::string rest = literal(",") + " " + item + " " + name("rest", i + 1);
      add_rule(name("rest", i), needed ? rest : "(" + rest + ") | " + name("rest", i + 1));
      const std::string first = item + " " + name("rest", i + 1);
      add_rule(name("first", i), needed ? first : "(" + first + ") | " + name("first", i + 1));
    }
    return name("first", 0);
  }

  // A string parameter written bare: its length, or its enum or const.
  std::string bare_string(const Tool& tool, const std::string& key, const json& sub, const std::string& prefix) {
    for (const auto& [k, v] : sub.items())
      if (!kBareStringKeywords.count(k))
        throw Error("tools: " + tool.name + "." + key + ": '" + k +
                    "' cannot be enforced on a string parameter of this template's tool calls, which are not JSON");
    std::vector<json> options;
    if (const json* c = field(sub, "const")) options.push_back(*c);
    if (const json* e = field(sub, "enum"); e && e->is_array()) options.assign(e->begin(), e->end());
    if (options.empty()) {
      const json* min = field(sub, "minLength");
      const json* max = field(sub, "maxLength");
      if ((min && !min->is_number_unsigned()) || (max && !max->is_number_unsigned()))
        throw Error("tools: " + tool.name + "." + key + ": minLength and maxLength must be integers >= 0");
      std::string chars = "[^<]{";
      chars.append(min ? min->dump() : "0").append(",").append(max ? max->dump() : "").append("}");
      add_rule(prefix + "text", chars);
      return prefix + "text";
    }
    std::string alternatives;
    for (const json& o : options)
      if (o.is_string()) alternatives += (alternatives.empty() ? "" : " | ") + literal(o.get<std::string>());
    if (alternatives.empty()) throw Error("tools: " + tool.name + "." + key + ": an enum with no string");
    return "(" + alternatives + ")";
  }

  ToolCallFormat format_;
  std::string rules_;
};

bool forced(const CompletionRequest& r) {
  return r.tool_choice == ToolChoice::Required || r.tool_choice == ToolChoice::Named;
}

// The calls' grammar (the generic format's JSON reply), whatever tool_choice is.
std::string calls_gbnf(const CompletionRequest& r, ToolCallFormat format) {
  ToolGrammar g(format);
  std::string calls;
  for (size_t i = 0; i < r.tools.size(); ++i) {
    if (r.tool_choice == ToolChoice::Named && r.tools[i].name != r.forced_function) continue;
    calls += (calls.empty() ? "" : " | ") + g.call(r.tools[i], i);
  }
  g.add_rule("call", calls);
  const bool several = r.parallel_tool_calls;
  switch (format) {
    case ToolCallFormat::Hermes:
    case ToolCallFormat::QwenXml: return g.text(several ? "call (\"\\n\" call)*" : "call");
    case ToolCallFormat::Mistral:
    case ToolCallFormat::Gemma4: return g.text(several ? "call+" : "call");
    case ToolCallFormat::Llama31: return g.text("call");
    case ToolCallFormat::Harmony:
      // After the recipient, the channel and the content type in either of
      // the orders gpt-oss writes them; one call per reply (it ends with <|call|>).
      g.add_rule("harmony-header", R"((" "? "<|channel|>commentary")? (" json" | " "? "<|constrain|>json")? "<|message|>")");
      return g.text(forced(r) ? literal("<|channel|>commentary ") + " call" : "call");
    case ToolCallFormat::Generic: break;
  }
  std::string root = literal("{\"tool_call\": ") + " call " + literal("}");
  if (several) root += " | " + literal("{\"tool_calls\": [") + " call (" + literal(", ") + " call)* " + literal("]}");
  if (!forced(r)) root += " | " + literal("{\"response\": ") + " string " + literal("}");
  return g.text(root);
}

}  // namespace

std::string tool_call_gbnf(const CompletionRequest& r, ToolCallFormat format) {
  if (!uses_tools(r) || (!forced(r) && format != ToolCallFormat::Generic)) return "";
  return calls_gbnf(r, format);
}

std::string started_call_gbnf(const CompletionRequest& r, ToolCallFormat format) {
  if (!uses_tools(r) || forced(r) || tool_call_marker(format).empty()) return "";
  return calls_gbnf(r, format);
}

void apply_tool_grammar(CompletionRequest& r, ToolCallFormat format) {
  try {
    if (const std::string forced_text = tool_call_gbnf(r, format); !forced_text.empty()) {
      if (r.grammar) reject("tools", "cannot be combined with grammar, json_schema or response_format here");
      r.grammar = grammar::parse_gbnf(forced_text);
    } else if (const std::string started = started_call_gbnf(r, format); !started.empty() && !r.grammar) {
      r.call_grammar = grammar::parse_gbnf(started);
      r.call_trigger = tool_call_marker(format);
    }
  } catch (const RequestError&) {
    throw;
  } catch (const Error& e) {  // a schema the grammar cannot enforce, named in the message
    throw RequestError(400, e.what(), "tools");
  }
}

}  // namespace kiln
