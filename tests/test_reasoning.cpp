// Reasoning told apart from content (apps/server/reasoning*, choice_reply):
// which markers a template's text shows, whether a prompt leaves the block
// open, the split of a reply however its text is cut into pieces (a stream's
// deltas add up to the whole answer's parts), where the worker sees the
// block and when a budget ends it, tool calls read after reasoning, and the
// request fields and template variables that steer it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "apps/server/choice_reply.hpp"
#include "apps/server/openai_request.hpp"
#include "apps/server/reasoning.hpp"
#include "apps/server/reasoning_block.hpp"
#include "apps/server/reasoning_budget.hpp"
#include "apps/server/reasoning_reply.hpp"
#include "apps/server/template_kwargs.hpp"
#include "engine/error/error.hpp"

using namespace kiln;

namespace {

const ReasoningSyntax kThink = detect_reasoning_syntax("{{ '<think>' }}");
const ReasoningSyntax kHarmony = detect_reasoning_syntax("<|start|>{{ m }}<|channel|>");
const ReasoningSyntax kGemma = detect_reasoning_syntax("<|turn>model\n<|channel>thought\n<channel|>");
// Qwen3-Coder and Qwen3.5: a call's marker also ends the reasoning.
const ReasoningSyntax kQwenXml = detect_reasoning_syntax("<think> <tool_call>\n<function=");

// The parts of `text` given to a ReasoningReply in pieces of `step` bytes
// (0: whole), added up as a client adds up a stream's deltas.
ReplyParts split(const ReasoningSyntax& syntax, const std::string& text, size_t step, bool in_reasoning = false,
                 bool legacy = false) {
  ReasoningReply reply(syntax, in_reasoning, legacy);
  ReplyParts all;
  const auto add = [&](const ReplyParts& p) {
    all.reasoning += p.reasoning;
    all.content += p.content;
  };
  for (size_t at = 0; at < text.size(); at += step == 0 ? text.size() : step)
    add(reply.push(text.substr(at, step == 0 ? std::string::npos : step)));
  add(reply.finish());
  return all;
}

// The same parts whatever the pieces.
void check_split(const ReasoningSyntax& syntax, const std::string& text, const std::string& reasoning,
                 const std::string& content, bool in_reasoning = false) {
  for (size_t step : {0, 1, 2, 3, 7}) {
    INFO("pieces of " << step << " bytes: " << text);
    const ReplyParts p = split(syntax, text, step, in_reasoning);
    CHECK(p.reasoning == reasoning);
    CHECK(p.content == content);
  }
}

}  // namespace

TEST_CASE("a template's reasoning markers, and prompts that leave the block open") {
  CHECK(kThink.open == "<think>");
  CHECK(kThink.close == "</think>");
  CHECK(kHarmony.open == "<|channel|>analysis<|message|>");
  CHECK(kGemma.close == "<channel|>");
  CHECK(detect_reasoning_syntax("<|im_start|>{{ m.content }}").empty());

  CHECK(starts_in_reasoning(kThink, "<|im_start|>assistant\n<think>\n"));  // Qwen3.5, DeepSeek-R1
  CHECK_FALSE(starts_in_reasoning(kThink, "<|im_start|>assistant\n<think>\n\n</think>\n\n"));  // enable_thinking false
  CHECK_FALSE(starts_in_reasoning(kThink, "<|im_start|>assistant\n"));  // Qwen3: the model opens it
  CHECK_FALSE(starts_in_reasoning({}, "<think>\n"));
}

TEST_CASE("reasoning and content, however the reply is cut into pieces") {
  check_split(kThink, "<think>\nI add 2 and 2.\n</think>\n\n4", "I add 2 and 2.", "4");
  check_split(kThink, "I add 2 and 2.\n</think>\n\nIt is 4.", "I add 2 and 2.", "It is 4.", true);
  check_split(kThink, "It is 4.", "", "It is 4.");
  check_split(kThink, "  <think>a  b\n</think>", "a  b", "");
  check_split(kThink, "<think>\ncut off by max_tokens  \n", "cut off by max_tokens", "");
  // Only at the start: later, the marker is text.
  check_split(kThink, "It is <think> here", "", "It is <think> here");
  check_split(kThink, "<think>a</think>b <think>c</think>", "a", "b <think>c</think>");
  check_split(kThink, "<thin", "", "<thin");
  check_split(kHarmony, "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>4",
              "Simple.", "4");
  check_split(kHarmony, "<|channel|>analysis<|message|>cut", "cut", "");
  check_split(kHarmony, "<|channel|>final<|message|>4", "", "4");
  check_split(kGemma, "<|channel>thought\nSimple.<channel|>4", "Simple.", "4");
  CHECK(kThink.call_closes.empty());
  CHECK(kQwenXml.call_closes == "<tool_call>");
  check_split(kQwenXml, "<think>\nI call it.\n<tool_call>\n<function=f>", "I call it.", "<tool_call>\n<function=f>");
  check_split(kThink, "<think>\nI call it.\n<tool_call>\n</think>", "I call it.\n<tool_call>", "");
}

TEST_CASE("deepseek-legacy: the content is the reply as written, the reasoning apart too") {
  const std::string text = "<think>\nhm\n</think>\n\n4";
  for (size_t step : {0, 1, 5}) {
    const ReplyParts p = split(kThink, text, step, false, /*legacy=*/true);
    CHECK(p.reasoning == "hm");
    CHECK(p.content == text);
  }
}

TEST_CASE("a stream sends reasoning as it comes, and holds back only what may be a marker") {
  ReasoningReply reply(kThink, false, false);
  CHECK(reply.push("<thi").reasoning.empty());
  ReplyParts p = reply.push("nk>Let me");
  CHECK(p.reasoning == "Let me");
  p = reply.push(" see \n</");  // the whitespace waits: it may end the reasoning
  CHECK(p.reasoning == " see");
  p = reply.push("think>\n\nIt");
  CHECK(p.reasoning.empty());
  CHECK(p.content == "It");
  CHECK(reply.finish().content.empty());
}

TEST_CASE("the worker's view of the block: inside it, and where the content begins") {
  const size_t npos = std::string::npos;
  ReasoningBlock opened(kThink, false);
  opened.update(" <thi");
  CHECK_FALSE(opened.inside());
  CHECK(opened.content_from() == npos);  // may still open
  opened.update(" <think>\nI could call <tool_call>");
  CHECK(opened.inside());
  CHECK(opened.content_from() == npos);
  opened.update(" <think>\nI could call <tool_call></thi");
  CHECK(opened.inside());
  const std::string reply = " <think>\nI could call <tool_call></think>\n\n<tool_call>";
  opened.update(reply);
  CHECK_FALSE(opened.inside());
  CHECK(opened.content_from() == reply.find("\n\n<tool_call>"));

  ReasoningBlock none(kThink, false);
  none.update("Hello <think>");
  CHECK_FALSE(none.inside());
  CHECK(none.content_from() == 0);

  ReasoningBlock prompt_opened(kThink, true);
  CHECK(prompt_opened.inside());
  prompt_opened.update("a</think>b");
  CHECK(prompt_opened.content_from() == 9);

  const ReasoningSyntax no_reasoning;
  CHECK(ReasoningBlock(no_reasoning, false).content_from() == 0);

  ReasoningBlock call_ends(kQwenXml, true);  // Qwen3-Coder, Qwen3.5: the call's marker ends the reasoning
  call_ends.update("I call it. <tool_c");
  CHECK(call_ends.inside());
  call_ends.update("I call it. <tool_call>\n<function=f>");
  CHECK(call_ends.content_from() == 11);
  ReasoningBlock close_first(kQwenXml, true);
  close_first.update("a</think><tool_call>");
  CHECK(close_first.content_from() == 9);
}

TEST_CASE("a reasoning budget forces the close after that many tokens inside the block") {
  const std::vector<int32_t> close = {7, 8};
  ReasoningBudget budget(2, close, false);
  const auto token = [&](bool was_inside, bool inside, std::string_view text = "a") {
    budget.counted(was_inside, inside, text);
    return budget.forced_token();
  };
  CHECK(budget.forced_token() == std::nullopt);
  CHECK(token(false, true) == std::nullopt);  // the open marker's token
  CHECK(token(true, true) == std::nullopt);
  CHECK(token(true, true, "\xe4\xb8") == std::nullopt);  // a character cut in two is finished first
  CHECK(token(true, true, "\xad") == 7);
  CHECK(token(true, true) == 8);
  CHECK(token(true, false) == std::nullopt);  // the close: done
  CHECK(token(false, false) == std::nullopt);

  ReasoningBudget ended_early(1, close, true);
  CHECK(ended_early.forced_token() == std::nullopt);
  ended_early.counted(true, true, "a");
  CHECK(ended_early.forced_token() == 7);
  ended_early.counted(true, false, "<tool_call>");  // the forced text ended the block (Qwen3.5's call marker)
  CHECK(ended_early.forced_token() == std::nullopt);

  ReasoningBudget natural(2, close, false);
  natural.counted(false, true, "a");
  natural.counted(true, false, "a");  // the model closed it within the budget
  natural.counted(false, false, "a");
  natural.counted(false, false, "a");
  CHECK(natural.forced_token() == std::nullopt);

  CHECK(ReasoningBudget(0, close, true).forced_token() == 7);  // the prompt opened it: closed at once
  ReasoningBudget zero(0, close, false);
  CHECK(zero.forced_token() == std::nullopt);
  zero.counted(false, true, "<think>");
  CHECK(zero.forced_token() == 7);
}

TEST_CASE("tool calls after reasoning are read from the content") {
  Job job;
  job.request.endpoint = Endpoint::ChatCompletions;
  job.request.reasoning_format = ReasoningFormat::Auto;
  job.request.tools = {Tool{"get_time", R"({"type": "object", "properties": {}})", ""}};
  job.prompt.rendered = chat::Text("<|im_start|>assistant\n");
  // A marker in the reasoning is reasoning, not a call.
  const std::string text = "<think>\nThe user wants the time: <tool_call>.\n</think>\n\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  for (size_t step : {size_t{1}, text.size()}) {
    ChoiceReply reply(job, ToolCallFormat::Hermes, kThink);
    std::string reasoning, content;
    for (size_t at = 0; at < text.size(); at += step) {
      const ReplyParts p = reply.push(text.substr(at, step));
      reasoning += p.reasoning;
      content += p.content;
    }
    CompletionResult result;
    result.finish_reason = "stop";
    const FinishedReply rest = reply.finish(result);
    CHECK(reasoning + rest.text.reasoning == "The user wants the time: <tool_call>.");
    CHECK(content + rest.text.content == "");
    REQUIRE(rest.calls.size() == 1);
    CHECK(rest.calls[0].name == "get_time");
    CHECK(result.finish_reason == "tool_calls");
  }
  job.request.reasoning_format = ReasoningFormat::None;  // the reasoning stays in the content, calls still read
  ChoiceReply reply(job, ToolCallFormat::Hermes, kThink);
  const std::string sent = reply.push(text).content;
  CompletionResult result;
  const FinishedReply rest = reply.finish(result);
  CHECK(sent + rest.text.content == "<think>\nThe user wants the time: <tool_call>.\n</think>\n\n");  // what a stream sends before the call
  REQUIRE(rest.calls.size() == 1);
  CHECK(rest.calls[0].name == "get_time");
  for (size_t step : {size_t{1}, text.size()}) {  // and streamed: the reasoning goes as it comes
    ChoiceReply pieces(job, ToolCallFormat::Hermes, kThink);
    std::string streamed;
    for (size_t at = 0; at < text.size(); at += step) streamed += pieces.push(text.substr(at, step)).content;
    CHECK(streamed + pieces.finish(result).text.content == "<think>\nThe user wants the time: <tool_call>.\n</think>\n\n");
  }
  // Qwen3-Coder and Qwen3.5: the call's marker ends the reasoning, and the call is read.
  const std::string xml = "<think>\nThe time.\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>";
  for (const ReasoningFormat format : {ReasoningFormat::Auto, ReasoningFormat::None})
    for (size_t step : {size_t{1}, xml.size()}) {
      job.request.reasoning_format = format;
      ChoiceReply qwen(job, ToolCallFormat::QwenXml, kQwenXml);
      ReplyParts parts;
      for (size_t at = 0; at < xml.size(); at += step) {
        const ReplyParts p = qwen.push(xml.substr(at, step));
        parts.reasoning += p.reasoning;
        parts.content += p.content;
      }
      const FinishedReply qwen_rest = qwen.finish(result);
      CHECK(parts.reasoning + qwen_rest.text.reasoning == (format == ReasoningFormat::None ? "" : "The time."));
      CHECK(parts.content + qwen_rest.text.content == (format == ReasoningFormat::None ? "<think>\nThe time.\n" : ""));
      REQUIRE(qwen_rest.calls.size() == 1);
      CHECK(qwen_rest.calls[0].name == "get_time");
    }
  job.request.reasoning_format = ReasoningFormat::None;
  // A block that never closes is all reasoning: a call in it is text.
  ChoiceReply cut(job, ToolCallFormat::Hermes, kThink);
  const std::string unclosed = "<think>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  const std::string cut_sent = cut.push(unclosed).content;
  const FinishedReply cut_rest = cut.finish(result);
  CHECK(cut_sent + cut_rest.text.content == unclosed);
  CHECK(cut_rest.calls.empty());
}

TEST_CASE("reasoning_format and chat_template_kwargs in requests; the server's defaults under them") {
  const auto chat = [](const std::string& fields) {
    return parse_completion_request(R"({"messages": [{"role": "user", "content": "hi"}])" + fields + "}",
                                    Endpoint::ChatCompletions);
  };
  CHECK(chat("").reasoning_format == std::nullopt);
  CHECK(chat(R"(, "reasoning_format": "none")").reasoning_format == ReasoningFormat::None);
  CHECK(chat(R"(, "reasoning_format": "deepseek-legacy")").reasoning_format == ReasoningFormat::DeepseekLegacy);
  try {
    chat(R"(, "reasoning_format": "hidden")");
    FAIL("no error");
  } catch (const RequestError& e) {
    CHECK(e.status == 400);
    CHECK(e.param == "reasoning_format");
    CHECK(std::string(e.what()).find("'hidden'") != std::string::npos);
  }
  CHECK_THROWS_AS(chat(R"(, "chat_template_kwargs": [1])"), RequestError);
  CHECK(chat(R"(, "chat_template_kwargs": {"enable_thinking": false})").chat_template_kwargs == R"({"enable_thinking":false})");
  CHECK(chat("").reasoning_budget == -1);
  CHECK(chat("").reasoning_budget_message == std::nullopt);
  CHECK(chat(R"(, "reasoning_budget_tokens": 12)").reasoning_budget == 12);
  CHECK(chat(R"(, "thinking_budget_tokens": 3)").reasoning_budget == 3);
  CHECK(chat(R"(, "reasoning_budget_message": "Enough.")").reasoning_budget_message == "Enough.");
  CHECK_THROWS_AS(chat(R"(, "reasoning_budget_tokens": -2)"), RequestError);
  CHECK_THROWS_AS(chat(R"(, "reasoning_budget_tokens": "many")"), RequestError);
  CHECK_THROWS_AS(chat(R"(, "reasoning_budget_message": 1)"), RequestError);
  const CompletionRequest withReasoning = parse_completion_request(
      R"({"messages": [{"role": "assistant", "content": "4", "reasoning_content": "2 + 2"}]})", Endpoint::ChatCompletions);
  CHECK(withReasoning.messages[0].reasoning_content == "2 + 2");

  CHECK(server_template_kwargs("", -1).empty());
  CHECK(server_template_kwargs("", 0) == R"({"enable_thinking":false})");
  CHECK(server_template_kwargs(R"({"enable_thinking": true, "x": 1})", 0) == R"({"enable_thinking":true,"x":1})");
  CHECK_THROWS_AS(server_template_kwargs("[1]", -1), Error);
  CHECK_THROWS_AS(server_template_kwargs("{", -1), Error);
  CHECK(merged_template_kwargs(R"({"enable_thinking":false,"x":1})", R"({"enable_thinking":true})") ==
        R"({"enable_thinking":true,"x":1})");
  CHECK(merged_template_kwargs("", "").empty());
}
