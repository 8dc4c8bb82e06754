#include "apps/cli.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "apps/cli_chat.hpp"
#include "apps/cli_support.hpp"
#include "apps/logits_dump.hpp"
#include "apps/options/parse_options.hpp"
#include "apps/options/usage.hpp"
#include "apps/output_grammar.hpp"
#include "apps/prompt_cache.hpp"
#include "engine/error/error.hpp"
#include "engine/model/load_threads.hpp"
#include "engine/model/model_path.hpp"
#include "engine/session/session.hpp"
#include "engine/timing/elapsed.hpp"

namespace kiln {

namespace {

double per_second(int count, double ms) { return ms > 0 ? 1000.0 * count / ms : 0.0; }

void print_header(const char* name, const Model& model, int threads, const Sampler& sampler, double load_ms) {
  std::fprintf(stderr, "\n%s: %d threads, seed %llu\n", name, threads, static_cast<unsigned long long>(sampler.seed()));
  std::fprintf(stderr, "weights           = %s\n", model.gguf_path().c_str());
  std::fprintf(stderr, "load time         = %10.2f ms\n", load_ms);
}

void print_timings(const GenerationStats& s) {
  const int computed = s.prompt_tokens - s.reused_tokens;  // what prompt_ms was spent on
  std::fprintf(stderr, "prompt            = %10.2f ms / %5d tokens (%9.2f tokens/s)\n", s.prompt_ms, computed,
               per_second(computed, s.prompt_ms));
  std::fprintf(stderr, "generation        = %10.2f ms / %5d tokens (%9.2f tokens/s)%s\n", s.generate_ms,
               s.generated_tokens, per_second(s.generated_tokens, s.generate_ms),
               s.context_full ? ", stopped: context full" : "");
  std::fprintf(stderr, "time to 1st token = %10.2f ms\n", s.ttft_ms);
}

int run(int argc, char** argv, const ModelEntry& entry) {
  const char* name = entry.name;
  // A write beyond the file size limit then fails (and is cleaned up) instead of killing the program.
  std::signal(SIGXFSZ, SIG_IGN);
  std::optional<Options> parsed = parse_options(kCli, argc, argv, entry);
  if (!parsed) return 0;
  Options& opt = *parsed;

  const int wanted = wanted_threads(opt);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Model> model = [&] {
    const LoadThreads load_threads(wanted);
    return load_model(entry, opt.model_path);
  }();
  const double load_ms = ms_since(t0);
  Session session(*model);
  session.sequence().set_threads(wanted);
  const int threads = session.sequence().threads();
  if (threads < wanted)
    std::fprintf(stderr, "-t %d: more than this program can run (build and OpenMP limits); using %d\n", wanted, threads);
  if (!opt.prompt_file.empty()) {
    // No more of it is read than the context could hold; in a conversation
    // (the first user turn) a longer one is refused like any line too long.
    const size_t could_fit = model->tokenizer().max_text_bytes(size_t(model->n_ctx()));
    opt.prompt = read_text_file("-f", opt.prompt_file, "prompt file", could_fit);
    if (opt.prompt.size() > could_fit && !opt.conversation) throw Error(prompt_longer_than_context(*model));
  }
  if (opt.conversation) {
    Sampler sampler(opt.sampling, model->n_vocab());
    const ChatIo io{print_text, [](std::string& line) { return static_cast<bool>(std::getline(std::cin, line)); }};
    const GenerationStats total = run_conversation(session, opt, sampler, io);
    print_header(name, *model, threads, sampler, load_ms);
    print_timings(total);
    return 0;
  }

  const Tokenizer& tok = model->tokenizer();
  // Special-token text in a prompt (e.g. "<|im_start|>") is read as that token, as llama.cpp does.
  const std::vector<int32_t> prompt = !opt.prompt_ids.empty() ? opt.prompt_ids : tokenize_prompt(*model, opt.prompt);
  if (prompt.empty()) throw Error("the prompt encodes to no tokens and the model adds no BOS: give a prompt with -p");
  check_prompt_fits(*model, prompt.size());  // before any of it is printed (--prompt-ids)
  Sampler sampler(opt.sampling, model->n_vocab());
  const OutputGrammar grammar(opt, tok);

  for (int32_t id : prompt)
    if (id >= model->n_vocab())
      throw Error("--prompt-ids: token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                  std::to_string(model->n_vocab() - 1) + ")");
  if (!opt.logits_out.empty()) write_prompt_logits(session, prompt, opt.logits_out);
  std::optional<PromptCache> prompt_cache;
  double cache_load_ms = 0;
  if (!opt.prompt_cache.empty()) {
    const auto t_cache = std::chrono::steady_clock::now();
    prompt_cache.emplace(opt.prompt_cache, opt.prompt_cache_ro);
    prompt_cache->restore(session, prompt);
    cache_load_ms = ms_since(t_cache);
  }
  Detokenizer detok(tok);
  for (int32_t t : prompt) {
    const std::string piece = detok.push(t);
    if (opt.display_prompt) print_text(piece);
  }
  // The prompt and everything generated since: an interactive turn appends to it,
  // and the session then computes only what was appended.
  std::vector<int32_t> context = prompt;
  const auto on_token = [&](int32_t t) {
    context.push_back(t);
    print_text(detok.push(t));
    return true;
  };
  grammar.constrain(sampler);
  GenerationStats s = generate(session, context, opt.n_predict, sampler, on_token);
  print_text(detok.flush() + "\n");
  if (prompt_cache) prompt_cache->save(session, prompt);

  print_header(name, *model, threads, sampler, load_ms);
  if (prompt_cache)
    std::fprintf(stderr, "prompt cache: reused %d of %d tokens (read in %.2f ms)\n", s.reused_tokens, s.prompt_tokens,
                 cache_load_ms);
  print_timings(s);

  while (opt.interactive) {
    print_text("> ");
    std::string line;
    if (!std::getline(std::cin, line)) break;
    const size_t left = size_t(model->n_ctx()) - context.size();
    const std::optional<std::vector<int32_t>> more =
        tok.encode_at_most(left, line + "\n", /*add_special=*/false, /*parse_special=*/true);
    if (!more) {
      std::fprintf(stderr, "this line is more than the %zu of %d positions the context has left; it was not added\n",
                   left, model->n_ctx());
      continue;
    }
    context.insert(context.end(), more->begin(), more->end());
    s = generate(session, context, opt.n_predict, sampler, on_token);
    print_text(detok.flush() + "\n");
    std::fprintf(stderr, "\nturn: reused %d of %d context tokens\n", s.reused_tokens, s.prompt_tokens);
    print_timings(s);
  }
  return 0;
}

}  // namespace

std::unique_ptr<Model> load_model(const ModelEntry& model, const std::string& m_flag) {
  return m_flag.empty() ? model.load_default() : model.load_file(m_flag);
}

std::string default_model_text(const ModelEntry& model) {
  if (model.built_in) return "the weights built into this program";
  const std::string file = std::filesystem::path(model.build_gguf).filename().string();
  // Appended piece by piece: GCC 12's -Wrestrict misfires on "literal" + std::string&& at -O3 with ASan (bug 105329).
  std::string text = "$";
  text.append(kModelPathVariable).append(", else ").append(file).append(" next to this program, else ");
  return text.append(model.build_gguf);
}

int cli_main(int argc, char** argv, const ModelEntry& model) {
  return run_reporting_errors(program_name(kCli, model), [&] { return run(argc, argv, model); });
}

}  // namespace kiln
