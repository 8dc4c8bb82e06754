// A model's time_kernels (<name>_timed), the forward pass instantiated with
// the Timed step policy, on two models kiln-synth writes (llama with Q8_0/Q4_0/K-quant
// weights, qwen2 with biases): it computes what forward() computes, times
// every kind of kernel, and kiln-bench reports it with the memory check.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "kiln_test_synth_llama_mixed.hpp"
#include "kiln_test_synth_qwen2_mixed.hpp"
#include "apps/token_profile.hpp"
#include "tests/support/reference_check.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/temp_folder.hpp"

namespace {

struct Fixture {
  const char* name;
  std::function<std::unique_ptr<kiln::Model>()> load;
  kiln::KernelTimer time_kernels;
};

const Fixture kFixtures[] = {
    {"synth_llama_mixed", [] { return kiln::models::kiln_test_synth_llama_mixed::load(); },
     kiln::models::kiln_test_synth_llama_mixed::time_kernels},
    {"synth_qwen2_mixed", [] { return kiln::models::kiln_test_synth_qwen2_mixed::load(); },
     kiln::models::kiln_test_synth_qwen2_mixed::time_kernels},
};

std::vector<int32_t> random_prompt(int n, int vocab) {
  std::mt19937 rng(7);
  std::vector<int32_t> ids = {1};
  for (int i = 1; i < n; ++i) ids.push_back(std::uniform_int_distribution<int32_t>(3, vocab - 1)(rng));
  return ids;
}

// The logits of every position of `ids`, one token per call, from time_kernels.
std::vector<float> all_logits_timed(const Fixture& f, kiln::Sequence& seq, const std::vector<int32_t>& ids) {
  const size_t vocab = size_t(seq.model().n_vocab());
  std::vector<float> logits(ids.size() * vocab);
  for (size_t i = 0; i < ids.size(); ++i)
    f.time_kernels(seq, &ids[i], 1, int(i), kiln::Logits::Last, logits.data() + i * vocab);
  return logits;
}

}  // namespace

TEST_CASE("time_kernels gives forward's logits, bit for bit, on one thread and on several") {
  for (const auto& f : kFixtures) {
    CAPTURE(std::string(f.name));
    auto model = f.load();
    auto seq = model->new_sequence();
    const auto ids = random_prompt(12, model->n_vocab());
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      seq->set_threads(threads, kiln::ThreadFit::Exact);
      const auto untimed = kiln::test::all_logits(*seq, ids, 1);
      const auto timed = all_logits_timed(f, *seq, ids);
      CHECK(std::memcmp(untimed.data(), timed.data(), untimed.size() * sizeof(float)) == 0);
      // And a pass after the timed ones computes what it did before them.
      CHECK(std::memcmp(untimed.data(), kiln::test::all_logits(*seq, ids, 1).data(),
                        untimed.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("time_kernels times every kind of kernel") {
  for (const auto& f : kFixtures) {
    CAPTURE(std::string(f.name));
    auto model = f.load();
    auto seq = model->new_sequence();
    const auto ids = random_prompt(20, model->n_vocab());
    std::vector<float> logits(ids.size() * size_t(model->n_vocab()));
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      seq->set_threads(threads, kiln::ThreadFit::Exact);
      for (int n : {1, int(ids.size())}) {  // a generation step, and a batch with every position's logits
        CAPTURE(n);
        const auto t = f.time_kernels(*seq, ids.data(), n, 0, n == 1 ? kiln::Logits::Last : kiln::Logits::All,
                                      logits.data());
        CHECK(std::isfinite(t.timing_cost));
        CHECK(t.timing_cost > 0);
        for (int k = 0; k < kiln::kKernelKinds; ++k) {
          CHECK(t.calls[k] > 0);
          CHECK(std::isfinite(t.seconds[k]));
          CHECK(t.seconds[k] + t.calls[k] * t.timing_cost > 0);  // as measured, before the timing is taken off
        }
        // The embedding; per layer at least the norm, q, k, v, two RoPEs, the cache store, attention, the
        // projection, the norm, gate, up, SwiGLU and down (14); the final norm and the classifier.
        CHECK(t.total_calls() >= 1 + 14 * model->desc().hp.n_layer + 2);
        if (threads == 1) CHECK(t.total() > 0);  // a second thread may wait longer at a barrier than on its own
      }
    }
  }
}

TEST_CASE("time_kernels refuses what forward refuses, and another model's sequence") {
  const Fixture& f = kFixtures[0];
  auto model = f.load();
  auto seq = model->new_sequence();
  std::vector<float> logits(size_t(model->n_vocab()));
  const int32_t token = 1, bad_token = -1;
  CHECK_THROWS_AS(f.time_kernels(*seq, &token, 1, model->n_ctx(), kiln::Logits::Last, logits.data()), kiln::Error);
  CHECK_THROWS_AS(f.time_kernels(*seq, &bad_token, 1, 0, kiln::Logits::Last, logits.data()), kiln::Error);
  CHECK_THROWS_AS(f.time_kernels(*seq, &token, 0, 0, kiln::Logits::Last, logits.data()), kiln::Error);
  auto other = kFixtures[1].load();
  CHECK_THROWS_AS(f.time_kernels(*other->new_sequence(), &token, 1, 0, kiln::Logits::Last, logits.data()), kiln::Error);
}

TEST_CASE("kiln-bench reports the kernel time, the overhead and the memory check") {
  const auto md = kiln::test::run_process({BENCH_BIN, "-p", "0", "-n", "8", "-r", "1", "-t", "1"});
  REQUIRE_MESSAGE(md.exit_code == 0, md.err);
  CHECK(md.out.find("| kernels µs/token | overhead µs/token |") != std::string::npos);
  CHECK(md.out.find("\nkernels: kiln_test_synth_llama_mixed tg8, 1 thread(s), token at position 4 timed on 1,") !=
        std::string::npos);
  CHECK(md.out.find("\nmemory: kiln_test_synth_llama_mixed: peak resident ") != std::string::npos);

  // Set to two threads, a token of this tiny model runs on one (ThreadFit::ByWork), and so does its timed pass.
  const auto two = kiln::test::run_process({BENCH_BIN, "-p", "0", "-n", "8", "-r", "1", "-t", "2"});
  REQUIRE_MESSAGE(two.exit_code == 0, two.err);
  CHECK(two.out.find("\nkernels: kiln_test_synth_llama_mixed tg8, 2 thread(s), token at position 4 timed on 1,") !=
        std::string::npos);

  const auto json = kiln::test::run_process({BENCH_BIN, "-p", "0", "-n", "8", "-r", "1", "-t", "1", "-o", "json"});
  REQUIRE_MESSAGE(json.exit_code == 0, json.err);
  for (const char* field : {"\"kernel_us\": ", "\"kernel_matmul_us\": ", "\"overhead_us\": ", "\"profile_pos\": 4,",
                            "\"profile_threads\": 1,", "\"weights_bytes\": ", "\"kv_cache_bytes\": "})
    CHECK_MESSAGE(json.out.find(field) != std::string::npos, field);
  CHECK(json.out.find("\"peak_rss_bytes\": null") == std::string::npos);  // Linux reports it
}

TEST_CASE("kiln-bench -d runs each test after that many cached positions, and refuses a depth the context cannot hold") {
  const auto md = kiln::test::run_process({BENCH_BIN, "-d", "0,9", "-p", "5", "-n", "4", "-r", "2", "-t", "1"});
  REQUIRE_MESSAGE(md.exit_code == 0, md.err);
  for (const char* test : {"| pp5 |", "| tg4 |", "| pp5 @ d9 |", "| tg4 @ d9 |"})
    CHECK_MESSAGE(md.out.find(test) != std::string::npos, test);
  // The token profiled at depth 9 is the run's middle one.
  CHECK(md.out.find("\nkernels: kiln_test_synth_llama_mixed tg4 @ d9, 1 thread(s), token at position 11 timed on 1,") !=
        std::string::npos);

  const auto too_deep = kiln::test::run_process({BENCH_BIN, "-d", "100000", "-p", "5", "-n", "0", "-r", "1"});
  CHECK(too_deep.exit_code == 1);
  CHECK(too_deep.err.find("-p 5 at -d 100000 exceeds the context of ") != std::string::npos);
}

TEST_CASE("kiln-bench runs without the machine's limits when its default cache is unreadable, and refuses a named one") {
  const kiln::test::TempFolder cache("bench-limits");
  std::filesystem::create_directories(cache.path / "kiln");
  const std::string stale = cache.file("kiln/machine.json");
  std::ofstream(stale) << "{\n  \"cpu\": \"x\",\n  \"read_gbps\": [1]\n}\n";  // from another version: fields missing
  const auto defaulted = kiln::test::run_process(
      {"/usr/bin/env", "XDG_CACHE_HOME=" + cache.path.string(), BENCH_BIN, "-p", "0", "-n", "2", "-r", "1", "-t", "1"});
  REQUIRE_MESSAGE(defaulted.exit_code == 0, defaulted.err);
  CHECK(defaulted.err.find("warning: " + stale + ": machine limits file has no 'fp32_gflops_per_core'") != std::string::npos);
  CHECK(defaulted.out.find("no machine limits") != std::string::npos);

  const auto named = kiln::test::run_process({BENCH_BIN, "--machine", stale, "-p", "0", "-n", "2", "-r", "1", "-t", "1"});
  CHECK(named.exit_code == 1);
  CHECK(named.err.find(stale + ": machine limits file has no 'fp32_gflops_per_core'") != std::string::npos);
}
