#include "examples/cli.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

#include "engine/error.hpp"
#include "engine/session.hpp"
#include "examples/cli_options.hpp"

namespace kiln {

namespace {

void print_text(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

double per_second(int count, double ms) { return ms > 0 ? 1000.0 * count / ms : 0.0; }

int run(int argc, char** argv, const char* name, const char* default_gguf, LoadModelFn load) {
  const CliOptions opt = parse_cli(argc, argv);
  if (opt.help) {
    std::fputs(cli_usage(name, default_gguf).c_str(), stdout);
    return 0;
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Model> model = load(opt.model_path.empty() ? default_gguf : opt.model_path);
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  model->set_threads(threads);

  const Tokenizer& tok = model->tokenizer();
  const std::vector<int32_t> prompt = tok.encode(opt.prompt, /*add_special=*/true);
  if (prompt.empty()) throw Error("the prompt encodes to no tokens and the model adds no BOS: give a prompt with -p");
  Sampler sampler(opt.sampling, model->n_vocab());

  Session session(*model);
  Detokenizer detok(tok);
  for (int32_t t : prompt) {
    const std::string piece = detok.push(t);
    if (opt.display_prompt) print_text(piece);
  }
  const GenerationStats s =
      generate(session, prompt, opt.n_predict, sampler, [&](int32_t t) { print_text(detok.push(t)); });
  print_text(detok.flush() + "\n");

  std::fprintf(stderr, "\n%s: %d threads, seed %llu%s\n", name, threads,
               static_cast<unsigned long long>(sampler.seed()), s.context_full ? ", stopped: context full" : "");
  std::fprintf(stderr, "load time         = %10.2f ms\n", load_ms);
  std::fprintf(stderr, "prompt            = %10.2f ms / %5d tokens (%9.2f tokens/s)\n", s.prompt_ms, s.prompt_tokens,
               per_second(s.prompt_tokens, s.prompt_ms));
  std::fprintf(stderr, "generation        = %10.2f ms / %5d tokens (%9.2f tokens/s)\n", s.generate_ms,
               s.generated_tokens, per_second(s.generated_tokens, s.generate_ms));
  std::fprintf(stderr, "time to 1st token = %10.2f ms\n", s.ttft_ms);
  return 0;
}

}  // namespace

int cli_main(int argc, char** argv, const char* name, const char* default_gguf, LoadModelFn load) {
  try {
    return run(argc, argv, name, default_gguf, load);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace kiln
