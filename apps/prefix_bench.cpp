#include "apps/prefix_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "engine/error/error.hpp"
#include "engine/session/session.hpp"
#include "engine/session/state_file.hpp"
#include "apps/bench_stats.hpp"

namespace kiln {

namespace {

std::vector<int32_t> random_prompt(const Model& model, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, model.n_vocab() - 1);
  std::vector<int32_t> prompt = {model.tokenizer().bos()};
  while (prompt.size() < static_cast<size_t>(n)) prompt.push_back(id(rng));
  return prompt;
}

// Median milliseconds of `runs` calls of `work`, each ending when the first
// token is picked from the logits it returns.
template <class Work>
double median_ttft_ms(int runs, Work&& work) {
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::span<const float> logits = work();
    // volatile: picking the token is part of the time, so it must not be optimized away.
    volatile auto first_token = std::max_element(logits.begin(), logits.end()) - logits.begin();
    (void)first_token;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

// Removes the scratch state file however the benchmark ends.
struct ScratchFile {
  std::string path;
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", ms);
  return text;
}

std::string format_ratio(double cold_ms, double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1fx", ms > 0 ? cold_ms / ms : 0.0);
  return text;
}

}  // namespace

PrefixBenchResult run_prefix_bench(Session& session, const PrefixBenchOptions& options) {
  const Model& model = session.model();
  if (options.runs < 1) throw Error("prefix benchmark: runs must be at least 1");
  const int n = std::min(options.prompt_tokens, model.n_ctx());
  if (n < 2) throw Error("prefix benchmark: the prompt needs at least 2 tokens");
  for (int percent : options.cached_percent)
    if (percent < 0 || percent > 100) throw Error("prefix benchmark: cached share " + std::to_string(percent) + " %");

  const std::vector<int32_t> prompt = random_prompt(model, n, options.seed);
  const ScratchFile file{options.state_file.empty()
                             ? (std::filesystem::temp_directory_path() /
                                ("kiln-prefix-bench-" + std::to_string(::getpid()) + ".state"))
                                   .string()
                             : options.state_file};
  PrefixBenchResult result{n, options.runs, session.sequence().threads(), 0, {}};

  session.ingest_prompt(prompt);  // warm-up: weights paged in, cache pages touched
  result.cold_ms = median_ttft_ms(options.runs, [&] {
    session.reset();
    return session.ingest_prompt(prompt);
  });

  for (int percent : options.cached_percent) {
    PrefixBenchRow row{percent, n * percent / 100, 0, 0};
    session.reset();
    if (row.cached_tokens > 0) session.ingest(std::span(prompt).first(static_cast<size_t>(row.cached_tokens)));
    const SessionState cached = session.snapshot();
    write_state_file(file.path, cached);
    row.memory_ms = median_ttft_ms(options.runs, [&] {
      session.restore_prefix(cached, prompt);
      return session.ingest_prompt(prompt);
    });
    row.disk_ms = median_ttft_ms(options.runs, [&] {
      session.restore_prefix(read_state_file(file.path), prompt);
      return session.ingest_prompt(prompt);
    });
    result.rows.push_back(row);
  }
  return result;
}

std::string PrefixBenchResult::markdown() const {
  std::string md = "Time to first token, " + std::to_string(prompt_tokens) + "-token prompt, " +
                   std::to_string(threads) + " threads, median of " + std::to_string(runs) +
                   " runs (the state file is read from the OS page cache).\n\n"
                   "| cached | computed | TTFT, state in memory | TTFT, state file | speed-up (memory / file) |\n"
                   "| ---: | ---: | ---: | ---: | ---: |\n";
  md += "| none (cold) | " + std::to_string(prompt_tokens) + " | " + format_ms(cold_ms) + " | | 1.0x |\n";
  for (const PrefixBenchRow& r : rows) {
    // A fully cached prompt still computes its last position for the logits.
    const int computed = std::max(prompt_tokens - r.cached_tokens, 1);
    md += "| " + std::to_string(r.cached_percent) + " % (" + std::to_string(r.cached_tokens) + ") | " +
          std::to_string(computed) + " | " + format_ms(r.memory_ms) + " | " + format_ms(r.disk_ms) + " | " +
          format_ratio(cold_ms, r.memory_ms) + " / " + format_ratio(cold_ms, r.disk_ms) + " |\n";
  }
  return md;
}

}  // namespace kiln
