// Conversation mode of the command-line program (-cnv): user turns read from
// stdin, each rendered with the model's chat template, replies streamed to
// stdout until the model's end-of-turn token.
#pragma once

#include <ctime>
#include <functional>
#include <string>

#include "engine/chat/chat_template.hpp"
#include "engine/model/model.hpp"
#include "engine/session/sampler.hpp"
#include "engine/session/session.hpp"
#include "apps/options/options.hpp"

namespace kiln {

// The template to render conversations with: `template_file` if given (a
// Jinja file), else the GGUF's tokenizer.chat_template, else ChatML (said on
// stderr). Throws kiln::Error for an unreadable file or a template kiln
// cannot parse.
chat::ChatTemplate load_chat_template(const Model& model, const std::string& template_file);
// The local date and time, for templates that print today's date.
std::tm local_now();

// The program's own output and input: text for stdout, and one line of
// stdin (false at its end).
struct ChatIo {
  std::function<void(const std::string&)> print;
  std::function<bool(std::string&)> read_line;
};

// Runs the conversation in `session` until the input ends; returns the totals of all
// turns (prompt and reused tokens summed, time to first token of the first
// turn). Prints one line per turn on stderr: its prompt tokens, how many the
// session reused, how many it computed, and how many it generated.
GenerationStats run_conversation(Session& session, const Options& opt, Sampler& sampler, const ChatIo& io);

}  // namespace kiln
