#include "apps/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>

#include "apps/bench_stats.hpp"
#include "apps/cli_support.hpp"
#include "apps/load_bench.hpp"
#include "apps/machine_probe.hpp"
#include "apps/options/parse_options.hpp"
#include "apps/options/usage.hpp"
#include "apps/prefix_bench.hpp"
#include "apps/resident_memory.hpp"
#include "apps/token_profile.hpp"
#include "engine/error/error.hpp"
#include "engine/model/load_threads.hpp"
#include "engine/timing/elapsed.hpp"
#include "kernels/argmax.hpp"
#include "kernels/dot_q8.hpp"

namespace kiln {

namespace {

using Clock = std::chrono::steady_clock;

// What one token costs the hardware, from the model description.
struct ModelCost {
  double weight_bytes_per_token = 0;  // every matrix once (of a mixture, the experts used), one embedding row
  double matmul_flops_per_token = 0;  // 2 x multiply-adds of the block matrices
  double int8_flops_per_token = 0;    // the part of those whose weights are multiplied in int8 (reads_q8)
  double output_flops = 0;            // 2 x multiply-adds of the classifier (once per logits row)
  bool int8_output = false;           // whether the classifier is multiplied in int8
  double file_bytes = 0;
  double params = 0;
};

ModelCost model_cost(const ModelDesc& d) {
  ModelCost c;
  for (const auto& t : d.tensors) {
    double elems = 1;
    for (int64_t x : t.dims) elems *= double(x);
    const double bytes = double(row_bytes(t.type, t.dims[0])) * elems / double(t.dims[0]);
    c.file_bytes += bytes;
    c.params += elems;
    const bool classifier = t.name == "output.weight" || (d.hp.tied_output && t.name == "token_embd.weight");
    if (t.name == "token_embd.weight") c.weight_bytes_per_token += bytes / double(t.dims[1]);
    const bool int8 = kernels::reads_q8(t.type);
    if (classifier) {
      c.weight_bytes_per_token += bytes;
      c.output_flops = 2 * elems;
      c.int8_output = int8;
    } else if (t.dims.size() == 2 && t.name != "token_embd.weight") {
      c.weight_bytes_per_token += bytes;
      c.matmul_flops_per_token += 2 * elems;
      if (int8) c.int8_flops_per_token += 2 * elems;
    } else if (t.dims.size() == 3) {  // a mixture's experts: a token reads the ones it is routed to
      const double used = double(d.hp.n_expert_used) / double(t.dims[2]);
      c.weight_bytes_per_token += bytes * used;
      c.matmul_flops_per_token += 2 * elems * used;
      if (int8) c.int8_flops_per_token += 2 * elems * used;
    }
  }
  return c;
}

// Attention work of one token at position pos: q.k and the weighted sum of v.
double attention_flops(const Hyperparams& h, int pos) { return 4.0 * h.n_layer * h.n_head * h.head_dim * (pos + 1); }

// The memory target: the program's resident memory at most the
// weights plus the KV cache plus 5 %.
struct MemoryCheck {
  std::optional<int64_t> peak_bytes;  // VmHWM after the runs; nullopt where it is not available
  std::optional<int64_t> now_bytes;   // VmRSS after the runs: what stays of the peak
  double weights_bytes = 0;
  double kv_cache_bytes = 0;  // the whole cache compiled in
  int kv_positions = 0;

  double budget_bytes() const { return weights_bytes + kv_cache_bytes; }
};

MemoryCheck memory_check(const Model& m, const ModelCost& cost, bool peak_valid) {
  MemoryCheck c;
  if (peak_valid) c.peak_bytes = own_status_bytes("VmHWM");
  c.now_bytes = own_status_bytes("VmRSS");
  c.weights_bytes = cost.file_bytes;
  c.kv_positions = m.n_ctx();
  c.kv_cache_bytes = double(m.kv_layout().bytes_per_position()) * m.n_ctx();
  return c;
}

struct Result {
  std::string test;  // "pp512" / "tg128"
  int threads = 0;
  double tokens_per_s = 0, spread = 0;
  double ttft_ms = 0;                  // pp: ingest + first token
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;  // tg: per-token latency
  double gbps = 0, bw_fraction = 0;    // tg
  double gflops = 0, peak_fraction = 0;  // pp
  std::optional<TokenProfile> profile;  // tg: the kernel calls of the token at the middle position
  int tokens = 0, tokens_on_fewer = 0;  // tg: measured tokens, and those the team backed off for (kernels/team_backoff.hpp)

  // tg: the median time per token beyond its kernels, in µs.
  double overhead_us() const { return 1e3 * p50_ms - 1e6 * profile->kernels.total(); }
};

std::vector<int32_t> random_tokens(int n, int vocab) {
  std::mt19937 rng(42);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) id = std::uniform_int_distribution<int32_t>(0, vocab - 1)(rng);
  return ids;
}

int argmax(const std::vector<float>& v) { return static_cast<int>(kernels::argmax(v.data(), std::ssize(v))); }

// Ingests `ids` from position `first`; returns the time to the first generated token.
double run_prompt(Sequence& seq, const std::vector<int32_t>& ids, int first, std::vector<float>& logits) {
  const Model& m = seq.model();
  const auto t0 = Clock::now();
  for (int i = 0; i < int(ids.size()); i += m.max_batch()) {
    const int n = std::min(m.max_batch(), int(ids.size()) - i);
    const bool last = i + n == int(ids.size());
    seq.forward(ids.data() + i, n, first + i, last ? Logits::Last : Logits::None, logits.data());
  }
  volatile int first_token = argmax(logits);
  (void)first_token;
  return ms_since(t0);
}

// The positions a test at depth D finds in the cache (-d): D random tokens,
// ingested untimed. They are kept while tests write only after them; a test
// at a smaller depth overwrites them, and a sliding-window layer's ring moves
// on as a test writes, so they are ingested again where a window is gone.
class DepthFill {
 public:
  void before_run(Sequence& seq, int depth) {
    const bool window_held = kv_continues_at(seq.model().sliding_window(), seq.kv_held_from(), depth);
    if (depth > 0 && (filled_ < depth || !window_held)) {
      std::vector<float> logits(size_t(seq.model().n_vocab()));
      run_prompt(seq, random_tokens(depth, seq.model().n_vocab()), 0, logits);
    }
    filled_ = depth;  // the run writes from here on
  }

 private:
  int filled_ = 0;
};

std::string test_name(const char* kind, int n, int depth) {
  return kind + std::to_string(n) + (depth > 0 ? " @ d" + std::to_string(depth) : "");
}

Result bench_prompt(Sequence& seq, int p, int depth, DepthFill& fill, int reps, const ModelCost& cost,
                    const MachineLimits* limits) {
  const Model& m = seq.model();
  const std::vector<int32_t> ids = random_tokens(p, m.n_vocab());
  std::vector<float> logits(size_t(m.n_vocab()));
  fill.before_run(seq, depth);
  run_prompt(seq, ids, depth, logits);  // warm-up: pages in the weights
  std::vector<double> ms, rates;
  for (int r = 0; r < reps; ++r) {
    fill.before_run(seq, depth);
    ms.push_back(run_prompt(seq, ids, depth, logits));
    rates.push_back(1000.0 * p / ms.back());
  }
  const double int8_flops = cost.int8_flops_per_token * p + (cost.int8_output ? cost.output_flops : 0);
  double flops = cost.matmul_flops_per_token * p + cost.output_flops;
  for (int pos = depth; pos < depth + p; ++pos) flops += attention_flops(m.desc().hp, pos);
  Result r;
  r.test = test_name("pp", p, depth);
  r.threads = seq.threads();
  r.tokens_per_s = median(rates);
  r.spread = stddev(rates);
  r.ttft_ms = median(ms);
  r.gflops = flops / (r.ttft_ms / 1000.0) / 1e9;
  // The fraction of the peaks: the time the work would take at the int8 peak
  // (quantized weights) and the FP32 peak (the rest) over the time it took.
  if (limits && limits->fp32_gflops_per_core > 0 && (int8_flops == 0 || limits->int8_gops_per_core > 0)) {
    const double int8_s = int8_flops > 0 ? int8_flops / (limits->int8_gops_per_core * 1e9) : 0;
    const double fp32_s = (flops - int8_flops) / (limits->fp32_gflops_per_core * 1e9);
    r.peak_fraction = (int8_s + fp32_s) / r.threads / (r.ttft_ms / 1000.0);
  }
  return r;
}

// `fit`: the threads the work of one token is given (ThreadFit::ByWork, before
// any backoff), which can be fewer than -t; tokens that ran on fewer are counted.
Result bench_generation(Sequence& seq, int fit, int n, int depth, DepthFill& fill, int reps, const ModelCost& cost,
                        const MachineLimits* limits) {
  const Model& m = seq.model();
  std::vector<float> logits(size_t(m.n_vocab()));
  std::vector<double> per_token_ms, rates;
  int on_fewer = 0;
  for (int r = -1; r < reps; ++r) {  // r == -1 is the warm-up
    fill.before_run(seq, depth);
    int32_t token = 1;
    const auto t_run = Clock::now();
    for (int pos = depth; pos < depth + n; ++pos) {
      const auto t0 = Clock::now();
      if (r >= 0 && seq.threads_for(1) < fit) ++on_fewer;
      seq.forward(&token, 1, pos, Logits::Last, logits.data());
      token = argmax(logits);
      if (r >= 0) per_token_ms.push_back(ms_since(t0));
    }
    if (r >= 0) rates.push_back(1000.0 * n / ms_since(t_run));
  }
  // Positions read, on average over the run.
  const double kv_bytes = double(m.kv_layout().bytes_per_position()) * (depth + (n + 1) / 2.0);
  Result r;
  r.tokens = n * reps;
  r.tokens_on_fewer = on_fewer;
  r.test = test_name("tg", n, depth);
  r.threads = seq.threads();
  r.tokens_per_s = median(rates);
  r.spread = stddev(rates);
  r.p50_ms = percentile(per_token_ms, 0.5);
  r.p90_ms = percentile(per_token_ms, 0.9);
  r.p99_ms = percentile(per_token_ms, 0.99);
  r.gbps = (cost.weight_bytes_per_token + kv_bytes) * r.tokens_per_s / 1e9;
  if (limits) r.bw_fraction = r.gbps / limits->bandwidth(r.threads);
  return r;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string signed_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.*f", decimals, v);
  return buf;
}

std::string percent(double fraction) { return fraction > 0 ? fixed(100 * fraction, 0) + " %" : "-"; }

// One line per tg test: what the kernel calls of its middle token cost, by kind.
void print_token_profile(const std::string& name, const Result& r) {
  const TokenProfile& p = *r.profile;
  auto us = [](double seconds) { return fixed(1e6 * seconds, 1); };
  std::printf("kernels: %s %s, %d thread(s), token at position %d timed on %d, median of %d timed passes: "
              "matmul %s + attention %s + other %s = %s µs in %d calls; p50 token %s µs, overhead %s µs; "
              "timing added %s µs per call (mostly a barrier, as most kernels end with), taken off\n",
              name.c_str(), r.test.c_str(), r.threads, p.pos, p.kernels.threads, p.runs,
              us(p.kernels[KernelKind::Matmul]).c_str(), us(p.kernels[KernelKind::Attention]).c_str(),
              us(p.kernels[KernelKind::Other]).c_str(), us(p.kernels.total()).c_str(), p.kernels.total_calls(),
              fixed(1e3 * r.p50_ms, 1).c_str(), fixed(r.overhead_us(), 1).c_str(),
              fixed(1e6 * p.kernels.timing_cost, 2).c_str());
}

void print_memory(const std::string& name, const MemoryCheck& m) {
  if (!m.peak_bytes) {
    std::printf("memory: %s: peak resident memory not measured (no VmHWM in /proc/self/status, or it could not be "
                "reset after --probe)\n", name.c_str());
    return;
  }
  std::printf("memory: %s: peak resident %s MB (%s MB at the end) vs weights %s MB + KV cache %s MB (%d positions) "
              "= %s MB: %s %% (target: at most +5 %%)\n",
              name.c_str(), fixed(double(*m.peak_bytes) / 1e6, 1).c_str(),
              m.now_bytes ? fixed(double(*m.now_bytes) / 1e6, 1).c_str() : "?", fixed(m.weights_bytes / 1e6, 1).c_str(),
              fixed(m.kv_cache_bytes / 1e6, 1).c_str(), m.kv_positions, fixed(m.budget_bytes() / 1e6, 1).c_str(),
              signed_fixed(100 * (double(*m.peak_bytes) / m.budget_bytes() - 1), 1).c_str());
}

void print_markdown(const std::string& name, const ModelCost& cost, const std::vector<Result>& results,
                    const MemoryCheck& memory, const MachineLimits* limits) {
  std::printf("| model | size | threads | test | t/s | TTFT ms | ms/token p50 / p90 / p99 | GB/s | %% of BW | GFLOP/s | %% of peak "
              "| kernels µs/token | overhead µs/token |\n");
  std::printf("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : results) {
    const bool pp = r.test[0] == 'p';
    const std::string overhead =
        pp ? "-" : fixed(r.overhead_us(), 1) + " (" + fixed(100 * r.overhead_us() / (1e3 * r.p50_ms), 0) + " %)";
    std::printf("| %s | %s MB | %d | %s | %s ± %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name.c_str(),
                fixed(cost.file_bytes / 1e6, 1).c_str(), r.threads, r.test.c_str(), fixed(r.tokens_per_s, 2).c_str(),
                fixed(r.spread, 2).c_str(), pp ? fixed(r.ttft_ms, 2).c_str() : "-",
                pp ? "-" : (fixed(r.p50_ms, 3) + " / " + fixed(r.p90_ms, 3) + " / " + fixed(r.p99_ms, 3)).c_str(),
                pp ? "-" : fixed(r.gbps, 2).c_str(), pp ? "-" : percent(r.bw_fraction).c_str(),
                pp ? fixed(r.gflops, 1).c_str() : "-", pp ? percent(r.peak_fraction).c_str() : "-",
                pp ? "-" : fixed(1e6 * r.profile->kernels.total(), 1).c_str(), overhead.c_str());
  }
  std::printf("\n");
  for (const auto& r : results)
    if (r.profile) print_token_profile(name, r);
  for (const auto& r : results)
    if (r.tokens_on_fewer > 0)
      std::printf("backoff: %s %s, %d threads: %d of %d tokens ran on fewer, the team having waited for a thread "
                  "another process kept off its core (kernels/team_backoff.hpp)\n",
                  name.c_str(), r.test.c_str(), r.threads, r.tokens_on_fewer, r.tokens);
  print_memory(name, memory);
  if (limits)
    std::printf("machine: %s; read bandwidth %s GB/s (1 thread) .. %s GB/s (%zu threads); FP32 peak %s GFLOP/s per core (%s); int8 %s GOP/s per core (%s)\n",
                limits->cpu.c_str(), fixed(limits->read_gbps.front(), 1).c_str(), fixed(limits->read_gbps.back(), 1).c_str(),
                limits->read_gbps.size(), fixed(limits->fp32_gflops_per_core, 1).c_str(), limits->fp32_method.c_str(),
                fixed(limits->int8_gops_per_core, 1).c_str(), limits->int8_method.c_str());
  else
    std::printf("(no machine limits: run with --probe once to compare with this machine's bandwidth and peak)\n");
}

// The kernel profile of a tg result as JSON fields (zeros for pp, like the other fields that do not apply).
std::string json_profile_fields(const Result& r) {
  const TokenProfile p = r.profile.value_or(TokenProfile{});
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\"kernel_us\": %.4f, \"kernel_matmul_us\": %.4f, \"kernel_attention_us\": %.4f, "
                "\"kernel_other_us\": %.4f, \"kernel_calls\": %d, \"profile_pos\": %d, \"profile_threads\": %d, "
                "\"timing_cost_us\": %.4f, "
                "\"overhead_us\": %.4f",
                1e6 * p.kernels.total(), 1e6 * p.kernels[KernelKind::Matmul], 1e6 * p.kernels[KernelKind::Attention],
                1e6 * p.kernels[KernelKind::Other], p.kernels.total_calls(), p.pos, p.kernels.threads,
                1e6 * p.kernels.timing_cost, r.profile ? r.overhead_us() : 0.0);
  return buf;
}

std::string json_memory_fields(const MemoryCheck& m) {
  auto bytes = [](const std::optional<int64_t>& b) { return b ? std::to_string(*b) : std::string("null"); };
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "\"peak_rss_bytes\": %s, \"rss_bytes\": %s, \"weights_bytes\": %.0f, \"kv_cache_bytes\": %.0f",
                bytes(m.peak_bytes).c_str(), bytes(m.now_bytes).c_str(), m.weights_bytes, m.kv_cache_bytes);
  return buf;
}

void print_json(const std::string& name, const ModelCost& cost, const std::vector<Result>& results,
                const MemoryCheck& memory) {
  std::printf("[\n");
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::printf(
        "  {\"model\": \"%s\", \"size_bytes\": %.0f, \"params\": %.0f, \"threads\": %d, \"test\": \"%s\", "
        "\"tokens_per_s\": %.4f, \"stddev\": %.4f, \"ttft_ms\": %.4f, \"p50_ms\": %.4f, \"p90_ms\": %.4f, "
        "\"p99_ms\": %.4f, \"gbps\": %.4f, \"bandwidth_fraction\": %.4f, \"gflops\": %.4f, \"peak_fraction\": %.4f, "
        "\"tokens_on_fewer_threads\": %d, %s, %s}%s\n",
        name.c_str(), cost.file_bytes, cost.params, r.threads, r.test.c_str(), r.tokens_per_s, r.spread, r.ttft_ms,
        r.p50_ms, r.p90_ms, r.p99_ms, r.gbps, r.bw_fraction, r.gflops, r.peak_fraction, r.tokens_on_fewer,
        json_profile_fields(r).c_str(), json_memory_fields(memory).c_str(), i + 1 < results.size() ? "," : "");
  }
  std::printf("]\n");
}

int run(int argc, char** argv, const ModelEntry& entry, KernelTimer time_kernels) {
  const char* name = entry.name;
  std::optional<Options> parsed = parse_options(kBench, argc, argv, entry);
  if (!parsed) return 0;
  Options& o = *parsed;
  if (o.thread_counts.empty()) o.thread_counts = {hardware_threads()};
  if (o.load_child) return run_load_child(entry, o.model_path, o.thread_counts.front());
  if (o.load) {
    run_load_bench(entry, {o.model_path, o.thread_counts.front(), o.repetitions, o.drop_caches});
    return 0;
  }
  std::optional<MachineLimits> limits;
  const int max_threads = *std::max_element(o.thread_counts.begin(), o.thread_counts.end());
  const std::string limits_path = o.limits_path.empty() ? default_limits_path() : o.limits_path;
  if (o.probe) {
    std::fprintf(stderr, "%s-bench: measuring this machine (a few seconds)...\n", name);
    limits = probe_machine(std::max(max_threads, hardware_threads()));
    save_limits(*limits, limits_path);
    std::fprintf(stderr, "%s-bench: machine limits saved to %s\n", name, limits_path.c_str());
  } else if (!o.limits_path.empty()) {
    limits = load_limits(limits_path);
  } else if (std::filesystem::exists(limits_path)) {
    // The default cache may be from another kiln version: without it the
    // benchmark still runs, only without the machine's limits beside it.
    try {
      limits = load_limits(limits_path);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s-bench: warning: %s; not comparing with the machine's limits\n", name, e.what());
    }
  }
  // The probe's 2 GiB buffer is no part of the model's memory: the peak starts again after it.
  const bool peak_valid = !o.probe || reset_peak_resident();

  std::unique_ptr<Model> model = [&] {
    const LoadThreads load_threads(max_threads);
    return load_model(entry, o.model_path);
  }();
  const int depth = *std::max_element(o.depths.begin(), o.depths.end());
  const auto check_fits = [&](const char* flag, const std::vector<int>& sizes) {
    for (int size : sizes)
      if (depth + size > model->n_ctx())
        throw Error(flag + (" " + std::to_string(size)) + (depth ? " at -d " + std::to_string(depth) : "") +
                    " exceeds the context of " + std::to_string(model->n_ctx()));
  };
  check_fits("-p", o.prompt_sizes);
  check_fits("-n", o.gen_sizes);

  Session session(*model);
  Sequence& seq = session.sequence();
  if (o.prefix_tokens > 0) {
    for (int t : o.thread_counts) {
      seq.set_threads(t);
      PrefixBenchOptions prefix;
      prefix.prompt_tokens = o.prefix_tokens;
      prefix.runs = o.repetitions;
      std::printf("%s\n", run_prefix_bench(session, prefix).markdown().c_str());
    }
    return 0;
  }

  const ModelCost cost = model_cost(model->desc());
  std::vector<Result> results;
  DepthFill fill;
  for (int t : o.thread_counts) {
    seq.set_threads(t);
    for (int d : o.depths) {
      for (int p : o.prompt_sizes)
        if (p > 0) results.push_back(bench_prompt(seq, p, d, fill, o.repetitions, cost, limits ? &*limits : nullptr));
      for (int n : o.gen_sizes) {
        if (n == 0) continue;
        seq.set_threads(t);  // the backoff starts afresh, as for the prompt tests
        const int fit = seq.threads_for(1);
        Result& r = results.emplace_back(
            bench_generation(seq, fit, n, d, fill, o.repetitions, cost, limits ? &*limits : nullptr));
        // The cache holds the last run's n positions. At the middle one, attention
        // costs its average over the run, as the median token's does; where a
        // sliding layer's ring no longer holds that one's window, the last.
        // Timed on the threads the test started on: a fresh backoff, as
        // the run's own teaching would otherwise decide it.
        const int middle = d + n / 2;
        seq.set_threads(t);
        r.profile = profile_token(
            seq, kv_continues_at(model->sliding_window(), seq.kv_held_from(), middle) ? middle : d + n - 1, time_kernels);
      }
    }
  }
  const MemoryCheck memory = memory_check(*model, cost, peak_valid);
  if (o.json) print_json(name, cost, results, memory);
  else print_markdown(name, cost, results, memory, limits ? &*limits : nullptr);
  return 0;
}

}  // namespace

int bench_main(int argc, char** argv, const ModelEntry& model, KernelTimer time_kernels) {
  return run_reporting_errors(program_name(kBench, model), [&] { return run(argc, argv, model, time_kernels); });
}

}  // namespace kiln
