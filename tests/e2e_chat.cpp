// Conversation mode end to end on stories260K (whose GGUF has no chat
// template, so ChatML is used): the same reply as the plain program given the
// rendered prompt, later turns computing only their new tokens without
// changing the reply, the chat flags' errors, and --chat-template-file.
#include <doctest/doctest.h>

#include <cstdio>
#include <optional>
#include <sstream>

#include "engine/chat/chat_prompt.hpp"
#include "engine/session/session.hpp"
#include "kiln_test_stories260K.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/temp_folder.hpp"

using kiln::test::run_process;
using Tokens = std::vector<int32_t>;

namespace {

kiln::Model& model() {
  static std::unique_ptr<kiln::Model> m = kiln::models::kiln_test_stories260K::load();
  return *m;
}

const std::string kChatMlPrompt =
    "<|im_start|>system\nYou tell stories.<|im_end|>\n<|im_start|>user\nA story about a cat.<|im_end|>\n"
    "<|im_start|>assistant\n";

struct Turn {
  int prompt = 0, reused = 0, computed = 0, generated = 0;
};

// The "turn N: ..." lines of the program's stderr.
std::vector<Turn> turns(const std::string& err) {
  std::vector<Turn> out;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    Turn t;
    int number = 0;
    if (std::sscanf(line.c_str(), "turn %d: %d prompt tokens, %d reused, %d computed; %d generated", &number, &t.prompt,
                    &t.reused, &t.computed, &t.generated) == 5)
      out.push_back(t);
  }
  return out;
}

Tokens greedy(kiln::Session& session, const Tokens& prompt, int n, kiln::GenerationStats* stats = nullptr) {
  kiln::SamplerParams params;
  params.temperature = 0;
  kiln::Sampler sampler(params, model().n_vocab());
  Tokens out;
  const auto s = kiln::generate(session, prompt, n, sampler, [&](int32_t t) {
    out.push_back(t);
    return true;
  });
  if (stats) *stats = s;
  return out;
}

void write_text(const std::string& path, const std::string& text) {
  kiln::test::write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// The text of `ids` as it reads after `before`.
std::string text_of(const Tokens& ids, const Tokens& before) {
  kiln::Detokenizer detok(model().tokenizer());
  for (int32_t t : before) detok.push(t);
  std::string text;
  for (int32_t t : ids) text += detok.push(t);
  return text + detok.flush();
}

}  // namespace

TEST_CASE("a conversation's first reply is the plain program's text for the rendered prompt (temperature 0)") {
  const auto plain = run_process({STORIES_BIN, "-p", kChatMlPrompt, "--no-display-prompt", "--temp", "0", "-n", "40", "-t", "1"});
  REQUIRE(plain.exit_code == 0);
  const auto chat = run_process({STORIES_BIN, "-cnv", "-sys", "You tell stories.", "--temp", "0", "-n", "40", "-t", "1"},
                                "A story about a cat.\n");
  REQUIRE(chat.exit_code == 0);
  CHECK(chat.out == "> " + plain.out + "> ");
  CHECK(chat.err.find("no tokenizer.chat_template; using ChatML") != std::string::npos);
  // The timing summary comes at the end.
  CHECK(chat.err.find("time to 1st token") != std::string::npos);
  CHECK(chat.err.find("turn 1:") < chat.err.find("load time"));

  // -p is the first user turn.
  const auto with_p = run_process({STORIES_BIN, "-cnv", "-sys", "You tell stories.", "-p", "A story about a cat.", "--temp",
                                   "0", "-n", "40", "-t", "1"});
  CHECK(with_p.out == plain.out + "> ");
}

TEST_CASE("each later turn computes only its new tokens, and reuse does not change the reply") {
  const auto chat = run_process({STORIES_BIN, "-cnv", "--temp", "0", "-n", "24", "-t", "1"},
                                "A story about a cat.\n\nAnd then?\nThe end.\n");
  REQUIRE(chat.exit_code == 0);
  const std::vector<Turn> t = turns(chat.err);
  REQUIRE(t.size() == 3);  // the empty line is asked again, not a turn
  CHECK(t[0].reused == 0);
  CHECK(t[0].computed == t[0].prompt);
  for (size_t i = 1; i < t.size(); ++i) {
    CAPTURE(i);
    // All of the previous turn's context (its prompt and its reply) is reused ...
    CHECK(t[i].reused == t[i - 1].prompt + t[i - 1].generated);
    // ... and what is computed is only the text the template added for this turn.
    CHECK(t[i].computed == t[i].prompt - t[i].reused);
    CHECK(t[i].computed > 0);
  }

  // The same conversation in process: the second reply on the reused context
  // equals the reply computed from an empty context.
  kiln::chat::Conversation conv(model().tokenizer(), kiln::chat::ChatTemplate(kiln::chat::kChatMlTemplate, "chatml"), {});
  conv.add_message("user", "A story about a cat.");
  kiln::Session session(model());
  const Tokens first = *conv.prompt_for_reply();
  const Tokens reply = greedy(session, first, 24);
  conv.add_reply(reply, text_of(reply, first));
  conv.add_message("user", "And then?");
  const Tokens second = *conv.prompt_for_reply();
  CHECK(conv.last_tokenized() ==
        static_cast<int>(kiln::chat::tokenize_rendered(model().tokenizer(),
                                                       "<|im_end|>\n<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n",
                                                       false, true)
                             .size()));
  kiln::GenerationStats stats;
  const Tokens reused_reply = greedy(session, second, 24, &stats);
  CHECK(stats.reused_tokens == static_cast<int>(first.size() + reply.size()));
  CHECK(stats.prompt_tokens - stats.reused_tokens == conv.last_tokenized());
  kiln::Session fresh(model());
  CHECK(greedy(fresh, second, 24) == reused_reply);
  CHECK(chat.out.find(text_of(reused_reply, second)) != std::string::npos);

  // A turn that would not fit is dropped, and the conversation is as it was.
  const std::string before = conv.rendered();
  conv.add_message("user", std::string(4000, 'a'));
  CHECK(conv.prompt_for_reply(second.size() + 100) == std::nullopt);
  CHECK(conv.rendered() == before);
  CHECK(conv.prompt_for_reply().has_value());
  CHECK(conv.rendered() == before);
}

TEST_CASE("-cnv: a line too long for the context is refused, as in -i, and the conversation goes on") {
  const std::string refused = "conversation: with this line the prompt would fill the context (512 tokens, set at "
                              "build time: kiln_add_model CTX); it was not added";
  std::string too_long;
  for (int i = 0; i < 400; ++i) too_long += "Once upon a time there was a dog. ";
  const auto chat = run_process({STORIES_BIN, "-cnv", "--temp", "0", "-n", "8", "-t", "1"}, too_long + "\nHi\n");
  CHECK(chat.exit_code == 0);
  CHECK(chat.err.find(refused) != std::string::npos);
  // The refused line, the next (answered as turn 1), and the end of input.
  CHECK(chat.out.substr(0, 4) == "> > ");
  REQUIRE(turns(chat.err).size() == 1);
  CHECK(turns(chat.err)[0].reused == 0);

  // 20 MB, past what a chat template may write: refused all the same, before it is rendered.
  const auto huge = run_process({STORIES_BIN, "-cnv", "--temp", "0", "-n", "8", "-t", "1"},
                                std::string(20 << 20, 'a') + "\nHi\n");
  CHECK(huge.exit_code == 0);
  CHECK(huge.err.find(refused) != std::string::npos);
  CHECK(turns(huge.err).size() == 1);

  // A conversation that fills the context: each line that no longer fits is
  // refused, and the timing summary still comes at the end of the input.
  std::string input;
  for (int i = 0; i < 12; ++i) input += "Tell me more about the cat and the dog.\n";
  const auto full = run_process({STORIES_BIN, "-cnv", "--temp", "0", "-n", "100", "-t", "1"}, input);
  CHECK(full.exit_code == 0);
  CHECK(full.err.find(refused) != std::string::npos);
  CHECK(full.err.find("time to 1st token") != std::string::npos);
  CHECK(turns(full.err).size() < 12);
}

TEST_CASE("--chat-template-file renders with that template; bad chat flags and templates are one-line errors") {
  kiln::test::TempFolder dir("e2e_chat");
  const std::string simple = dir.file("simple.jinja");
  write_text(simple, "{% for m in messages %}{{ m.role | upper }}: {{ m.content }}\n{% endfor %}ASSISTANT:");
  const auto plain = run_process({STORIES_BIN, "-p", "USER: Once upon a time\nASSISTANT:", "--no-display-prompt", "--temp",
                                  "0", "-n", "16", "-t", "1"});
  const auto chat = run_process({STORIES_BIN, "-cnv", "--chat-template-file", simple, "--temp", "0", "-n", "16", "-t", "1"},
                                "Once upon a time\n");
  REQUIRE(chat.exit_code == 0);
  CHECK(chat.out == "> " + plain.out + "> ");
  CHECK(chat.err.find("ChatML") == std::string::npos);

  const std::string broken = dir.file("broken.jinja");
  write_text(broken, "{% for m in messages %}\n  {{ m.content | frobnicate }}\n{% endfor %}");
  const auto bad = run_process({STORIES_BIN, "-cnv", "--chat-template-file", broken, "-t", "1"}, "Hi\n");
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find(broken + ":2:18: filter 'frobnicate' is not supported") != std::string::npos);

  const std::string strict = dir.file("strict.jinja");
  write_text(strict, "{% if messages[0].role != 'system' %}{{ raise_exception('A system message is required') }}{% endif %}");
  const auto raised = run_process({STORIES_BIN, "-cnv", "--chat-template-file", strict, "-t", "1"}, "Hi\n");
  CHECK(raised.exit_code == 1);
  CHECK(raised.err.find("raise_exception: A system message is required") != std::string::npos);

  struct BadFlags {
    std::vector<std::string> args;
    const char* message;
  };
  const BadFlags cases[] = {
      {{"-sys", "Be kind."}, "-sys: a system prompt needs conversation mode (-cnv)"},
      {{"--chat-template-file", simple}, "--chat-template-file: needs conversation mode (-cnv)"},
      {{"-cnv", "--chat-template-file", dir.file("missing.jinja")}, "--chat-template-file: cannot read"},
      {{"-cnv", "--prompt-ids", "1 2"}, "-cnv: cannot be combined with --prompt-ids"},
      {{"-cnv", "-sys"}, "-sys: missing value"},
  };
  for (const BadFlags& c : cases) {
    std::vector<std::string> argv = {STORIES_BIN};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto r = run_process(argv, "Hi\n");
    CAPTURE(c.message);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}
