// Many sessions on one loaded model (stories260K): each has its own KV cache,
// position and threads, so sessions driven at the same time from several
// std::threads, each with its own OpenMP team, produce exactly what each
// produces alone; sessions interleaved on one thread do not see each other;
// a state saved from one session continues in another; sequences decoded
// together in one batched forward pass give their solo logits; and neither
// a generation step nor a batched one allocates.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "engine/session/session.hpp"
#include "kiln_test_stories260K.hpp"
#include "tests/support/batch_check.hpp"
#include "tests/support/temp_folder.hpp"

namespace {

// Every operator new of this program is counted, to check that generation
// steps allocate nothing. (The plain and nothrow forms are replaced; the
// array forms and the default deletes go through them. The aligned forms
// are left to the library, whose new and delete then match each other.)
std::atomic<long> g_allocations{0};

}  // namespace

// The replacements pair malloc with free; GCC cannot see that both halves are
// replaced and warns about the pair at -O2 (-Wmismatched-new-delete).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

using Tokens = std::vector<int32_t>;

const kiln::Model& model() {
  static std::unique_ptr<kiln::Model> m = kiln::models::kiln_test_stories260K::load();
  return *m;
}

// What one session computes for a prompt: the greedy continuation and the
// bits of every logit row it sampled from.
struct Run {
  Tokens tokens;
  std::vector<float> logits;
  bool operator==(const Run& o) const {
    return tokens == o.tokens && logits.size() == o.logits.size() &&
           std::memcmp(logits.data(), o.logits.data(), logits.size() * sizeof(float)) == 0;
  }
};

// n greedy steps in `session`, from the logits of its last token; `between`
// runs before each step.
Run greedy_steps(kiln::Session& session, std::span<const float> logits, int n,
                 const std::function<void(int)>& between = [](int) {}) {
  kiln::SamplerParams params;
  params.temperature = 0;
  kiln::Sampler sampler(params, model().n_vocab());
  Run run;
  for (int i = 0; i < n; ++i) {
    between(i);
    run.logits.insert(run.logits.end(), logits.begin(), logits.end());
    const int32_t next[] = {sampler.sample(logits.data())};
    run.tokens.push_back(next[0]);
    logits = session.ingest(next);
  }
  return run;
}

// Ingests the prompt, then n greedy steps, in `session` (reset first).
Run greedy(kiln::Session& session, const Tokens& prompt, int n) {
  session.reset();
  return greedy_steps(session, session.ingest(prompt), n);
}

struct Job {
  std::string prompt;
  int threads;  // the session's own team (ThreadFit::Exact, so a team really runs)
};

const std::vector<Job> kJobs = {{"Once upon a time", 1}, {"The cat and the dog were friends", 2}, {"Lily", 2}};
constexpr int kSteps = 150;

Tokens encode(const std::string& text) { return model().tokenizer().encode(text, true); }

}  // namespace

TEST_CASE("sessions on one model, run at the same time on their own threads, each produce their solo run") {
  std::vector<Run> solo;
  for (const Job& job : kJobs) {
    kiln::Session session(model());
    session.sequence().set_threads(job.threads, kiln::ThreadFit::Exact);
    solo.push_back(greedy(session, encode(job.prompt), kSteps));
  }
  std::vector<std::unique_ptr<kiln::Session>> sessions;
  for (const Job& job : kJobs) {
    sessions.push_back(std::make_unique<kiln::Session>(model()));
    sessions.back()->sequence().set_threads(job.threads, kiln::ThreadFit::Exact);
  }
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    std::vector<Run> got(kJobs.size());
    std::vector<std::thread> threads;
    for (size_t j = 0; j < kJobs.size(); ++j)
      threads.emplace_back([&, j] { got[j] = greedy(*sessions[j], encode(kJobs[j].prompt), kSteps); });
    for (std::thread& t : threads) t.join();
    for (size_t j = 0; j < kJobs.size(); ++j) {
      CAPTURE(kJobs[j].prompt);
      CHECK(got[j] == solo[j]);
    }
  }
}

TEST_CASE("sessions interleaved on one thread do not see each other's cache") {
  const Tokens a = encode(kJobs[0].prompt), b = encode(kJobs[1].prompt);
  kiln::Session solo_a(model());
  const Run want = greedy(solo_a, a, 20);

  kiln::Session sa(model()), sb(model());
  const Run got = greedy_steps(sa, sa.ingest(a), 20, [&](int i) {
    sb.ingest(i == 0 ? std::span<const int32_t>(b) : std::span<const int32_t>(b).first(1));  // b writes its own cache
  });
  CHECK(got == want);
}

TEST_CASE("a state saved from one session continues in another session of the same model") {
  const kiln::test::TempFolder dir("sessions");
  const std::string path = dir.file("a.state");
  const Tokens prompt = encode(kJobs[1].prompt);
  kiln::Session first(model());
  first.ingest(prompt);
  first.save_state(path);
  const Run want = [&] {
    kiln::Session s(model());
    return greedy(s, prompt, 10);
  }();

  kiln::Session second(model());
  second.load_state(path);
  CHECK(second.tokens() == prompt);
  // The state holds the cache, not the last logits: ingest_prompt computes the last token again.
  const std::span<const float> logits = second.ingest_prompt(prompt);
  CHECK(second.last_reused() == static_cast<int>(prompt.size()) - 1);
  CHECK(greedy_steps(second, logits, 10) == want);
}

TEST_CASE("a generation step allocates nothing") {
  kiln::Session session(model());
  session.sequence().set_threads(2, kiln::ThreadFit::Exact);
  kiln::SamplerParams params;  // the full chain: penalty, top-k, top-p, min-p, temperature
  params.repeat_penalty = 1.1f;
  params.seed = 7;
  kiln::Sampler sampler(params, model().n_vocab());
  std::span<const float> logits = session.ingest(encode(kJobs[0].prompt));
  auto step = [&] {
    const int32_t next[] = {sampler.sample(logits.data())};
    sampler.accept(next[0]);
    logits = session.ingest(next);
  };
  step();  // the first step may start the OpenMP team
  const long before = g_allocations.load();
  for (int i = 0; i < 50; ++i) step();
  CHECK(g_allocations.load() == before);
}

TEST_CASE("sequences decoded together in one batched forward pass give their solo logits, bit for bit") {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    kiln::test::check_batched_matches_solo(model(), threads);
  }
}

TEST_CASE("a batched forward pass allocates nothing and refuses parts it cannot run") {
  auto a = model().new_sequence(), b = model().new_sequence();
  auto batch = model().new_batch();
  batch->set_threads(2, kiln::ThreadFit::Exact);
  std::vector<float> logits(2 * size_t(model().n_vocab()));
  const Tokens prompt = encode(kJobs[0].prompt);
  const int n = static_cast<int>(prompt.size());
  int32_t next[2] = {prompt[0], prompt[1]};
  kiln::SequenceTokens parts[2] = {{a.get(), prompt.data(), n, 0, kiln::Logits::Last},
                                   {b.get(), prompt.data(), n, 0, kiln::Logits::Last}};
  batch->forward(parts, logits.data());  // may start the OpenMP team
  const long before = g_allocations.load();
  for (int pos = n; pos < n + 20; ++pos) {
    parts[0] = {a.get(), &next[0], 1, pos, kiln::Logits::Last};
    parts[1] = {b.get(), &next[1], 1, pos, kiln::Logits::Last};
    batch->forward(parts, logits.data());
  }
  CHECK(g_allocations.load() == before);

  parts[1].sequence = a.get();
  CHECK_THROWS_WITH(batch->forward(parts, logits.data()), "batched forward: parts 0 and 1 are the same sequence");
  parts[1] = {b.get(), prompt.data(), n, model().n_ctx() - n + 1, kiln::Logits::Last};
  CHECK_THROWS_WITH(batch->forward(parts, logits.data()),
                    doctest::Contains("do not fit (batch 64, context 512)"));
  const Tokens many(size_t(model().max_batch()), prompt[1]);
  parts[1] = {b.get(), many.data(), model().max_batch(), 0, kiln::Logits::Last};
  CHECK_THROWS_WITH(batch->forward(parts, logits.data()), "batched forward: more than 64 tokens (the batch size)");
  CHECK_THROWS_WITH(batch->forward({}, logits.data()), "batched forward: no sequences given");
}
