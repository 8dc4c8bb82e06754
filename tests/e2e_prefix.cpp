// Prefix reuse end to end on stories260K, compiled twice (tests/CMakeLists.txt:
// e2e_prefix with an F32 KV cache, e2e_prefix_kv16 with the default F16 one,
// STORIES_MODEL names which): a prompt computed on top of a
// reused, restored or loaded prefix gives exactly the logits and tokens of
// computing it all, and the command line's --prompt-cache survives every kind
// of damaged file without changing the output.
//
// Note: a model has one KV cache, so only one session uses it at a time; the
// tests compute their references before setting up the state they check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <span>

#include "codegen/synth.hpp"
#include "engine/error/error.hpp"
#include "engine/session/prefix_store.hpp"
#include "engine/session/session.hpp"
#include "engine/session/state_file.hpp"
#include "apps/prefix_bench.hpp"
#include STORIES_HEADER
#include "tests/support/run_process.hpp"
#include "tests/support/temp_folder.hpp"

using kiln::Session;
using kiln::SessionState;
using kiln::test::read_bytes;
using kiln::test::TempFolder;
using kiln::test::write_bytes;
using Tokens = std::vector<int32_t>;
using Logits = std::vector<float>;

namespace {

kiln::Model& model() {
  static std::unique_ptr<kiln::Model> m = kiln::models::STORIES_MODEL::load();
  return *m;
}

// BOS and n - 1 random ids: more than one batch (64) once n > 64.
Tokens random_tokens(size_t n, uint64_t seed, bool bos = true) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> id(3, model().n_vocab() - 1);
  Tokens t;
  if (bos) t.push_back(model().tokenizer().bos());
  while (t.size() < n) t.push_back(id(rng));
  return t;
}

Tokens concat(std::span<const int32_t> a, std::span<const int32_t> b) {
  Tokens t(a.begin(), a.end());
  t.insert(t.end(), b.begin(), b.end());
  return t;
}

Logits copy(std::span<const float> logits) { return {logits.begin(), logits.end()}; }

// The last position's logits of `prompt`, computed from an empty context.
Logits computed_from_scratch(const Tokens& prompt) {
  Session s(model());
  return copy(s.ingest(prompt));
}

bool same_bits(const Logits& a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

Tokens greedy(Session& session, const Tokens& prompt, int n) {
  kiln::SamplerParams params;
  params.temperature = 0;
  kiln::Sampler sampler(params, model().n_vocab());
  Tokens out;
  kiln::generate(session, prompt, n, sampler, [&](int32_t t) {
    out.push_back(t);
    return true;
  });
  return out;
}

}  // namespace

TEST_CASE("ingest_prompt reuses the shared prefix and changes neither logits nor tokens") {
  const Tokens a = random_tokens(100, 1);
  struct Case {
    const char* what;
    Tokens next;
    int reused;
  };
  const std::vector<Case> cases = {
      {"shared fully", a, 99},  // the last position is computed again for its logits
      {"shared partly", concat(std::span(a).first(70), random_tokens(30, 2, false)), 70},
      {"extended", concat(a, random_tokens(20, 3, false)), 100},
      {"strict prefix of the cached prompt", Tokens(a.begin(), a.begin() + 50), 49},
      {"shared not at all", random_tokens(80, 4, false), 0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const Logits want = computed_from_scratch(c.next);
    Session fresh(model());
    const Tokens want_generated = greedy(fresh, c.next, 12);

    Session session(model());
    session.ingest_prompt(a);
    CHECK(session.last_reused() == 0);
    const Logits got = copy(session.ingest_prompt(c.next));
    CHECK(session.last_reused() == c.reused);
    CHECK(session.tokens() == c.next);
    CHECK(same_bits(want, got));

    session.reset();
    session.ingest_prompt(a);
    CHECK(greedy(session, c.next, 12) == want_generated);
  }
}

TEST_CASE("a snapshot restores to the same logits, and a bad one changes nothing") {
  const Tokens a = random_tokens(130, 5), b = random_tokens(100, 6);
  const Tokens a_more = concat(a, random_tokens(20, 7, false));
  const Tokens a_part = concat(std::span(a).first(80), random_tokens(20, 8, false));
  const Logits want_more = computed_from_scratch(a_more), want_part = computed_from_scratch(a_part);

  Session session(model());
  session.ingest_prompt(a);
  const SessionState state = session.snapshot();
  CHECK(state.tokens == a);
  CHECK(state.kv_bytes.size() == a.size() * model().kv_layout().bytes_per_position());
  CHECK(session.snapshot(10).tokens == Tokens(a.begin(), a.begin() + 10));
  CHECK_THROWS_AS(session.snapshot(a.size() + 1), kiln::Error);

  session.ingest_prompt(b);  // overwrites the cache
  session.restore(state);
  CHECK(session.tokens() == a);
  CHECK(same_bits(want_more, session.ingest_prompt(a_more)));
  CHECK(session.last_reused() == int(a.size()));

  session.ingest_prompt(b);
  CHECK(session.restore_prefix(state, a_part) == 80);  // only the shared prefix is restored
  CHECK(session.tokens() == Tokens(a.begin(), a.begin() + 80));
  CHECK(same_bits(want_part, session.ingest_prompt(a_part)));
  CHECK(session.last_reused() == 80);

  struct Bad {
    const char* message;
    SessionState state;
  };
  std::vector<Bad> bad(5, {"", state});
  bad[0].message = "made by another model";
  bad[0].state.fingerprint ^= 1;
  // The other element type than this model's cache (the test runs on an F32 and an F16 cache).
  const bool f16 = model().kv_layout().type == "f16";
  const std::string layout_message = f16 ? "KV cache layout is 5 layers x 32 f32 (4 bytes), this model's is 5 layers x 32 f16 (2 bytes)"
                                         : "KV cache layout is 5 layers x 32 f16 (2 bytes), this model's is 5 layers x 32 f32 (4 bytes)";
  bad[1].message = layout_message.c_str();
  bad[1].state.kv.type = f16 ? "f32" : "f16";
  bad[1].state.kv.bytes_per_value = f16 ? 4 : 2;
  bad[2].message = "KV bytes for 130 tokens, expected";
  bad[2].state.kv_bytes.pop_back();
  bad[3].message = "token 7 has id 512, outside the vocabulary (0..511)";
  bad[3].state.tokens[7] = 512;
  bad[4].message = "holds 513 tokens, more than the context of 512";
  bad[4].state.tokens.resize(513, 5);
  bad[4].state.kv_bytes.resize(513 * state.kv.bytes_per_position());

  session.restore(state);
  for (const Bad& b : bad) {
    CAPTURE(b.message);
    CHECK_THROWS_WITH_AS(session.restore(b.state), doctest::Contains(b.message), kiln::Error);
    CHECK(session.tokens() == a);
  }
  CHECK(same_bits(want_more, session.ingest_prompt(a_more)));  // the cache was not touched either
}

TEST_CASE("the prefix store seeds a session with the longest stored prefix") {
  const Tokens a = random_tokens(120, 9), b = random_tokens(60, 10);
  const Tokens prompt = concat(std::span(a).first(90), random_tokens(25, 11, false));
  const Logits want = computed_from_scratch(prompt);

  kiln::PrefixStore store(1 << 20);
  Session session(model());
  session.ingest_prompt(Tokens(a.begin(), a.begin() + 50));
  REQUIRE(store.put(session.snapshot()));
  session.ingest_prompt(a);
  REQUIRE(store.put(session.snapshot()));  // replaces the 50-token entry it extends
  session.ingest_prompt(b);
  REQUIRE(store.put(session.snapshot()));
  CHECK(store.size() == 2);

  CHECK(store.seed(session, prompt) == 90);  // a truncated prefix of the 120-token entry
  CHECK(session.tokens() == Tokens(a.begin(), a.begin() + 90));
  CHECK(same_bits(want, session.ingest_prompt(prompt)));
  CHECK(session.last_reused() == 90);

  // The session's own context already shares more than any entry: kept as it is.
  CHECK(store.seed(session, concat(prompt, b)) == prompt.size());
  CHECK(session.tokens() == prompt);
}

TEST_CASE("a state file round trip gives the same logits; a bad file is refused and changes nothing") {
  TempFolder tmp("e2e-prefix");
  const Tokens a = random_tokens(140, 12), b = random_tokens(70, 13);
  const Tokens a_more = concat(a, random_tokens(10, 14, false));
  const Logits want = computed_from_scratch(a_more), want_b = computed_from_scratch(concat(b, a));

  Session session(model());
  session.ingest_prompt(a);
  session.save_state(tmp.file("a.state"));
  SessionState foreign = session.snapshot();
  foreign.fingerprint ^= 0xff00;
  kiln::write_state_file(tmp.file("foreign.state"), foreign);
  std::vector<uint8_t> bytes = read_bytes(tmp.file("a.state"));
  bytes[48 + 4 * 140 + 1000] ^= 1;
  write_bytes(tmp.file("corrupt.state"), bytes);

  session.ingest_prompt(b);
  session.load_state(tmp.file("a.state"));
  CHECK(session.tokens() == a);
  CHECK(same_bits(want, session.ingest_prompt(a_more)));

  session.ingest_prompt(b);
  for (const auto& [file_name, message] : {std::pair{"foreign.state", "made by another model"},
                                           std::pair{"corrupt.state", "checksum mismatch"},
                                           std::pair{"missing.state", "cannot open"}}) {
    const char* file = file_name;  // CAPTURE's lambda cannot capture a structured binding in Clang 14
    CAPTURE(file);
    CHECK_THROWS_WITH_AS(session.load_state(tmp.file(file)),
                         doctest::Contains((tmp.file(file) + ": " + message).c_str()), kiln::Error);
    CHECK(session.tokens() == b);
  }
  CHECK(same_bits(want_b, session.ingest_prompt(concat(b, a))));
}

TEST_CASE("a state of another model of the same shape is refused") {
  TempFolder tmp("e2e-prefix");
  kiln::synth::SynthSpec spec;
  spec.shape = *kiln::find_preset("stories260k");
  spec.shape.n_ctx = model().desc().hp.n_ctx_train;
  spec.rms_eps = model().desc().hp.rms_eps;
  const std::string twin_gguf = tmp.file("twin.gguf");
  kiln::synth::make_model(spec).write(twin_gguf);
  std::unique_ptr<kiln::Model> twin = kiln::models::STORIES_MODEL::load(twin_gguf);  // same shape, other weights
  CHECK(twin->desc().fingerprint() == model().desc().fingerprint());
  CHECK(twin->fingerprint() != model().fingerprint());

  Session session(model());
  session.ingest_prompt(random_tokens(40, 15));
  session.save_state(tmp.file("real.state"));
  Session twin_session(*twin);
  CHECK_THROWS_WITH_AS(twin_session.restore(session.snapshot()), doctest::Contains("made by another model"),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(twin_session.load_state(tmp.file("real.state")), doctest::Contains("made by another model"),
                       kiln::Error);

  const auto r = kiln::test::run_process({STORIES_BIN, "-m", twin_gguf, "-p", "Hi", "-n", "4", "-t", "1", "--prompt-cache",
                                          tmp.file("real.state"), "--prompt-cache-ro"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("prompt cache " + tmp.file("real.state") + ": made by another model") != std::string::npos);
}

// ---- the command line's --prompt-cache ----

namespace {

const char* const kPrompt = "Once upon a time, there was a little girl named Lily. She loved to play in the park";

kiln::test::ProcessResult run_cli(const std::string& prompt, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {STORIES_BIN, "-p", prompt, "-n", "8", "--temp", "0", "-t", "1"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return kiln::test::run_process(argv);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("--prompt-cache: the second run reuses the prompt and prints the same text") {
  TempFolder tmp("e2e-prefix-cli");
  const std::string cache = tmp.file("prompt.cache");
  const size_t n = model().tokenizer().encode(kPrompt, true).size();
  const auto plain = run_cli(kPrompt);
  REQUIRE(plain.exit_code == 0);

  const auto first = run_cli(kPrompt, {"--prompt-cache", cache});
  CHECK(first.exit_code == 0);
  CHECK(first.out == plain.out);
  CHECK(first.err.find("prompt cache " + cache + ": not found; it will be created") != std::string::npos);
  CHECK(first.err.find("prompt cache: reused 0 of " + std::to_string(n) + " tokens") != std::string::npos);
  REQUIRE(std::filesystem::exists(cache));
  CHECK(kiln::read_state_file(cache).tokens.size() == n);  // the prompt, not what was generated

  const auto second = run_cli(kPrompt, {"--prompt-cache", cache});
  CHECK(second.exit_code == 0);
  CHECK(second.out == plain.out);
  CHECK(second.err.find("prompt cache: reused " + std::to_string(n - 1) + " of " + std::to_string(n) + " tokens") !=
        std::string::npos);
  CHECK(count(second.err, "prompt cache") == 1);

  // A longer prompt: the cached one is reused, the rest computed, the file updated.
  const std::string longer = std::string(kPrompt) + " with her dog.";
  const Tokens longer_ids = model().tokenizer().encode(longer, true);
  const size_t shared = kiln::common_prefix_length(model().tokenizer().encode(kPrompt, true), longer_ids);
  const auto third = run_cli(longer, {"--prompt-cache", cache});
  CHECK(third.out == run_cli(longer).out);
  CHECK(third.err.find("prompt cache: reused " + std::to_string(shared) + " of " + std::to_string(longer_ids.size())) !=
        std::string::npos);
  CHECK(kiln::read_state_file(cache).tokens == longer_ids);

  const auto ro_alone = kiln::test::run_process({STORIES_BIN, "--prompt-cache-ro"});
  CHECK(ro_alone.exit_code == 1);
  CHECK(ro_alone.err.find("--prompt-cache-ro: needs --prompt-cache FILE") != std::string::npos);
}

TEST_CASE("--prompt-cache: a damaged file is reported, ignored, and with -ro left as it is") {
  TempFolder tmp("e2e-prefix-cli");
  const std::string cache = tmp.file("prompt.cache");
  const auto plain = run_cli(kPrompt);
  REQUIRE(run_cli(kPrompt, {"--prompt-cache", cache}).exit_code == 0);
  const std::vector<uint8_t> good = read_bytes(cache);
  const size_t n = kiln::read_state_file(cache).tokens.size();
  const size_t tokens_at = 52, kv_at = tokens_at + 4 * n, checksum_at = good.size() - 8;

  SessionState foreign = kiln::read_state_file(cache);
  foreign.fingerprint += 1;
  kiln::write_state_file(tmp.file("foreign"), foreign);

  struct Case {
    std::string what;
    std::vector<uint8_t> bytes;
    std::string reason;
  };
  std::vector<Case> cases = {
      {"empty", {}, "the file is empty"},
      {"another model's", read_bytes(tmp.file("foreign")), "made by another model"},
  };
  for (size_t cut : {size_t(30), tokens_at + 10, kv_at + 333, checksum_at + 4})
    cases.push_back({"cut at " + std::to_string(cut), {good.begin(), good.begin() + long(cut)},
                     cut < 60 ? "truncated: " + std::to_string(cut) + " bytes"
                              : "the file is " + std::to_string(cut) + " bytes, which does not fit the " +
                                    std::to_string(n) + " tokens"});
  for (const auto& [what, at] : {std::pair{"magic", size_t(2)}, std::pair{"header", size_t(20)},
                                 std::pair{"tokens", tokens_at + 9}, std::pair{"KV data", kv_at + 4000},
                                 std::pair{"checksum", checksum_at + 1}}) {
    std::vector<uint8_t> b = good;
    b[at] ^= 0x40;
    cases.push_back({std::string("flipped ") + what, b, at < 8 ? "not a kiln state file" : "checksum mismatch"});
  }
  cases.push_back({"version 9", good, "format version 9, this binary reads version " + std::to_string(kiln::kStateFileVersion)});
  cases.back().bytes[8] = 9;

  for (const Case& c : cases) {
    CAPTURE(c.what);
    write_bytes(cache, c.bytes);
    const auto ro = run_cli(kPrompt, {"--prompt-cache", cache, "--prompt-cache-ro"});
    CHECK(ro.exit_code == 0);
    CHECK(ro.out == plain.out);
    CHECK(ro.err.find("prompt cache " + cache + ": " + c.reason) != std::string::npos);
    CHECK(ro.err.find("; ignoring it\n") != std::string::npos);
    CHECK(ro.err.find("prompt cache: reused 0 of") != std::string::npos);
    CHECK(read_bytes(cache) == c.bytes);

    const auto rw = run_cli(kPrompt, {"--prompt-cache", cache});  // replaces the bad file
    CHECK(rw.out == plain.out);
    CHECK(read_bytes(cache) == good);
  }

  const std::string missing = tmp.file("missing.cache");
  const auto ro = run_cli(kPrompt, {"--prompt-cache", missing, "--prompt-cache-ro"});
  CHECK(ro.out == plain.out);
  CHECK(ro.err.find("prompt cache " + missing + ": cannot open (No such file or directory); ignoring it") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(missing));
}

TEST_CASE("the prefix benchmark measures every row") {
  kiln::PrefixBenchOptions options;
  options.prompt_tokens = 130;
  options.runs = 1;
  kiln::Session session(model());
  const kiln::PrefixBenchResult r = kiln::run_prefix_bench(session, options);
  CHECK(r.prompt_tokens == 130);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[1].cached_tokens == 117);
  CHECK(r.cold_ms > 0);
  for (const auto& row : r.rows) CHECK((row.memory_ms > 0 && row.disk_ms > 0));
  CHECK(r.markdown().find("| 90 % (117) | 13 |") != std::string::npos);
}

TEST_CASE("stories260K binary: interactive turns compute only the new tokens") {
  const auto r = kiln::test::run_process({STORIES_BIN, "-p", "Once upon a time", "-n", "20", "--temp", "0", "-t", "1", "-i"},
                                         "The dog ran.\nThen\n");
  REQUIRE(r.exit_code == 0);
  // Turn 1 reuses the prompt and the 20 generated tokens; turn 2 everything before its line.
  const auto turn1 = r.err.find("turn: reused 25 of ");
  REQUIRE(turn1 != std::string::npos);
  const int total1 = std::stoi(r.err.substr(turn1 + 19));
  const auto turn2 = r.err.find("turn: reused " + std::to_string(total1 + 20) + " of ", turn1 + 1);
  CHECK(turn2 != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '>') >= 3);  // a prompt marker per turn, and at the end of input
}
