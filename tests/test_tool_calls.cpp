// Tool calls in every format the server reads (apps/server/tool_call_*):
// which format a template's text asks for, reading replies back into calls
// (content before them, arguments as a JSON object's text, a reply whose
// call cannot be read left as content), what a stream may send before a call
// is known, and the grammars that force a call: a call in the format is in
// their language, and the parser reads it back.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "apps/server/openai_request.hpp"
#include "apps/server/tool_call_format.hpp"
#include "apps/server/tool_call_grammar.hpp"
#include "apps/server/tool_call_parser.hpp"
#include "apps/server/tool_reply.hpp"
#include "engine/grammar/grammar.hpp"
#include "engine/grammar/matcher.hpp"

using namespace kiln;

namespace {

const char* kWeatherSchema =
    R"({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7},)"
    R"( "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city", "days"]})";

std::vector<Tool> tools() {
  return {Tool{"get_weather", kWeatherSchema, ""}, Tool{"get_time", R"({"type": "object", "properties": {}})", ""}};
}

ParsedReply parse(ToolCallFormat f, const std::string& text) { return parse_tool_calls(f, text, tools()); }

CompletionRequest request(ToolChoice choice, bool parallel = false) {
  CompletionRequest r;
  r.endpoint = Endpoint::ChatCompletions;
  r.tools = tools();
  r.tool_choice = choice;
  r.forced_function = choice == ToolChoice::Named ? "get_weather" : "";
  r.parallel_tool_calls = parallel;
  return r;
}

// Call i of r names `name` with these arguments (a JSON object's text).
void check_call(const ParsedReply& r, size_t i, const std::string& name, const std::string& arguments) {
  REQUIRE(r.calls.size() > i);
  CHECK(r.calls[i].name == name);
  CHECK(r.calls[i].arguments == arguments);
}

// `text` in format f reads as `content` and these calls: {name, arguments} each.
void check_reply(ToolCallFormat f, const std::string& text, const std::string& content,
                 const std::vector<std::pair<std::string, std::string>>& calls) {
  const ParsedReply r = parse(f, text);
  CHECK(r.content == content);
  CHECK(r.calls.size() == calls.size());
  for (size_t i = 0; i < calls.size(); ++i) check_call(r, i, calls[i].first, calls[i].second);
}

bool in_language(const std::string& gbnf, const std::string& text) {
  grammar::Matcher m(grammar::parse_gbnf(gbnf));
  return m.accept(text) && m.can_end();
}

}  // namespace

TEST_CASE("the format is told from the template's markers") {
  CHECK(detect_tool_call_format("{{ '<tool_call>\\n<function=' }}") == ToolCallFormat::QwenXml);
  CHECK(detect_tool_call_format("<tool_call>\\n{{ tool_call | tojson }}") == ToolCallFormat::Hermes);
  CHECK(detect_tool_call_format("[AVAILABLE_TOOLS]...[TOOL_CALLS]") == ToolCallFormat::Mistral);
  CHECK(detect_tool_call_format("<|start_header_id|>ipython<|end_header_id|>") == ToolCallFormat::Llama31);
  CHECK(detect_tool_call_format("<|im_start|>{{ role }}") == ToolCallFormat::Generic);
  CHECK(tool_call_tokens(ToolCallFormat::Mistral) == std::vector<std::string>{"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"});
  CHECK(tool_call_tokens(ToolCallFormat::Hermes).empty());
}

TEST_CASE("Hermes / Qwen: <tool_call> JSON </tool_call>") {
  check_reply(ToolCallFormat::Hermes,
              "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n"
              "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": \"{}\"}\n</tool_call>",
              "Let me look.", {{"get_weather", R"({"city":"Paris","days":2})"}, {"get_time", "{}"}});
  // A reply that ended before the closing tag still has its call.
  CHECK(parse(ToolCallFormat::Hermes, "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}").calls.size() == 1);
  // A reply cut inside a call after complete ones (max_tokens) keeps those.
  const ParsedReply cut = parse(ToolCallFormat::Hermes,
                                "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"na");
  CHECK(cut.calls.size() == 1);
  // What cannot be read stays content.
  const std::string broken = "Sure <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": ";
  CHECK(parse(ToolCallFormat::Hermes, broken).content == broken);
  CHECK(parse(ToolCallFormat::Hermes, broken).calls.empty());
  CHECK(parse(ToolCallFormat::Hermes, "Just text.").content == "Just text.");
}

TEST_CASE("Qwen3-Coder / Qwen3.5: <function=NAME><parameter=P> XML") {
  const ParsedReply r = parse(ToolCallFormat::QwenXml,
                              "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\nCity\n</parameter>\n"
                              "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>");
  CHECK(r.content.empty());
  REQUIRE(r.calls.size() == 1);
  CHECK(r.calls[0].name == "get_weather");
  // A string parameter is its text, even when it reads as JSON; others are JSON.
  CHECK(r.calls[0].arguments == R"({"city":"New York\nCity","days":3})");
  CHECK(parse(ToolCallFormat::QwenXml, "<tool_call>\n<function=get_weather>\n<parameter=city>\n42\n</parameter>\n</function>\n</tool_call>")
            .calls[0]
            .arguments == R"({"city":"42"})");
  CHECK(parse(ToolCallFormat::QwenXml, "<tool_call>\n<oops>\n</tool_call>").calls.empty());
}

TEST_CASE("Llama 3.1: the reply is {\"name\": ..., \"parameters\": ...}") {
  check_reply(ToolCallFormat::Llama31, R"({"name": "get_weather", "parameters": {"city": "Oslo", "days": 1}})", "",
              {{"get_weather", R"({"city":"Oslo","days":1})"}});
  CHECK(parse(ToolCallFormat::Llama31, R"(<|python_tag|>{"name": "get_time", "parameters": {}})").calls.size() == 1);
  CHECK(parse(ToolCallFormat::Llama31, "The weather is {fine}.").content == "The weather is {fine}.");
}

TEST_CASE("Mistral: [TOOL_CALLS]NAME[ARGS]{...}, with [CALL_ID], or a JSON list") {
  check_reply(ToolCallFormat::Mistral,
              R"(Checking.[TOOL_CALLS]get_weather[ARGS]{"city": "Rome", "days": 5}[TOOL_CALLS]get_time[CALL_ID]abc123XYZ[ARGS]{})",
              "Checking.", {{"get_weather", R"({"city":"Rome","days":5})"}, {"get_time", "{}"}});
  check_reply(ToolCallFormat::Mistral, R"([TOOL_CALLS][{"name": "get_time", "arguments": {}}])", "", {{"get_time", "{}"}});
  CHECK(parse(ToolCallFormat::Mistral, "[TOOL_CALLS]get_time[ARGS]{").calls.empty());
  CHECK(parse(ToolCallFormat::Mistral, "[TOOL_CALLS]get_time[ARGS]{}[TOOL_CALLS]get_ti").calls.size() == 1);
}

TEST_CASE("gpt-oss harmony: a message to=functions.NAME is a call, the final channel the content") {
  check_reply(ToolCallFormat::Harmony,
              "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
              "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\", \"days\": 1}",
              "", {{"get_weather", R"({"city":"Oslo","days":1})"}});
  check_reply(ToolCallFormat::Harmony, "to=functions.get_time<|channel|>commentary json<|message|>{}", "", {{"get_time", "{}"}});
  check_reply(ToolCallFormat::Harmony, "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant<|channel|>final<|message|>Noon.",
              "Noon.", {});
  CHECK(detect_tool_call_format("<|start|>{{ role }}<|channel|>") == ToolCallFormat::Harmony);
}

TEST_CASE("Gemma 4: <|tool_call>call:NAME{key:value}<tool_call|>, strings between <|\"|> marks") {
  check_reply(ToolCallFormat::Gemma4,
              "Sure.<|tool_call>call:get_weather{city:<|\"|>Paris, FR<|\"|>,days:2,opts:{deep:true,tags:[<|\"|>a<|\"|>,1.5]}}"
              "<tool_call|><|tool_call>call:get_time{}<tool_call|>",
              "Sure.", {{"get_weather", R"({"city":"Paris, FR","days":2,"opts":{"deep":true,"tags":["a",1.5]}})"}, {"get_time", "{}"}});
  CHECK(parse(ToolCallFormat::Gemma4, "<|tool_call>call:get_time{zone:<|\"|>UT").calls.empty());
  CHECK(detect_tool_call_format("{{- '<|tool_call>call:' + function['name'] + '{' -}}") == ToolCallFormat::Gemma4);
}

TEST_CASE("generic: one JSON object, a call, calls or a response") {
  const ParsedReply one = parse(ToolCallFormat::Generic, R"({"tool_call": {"name": "get_time", "arguments": {}}})");
  REQUIRE(one.calls.size() == 1);
  CHECK(one.calls[0].name == "get_time");
  CHECK(parse(ToolCallFormat::Generic, R"({"tool_calls": [{"name": "get_time", "arguments": {}}, {"name": "get_time", "arguments": {}}]})")
            .calls.size() == 2);
  const ParsedReply answer = parse(ToolCallFormat::Generic, R"({"response": "It is noon."})");
  CHECK(answer.calls.empty());
  CHECK(answer.content == "It is noon.");
  CHECK(parse(ToolCallFormat::Generic, "not json").content == "not json");
}

TEST_CASE("a stream sends the content before a call and holds back what may start one") {
  CHECK(tool_call_start(ToolCallFormat::Hermes, "Hello <tool") == 6);
  CHECK(tool_call_start(ToolCallFormat::Hermes, "Hello <b>") == std::string::npos);
  CHECK(tool_call_start(ToolCallFormat::Mistral, "ok [TOOL") == 3);
  CHECK(tool_call_start(ToolCallFormat::Llama31, "  {\"na") == 0);
  CHECK(tool_call_start(ToolCallFormat::Llama31, "Once upon") == std::string::npos);
  CHECK(tool_call_start(ToolCallFormat::Generic, "{\"response\"") == 0);

  const std::vector<Tool> offered = tools();
  ToolReply reply(ToolCallFormat::Hermes, offered);
  std::string sent;
  for (const char* piece : {"I will ", "check.\n<to", "ol_call>\n{\"name\": \"get_time\", ", "\"arguments\": {}}\n</tool_call>"})
    sent += reply.push(piece);
  CHECK(sent == "I will check.\n");
  const ParsedReply end = reply.finish();
  CHECK(end.content.empty());
  REQUIRE(end.calls.size() == 1);
  CHECK(end.calls[0].id.size() == 9);

  ToolReply plain(ToolCallFormat::Hermes, offered);
  CHECK(plain.push("No tools <t") == "No tools ");
  CHECK(plain.finish().content == "<t");
}

TEST_CASE("a forced call's grammar allows a call in the format, which the parser reads back") {
  struct Case {
    ToolCallFormat format;
    std::string call;
  };
  const std::vector<Case> cases = {
      {ToolCallFormat::Hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>"},
      {ToolCallFormat::QwenXml,
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n2\n</parameter>\n"
       "<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>"},
      {ToolCallFormat::Llama31, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 2}}"},
      {ToolCallFormat::Mistral, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\", \"days\": 2}"},
      {ToolCallFormat::Generic, "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}}"},
      {ToolCallFormat::Gemma4, "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:2,unit:<|\"|>celsius<|\"|>}<tool_call|>"},
      {ToolCallFormat::Harmony,
       "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\", \"days\": 2}"},
  };
  for (const Case& c : cases) {
    INFO(tool_call_format_name(c.format));
    for (ToolChoice choice : {ToolChoice::Required, ToolChoice::Named}) {
      const std::string gbnf = tool_call_gbnf(request(choice), c.format);
      CHECK(in_language(gbnf, c.call));
      const ParsedReply r = parse(c.format, c.call);
      REQUIRE(r.calls.size() == 1);
      CHECK(r.calls[0].name == "get_weather");
    }
    // Arguments the schema refuses (days out of range) are not in it.
    std::string bad = c.call;
    bad[bad.find('2')] = '9';
    CHECK_FALSE(in_language(tool_call_gbnf(request(ToolChoice::Required), c.format), bad));
  }
  // The XML format's bare string values keep their lengths.
  CompletionRequest short_city = request(ToolChoice::Required);
  short_city.tools[0].parameters = R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 3}}})";
  const std::string xml_call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>";
  CHECK_FALSE(in_language(tool_call_gbnf(short_city, ToolCallFormat::QwenXml), xml_call));
  std::string shorter = xml_call;
  shorter.erase(shorter.find("Rome") + 3, 1);
  CHECK(in_language(tool_call_gbnf(short_city, ToolCallFormat::QwenXml), shorter));
  short_city.tools[0].parameters = R"({"type": "object", "properties": {"city": {"type": "string", "pattern": "^R"}}})";
  CHECK_THROWS_WITH(tool_call_gbnf(short_city, ToolCallFormat::QwenXml),
                    "tools: get_weather.city: 'pattern' cannot be enforced on a string parameter of this template's tool calls, "
                    "which are not JSON");
  // Gemma 4's optional members may be left out, its keys come sorted.
  const std::string gemma = tool_call_gbnf(request(ToolChoice::Required), ToolCallFormat::Gemma4);
  CHECK(in_language(gemma, "<|tool_call>call:get_weather{city:<|\"|>Oslo<|\"|>,days:7}<tool_call|>"));
  CHECK_FALSE(in_language(gemma, "<|tool_call>call:get_weather{days:7,city:<|\"|>Oslo<|\"|>}<tool_call|>"));
  CHECK_FALSE(in_language(gemma, "<|tool_call>call:get_weather{city:<|\"|>Oslo<|\"|>}<tool_call|>"));
  // A named function excludes the others; required takes any.
  const std::string get_time = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  CHECK(in_language(tool_call_gbnf(request(ToolChoice::Required), ToolCallFormat::Hermes), get_time));
  CHECK_FALSE(in_language(tool_call_gbnf(request(ToolChoice::Named), ToolCallFormat::Hermes), get_time));
  // Several calls only with parallel_tool_calls.
  std::string two_calls = get_time;
  two_calls.append("\n").append(get_time);
  CHECK(in_language(tool_call_gbnf(request(ToolChoice::Required, true), ToolCallFormat::Hermes), two_calls));
  CHECK_FALSE(in_language(tool_call_gbnf(request(ToolChoice::Required), ToolCallFormat::Hermes), two_calls));
  // With auto, a call the model starts follows the calls' grammar from its marker on.
  CHECK(in_language(started_call_gbnf(request(ToolChoice::Auto), ToolCallFormat::Hermes), get_time));
  CHECK(started_call_gbnf(request(ToolChoice::Required), ToolCallFormat::Hermes).empty());
  CHECK(in_language(started_call_gbnf(request(ToolChoice::Auto), ToolCallFormat::Harmony),
                    "to=functions.get_time<|channel|>commentary json<|message|>{}"));
  CHECK(started_call_gbnf(request(ToolChoice::Auto), ToolCallFormat::Llama31).empty());
  CHECK(started_call_gbnf(request(ToolChoice::Auto), ToolCallFormat::Generic).empty());
  // Auto leaves a reply free, except in the generic format, whose reply is JSON either way.
  CHECK(tool_call_gbnf(request(ToolChoice::Auto), ToolCallFormat::Hermes).empty());
  CHECK(in_language(tool_call_gbnf(request(ToolChoice::Auto), ToolCallFormat::Generic), R"({"response": "Hi"})"));
  CHECK_FALSE(in_language(tool_call_gbnf(request(ToolChoice::Required), ToolCallFormat::Generic), R"({"response": "Hi"})"));
}
