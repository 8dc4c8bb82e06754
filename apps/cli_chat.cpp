#include "apps/cli_chat.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <optional>

#include "engine/chat/chat_prompt.hpp"
#include "engine/error/error.hpp"
#include "apps/output_grammar.hpp"

namespace kiln {

chat::ChatTemplate load_chat_template(const Model& model, const std::string& template_file) {
  if (!template_file.empty()) {
    std::ifstream in(template_file, std::ios::binary);
    if (!in) throw Error("--chat-template-file: cannot read '" + template_file + "'");
    const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return chat::ChatTemplate(source, template_file);
  }
  const std::optional<std::string> source = chat::gguf_chat_template(model.gguf());
  if (!source) {
    std::fputs("conversation: the GGUF has no tokenizer.chat_template; using ChatML (<|im_start|>role ... <|im_end|>)\n",
               stderr);
    return chat::ChatTemplate(chat::kChatMlTemplate, "chatml");
  }
  try {
    return chat::ChatTemplate(*source, "tokenizer.chat_template");
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (give a template with --chat-template-file)");
  }
}

std::tm local_now() {
  const std::time_t t = std::time(nullptr);
  std::tm now{};
  localtime_r(&t, &now);
  return now;
}

GenerationStats run_conversation(Session& session, const Options& opt, Sampler& sampler, const ChatIo& io) {
  const Model& model = session.model();
  const Tokenizer& tok = model.tokenizer();
  const OutputGrammar grammar(opt, tok);  // each reply follows it
  chat::Conversation chat(tok, load_chat_template(model, opt.chat_template_file), local_now());
  if (!opt.system_prompt.empty()) chat.add_message("system", opt.system_prompt);
  GenerationStats total;
  std::string first_turn = opt.prompt;  // -p or -f: the first user turn
  for (int turn = 1;;) {
    std::string user = first_turn;
    first_turn.clear();
    while (user.empty()) {  // as llama.cpp: an empty line asks again
      io.print("> ");
      if (!io.read_line(user)) return total;
    }
    // At most n_ctx - 1 tokens, so that the reply has room for a token; a
    // line that does not fit is refused, as in -i, and the conversation goes
    // on. One too long for the context in bytes alone is refused before it
    // is rendered (chat templates write a message's content into the prompt),
    // so that it spends none of the renderer's limits.
    const size_t max_tokens = static_cast<size_t>(model.n_ctx()) - 1;
    std::optional<std::vector<int32_t>> fitting;
    if (user.size() <= tok.max_text_bytes(max_tokens)) {
      chat.add_message("user", user);
      fitting = chat.prompt_for_reply(max_tokens);
    }
    if (!fitting) {
      std::fprintf(stderr, "conversation: with this line the prompt would fill the context (%d tokens, set at build "
                   "time: kiln_add_model CTX); it was not added\n", model.n_ctx());
      continue;
    }
    const std::vector<int32_t>& prompt = *fitting;

    // The reply's text as it reads after the prompt (SentencePiece's leading
    // space is only dropped at the start of a text, not of a reply).
    Detokenizer detok(tok);
    for (int32_t t : prompt) detok.push(t);
    std::vector<int32_t> reply;
    std::string reply_text;
    grammar.constrain(sampler);
    const GenerationStats s = generate(session, prompt, opt.n_predict, sampler, [&](int32_t t) {
      reply.push_back(t);
      const std::string piece = detok.push(t);
      reply_text += piece;
      io.print(piece);
      return true;
    });
    const std::string rest = detok.flush();
    reply_text += rest;
    io.print(rest + "\n");
    chat.add_reply(reply, reply_text);

    std::fprintf(stderr, "turn %d: %d prompt tokens, %d reused, %d computed; %d generated%s\n", turn, s.prompt_tokens,
                 s.reused_tokens, s.prompt_tokens - s.reused_tokens, s.generated_tokens,
                 s.context_full ? "; stopped: context full" : "");
    total.prompt_tokens += s.prompt_tokens;
    total.reused_tokens += s.reused_tokens;
    total.generated_tokens += s.generated_tokens;
    total.prompt_ms += s.prompt_ms;
    total.generate_ms += s.generate_ms;
    if (turn == 1) total.ttft_ms = s.ttft_ms;
    total.context_full = s.context_full;
    ++turn;
  }
}

}  // namespace kiln
