#include "apps/perplexity.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "apps/cli_support.hpp"
#include "apps/options/parse_options.hpp"
#include "apps/options/usage.hpp"
#include "apps/perplexity_score.hpp"
#include "engine/error/error.hpp"
#include "engine/model/load_threads.hpp"
#include "engine/timing/elapsed.hpp"

namespace kiln {

namespace {

int run(int argc, char** argv, const std::string& program, const ModelEntry& entry) {
  const std::optional<Options> parsed = parse_options(kPerplexity, argc, argv, entry);
  if (!parsed) return 0;
  const Options& opt = *parsed;
  // The text first: a wrong path is reported before the model is mapped.
  const std::string text = read_text_file("-f", opt.text_path, "text file");

  const int wanted = wanted_threads(opt);
  std::unique_ptr<Model> model = [&] {
    const LoadThreads load_threads(wanted);
    return load_model(entry, opt.model_path);
  }();
  const int n_ctx = opt.n_ctx > 0 ? opt.n_ctx : model->n_ctx();
  if (n_ctx > model->n_ctx())
    throw Error("-c " + std::to_string(n_ctx) + ": larger than the context this program was compiled for (" +
                std::to_string(model->n_ctx()) + "); recompile with a larger CTX");
  if (scored_per_chunk(n_ctx) < 1) throw Error("-c " + std::to_string(n_ctx) + ": a chunk needs at least 3 tokens");
  std::unique_ptr<Sequence> sequence = model->new_sequence();
  sequence->set_threads(wanted);

  // The whole text at once, with BOS as the vocabulary asks, special-token
  // text read as text (llama-perplexity's tokenization).
  const std::vector<int32_t> tokens = model->tokenizer().encode(text, /*add_special=*/true);
  const int available = static_cast<int>(tokens.size() / static_cast<size_t>(n_ctx));
  if (available == 0)
    throw Error("'" + opt.text_path + "' is " + std::to_string(tokens.size()) + " tokens, fewer than one chunk of " +
                std::to_string(n_ctx) + " (give a longer text or a smaller -c)");
  const int n_chunks = opt.chunks > 0 ? std::min(opt.chunks, available) : available;
  std::fprintf(stderr, "%s: %zu tokens; %d chunks of %d tokens, batch %d, %d threads\n", program.c_str(),
               tokens.size(), n_chunks, n_ctx, model->max_batch(), sequence->threads());

  NllStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < n_chunks; ++c) {
    const auto begin = tokens.begin() + static_cast<ptrdiff_t>(c) * n_ctx;
    score_chunk(*sequence, std::vector<int32_t>(begin, begin + n_ctx), stats);
    char estimate[64];
    std::snprintf(estimate, sizeof estimate, "[%d]%.4f,", c + 1, stats.perplexity());
    print_text(estimate);
  }
  const double seconds = seconds_since(t0);
  print_text("\n");

  char final_line[128];
  const double error = stats.uncertainty();
  if (std::isnan(error))
    std::snprintf(final_line, sizeof final_line, "Final estimate: PPL = %.4f (too few tokens for an uncertainty)\n",
                  stats.perplexity());
  else
    std::snprintf(final_line, sizeof final_line, "Final estimate: PPL = %.4f +/- %.5f\n", stats.perplexity(), error);
  print_text(final_line);
  const double evaluated = double(n_chunks) * n_ctx;
  std::fprintf(stderr, "%s: %.0f tokens evaluated in %.2f s (%.2f tokens/s), %lld scored\n", program.c_str(),
               evaluated, seconds, seconds > 0 ? evaluated / seconds : 0.0, static_cast<long long>(stats.count));
  return 0;
}

}  // namespace

int perplexity_main(int argc, char** argv, const ModelEntry& model) {
  const std::string program = program_name(kPerplexity, model);
  return run_reporting_errors(program, [&] { return run(argc, argv, program, model); });
}

}  // namespace kiln
