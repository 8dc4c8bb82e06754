// The architectures beyond llama and qwen2 (qwen3, gemma3, smollm3, phi3,
// qwen3moe, qwen2moe, gpt-oss), and the weight types beyond ../shared's files
// (Q5_0, Q5_1, IQ4_NL, IQ4_XS, Q3_K, Q2_K, MXFP4): in F32 against the
// reference forward pass, and for batch and thread invariance (also qwen3moe
// and qwen2moe in Q8_0 and gpt-oss with MXFP4 experts), and in F32, Q8_0 and
// kiln-synth's Q4_K_M (qwen3moe, qwen2moe: F32 and Q8_0; gpt-oss: F32 and
// MXFP4 experts) against
// llama.cpp's logits for the same files: the prompt in one batch (24 tokens,
// longer than gemma3's and gpt-oss's 16-token window) and 32 greedy steps.
// The references (tests/llamacpp/) were made by
// tests/llama_oracle/refdump with F32 attention (--f32kv), so the models are
// compiled with an F32 KV cache. kiln-synth writes the same bytes from the
// same flags and seed; if it changes, regenerate the references as
// tests/llama_oracle/README.md says. And phi3's fused matrices, whose parts
// are bound as separate matrices, the same built into the program as read
// from the GGUF.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln_test_synth_gemma3.hpp"
#include "kiln_test_synth_gpt_oss.hpp"
#include "kiln_test_synth_gpt_oss_mxfp4.hpp"
#include "kiln_test_synth_gemma3_q4_k_m.hpp"
#include "kiln_test_synth_gemma3_q8_0.hpp"
#include "kiln_test_synth_phi3.hpp"
#include "kiln_test_synth_phi3_q4_k_m.hpp"
#include "kiln_test_synth_phi3_q4_k_m_embed.hpp"
#include "kiln_test_synth_phi3_q8_0.hpp"
#include "kiln_test_synth_qwen3.hpp"
#include "kiln_test_synth_qwen3_q4_k_m.hpp"
#include "kiln_test_synth_qwen3_q8_0.hpp"
#include "kiln_test_synth_qwen3moe.hpp"
#include "kiln_test_synth_qwen3moe_q8_0.hpp"
#include "kiln_test_synth_qwen2moe.hpp"
#include "kiln_test_synth_qwen2moe_q8_0.hpp"
#include "kiln_test_synth_smollm3.hpp"
#include "kiln_test_synth_smollm3_q4_k_m.hpp"
#include "kiln_test_synth_smollm3_q8_0.hpp"
#include "kiln_test_synth_llama_q5_iq4.hpp"
#include "kiln_test_synth_qwen2_q2_q3.hpp"
#include "tests/support/llamacpp_reference.hpp"
#include "engine/session/session.hpp"
#include "engine/session/state_file.hpp"
#include "tests/support/reference_check.hpp"
#include "tests/support/synth_fixture_checks.hpp"
#include "tests/support/temp_folder.hpp"

namespace {

// What else the model is held to: batch and thread invariance, and the
// reference forward pass. The F32 models get both (the quantized ones are
// the same models, rounded). qwen3moe's Q8_0, whose experts read rounded
// rows gathered by expert, a path of its own, gets the invariance: the
// reference pass keeps activations in float where kiln (and llama.cpp,
// which it matches) rounds them to 8 bits, and with a router that picks
// experts, a step of rounding can swap an expert whose score is near a tie
// (it did under the sanitizers' -O1).
enum class Checks { LlamaCpp, Invariance, Full };

struct Fixture {
  const char* name;
  std::function<std::unique_ptr<kiln::Model>()> load;
  const char* gguf;
  kiln::test::LlamaCppBounds bounds;
  Checks checks = Checks::LlamaCpp;
};

#define KILN_ARCH_FIXTURE(ns) #ns, [] { return kiln::models::ns::load(); }, kiln::models::ns::kDefaultGguf

// Bounds by weight type, as e2e_synthetic's for llama.cpp's F32-attention
// references: F32 weights differ only in the order of float sums (1e-3);
// Q8_0 and Q4_K_M round the activations to 8 bits before every matrix, and a
// value that lands on a rounding boundary moves by a step that later layers
// carry (0.75 and 2.5, the same bounds as the llama files').
constexpr kiln::test::LlamaCppBounds kF32{1e-3f, 2e-4f, 0.1f}, kQ8_0{0.75f, 0.15f, 1.5f}, kQ4_K_M{2.5f, 0.5f, 2.5f};

const Fixture kFixtures[] = {
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen3), kF32, Checks::Full},
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen3_q8_0), kQ8_0},
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen3_q4_k_m), kQ4_K_M},
    {KILN_ARCH_FIXTURE(kiln_test_synth_gemma3), kF32, Checks::Full},
    {KILN_ARCH_FIXTURE(kiln_test_synth_gemma3_q8_0), kQ8_0},
    {KILN_ARCH_FIXTURE(kiln_test_synth_gemma3_q4_k_m), kQ4_K_M},
    {KILN_ARCH_FIXTURE(kiln_test_synth_smollm3), kF32, Checks::Full},
    {KILN_ARCH_FIXTURE(kiln_test_synth_smollm3_q8_0), kQ8_0},
    {KILN_ARCH_FIXTURE(kiln_test_synth_smollm3_q4_k_m), kQ4_K_M},
    {KILN_ARCH_FIXTURE(kiln_test_synth_phi3), kF32, Checks::Full},
    {KILN_ARCH_FIXTURE(kiln_test_synth_phi3_q8_0), kQ8_0},
    {KILN_ARCH_FIXTURE(kiln_test_synth_phi3_q4_k_m), kQ4_K_M},
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen3moe), kF32, Checks::Full},
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen3moe_q8_0), kQ8_0, Checks::Invariance},
    // qwen2moe: a shared expert beside the routed ones; its Q8_0 as qwen3moe's.
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen2moe), kF32, Checks::Full},
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen2moe_q8_0), kQ8_0, Checks::Invariance},
    // gpt-oss, and as it ships, with MXFP4 experts: their inputs are rounded
    // to 8 bits as Q8_0's are (llama.cpp's too), hence Q8_0's bounds, and
    // held to the invariance only for the reason qwen3moe's Q8_0 is.
    {KILN_ARCH_FIXTURE(kiln_test_synth_gpt_oss), kF32, Checks::Full},
    {KILN_ARCH_FIXTURE(kiln_test_synth_gpt_oss_mxfp4), kQ8_0, Checks::Invariance},
    // e2e_synth_combos' models of the types llama-quantize falls back to and
    // its low-bit mixes use (IQ4_XS, Q5_0, IQ4_NL, Q5_1; Q5_0, Q3_K, Q2_K,
    // IQ4_XS): llama.cpp rounds Q5_1's input to Q8_1 and the K-quants' and
    // IQ4_XS's to blocks of 256 where kiln rounds all to blocks of 32, so the
    // K-quant bound.
    {KILN_ARCH_FIXTURE(kiln_test_synth_llama_q5_iq4), kQ4_K_M},
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen2_q2_q3), kQ4_K_M},
};

}  // namespace

TEST_CASE("qwen3, gemma3, smollm3, phi3, qwen3moe, qwen2moe and gpt-oss agree with the reference forward pass, whatever the batch and the threads") {
  for (const Fixture& f : kFixtures) {
    if (f.checks == Checks::LlamaCpp) continue;
    CAPTURE(std::string(f.name));
    const auto model = f.load();
    if (f.checks == Checks::Full) kiln::test::check_model_against_reference(*model, f.gguf);
    kiln::test::check_batch_and_thread_invariance(*model);
  }
}

TEST_CASE("gemma3: a prefix longer than the sliding window is reused from its keys and values") {
  // gemma3's sliding layers keep a ring of 64 rows (a 16-token window and
  // batches of 32): 100 positions wrap it. The prefix's last 15 positions
  // are what the sliding layers' later tokens read.
  auto model = kiln::models::kiln_test_synth_gemma3::load();
  REQUIRE(model->sliding_window() == 16);
  const auto ids = kiln::test::random_prompt(110, model->n_vocab(), 9);
  constexpr int kPrefix = 100;
  auto whole = model->new_sequence();
  const auto straight = kiln::test::all_logits(*whole, ids, model->max_batch());
  CHECK(whole->kv_held_from() == 110 - 64);
  const kiln::KvLayout layout = model->kv_layout();
  std::vector<uint8_t> prefix(size_t(kPrefix) * layout.bytes_per_position());
  whole->read_kv(0, kPrefix, prefix.data());

  auto resumed = model->new_sequence();
  resumed->write_kv(0, kPrefix, prefix.data(), whole->kv_held_from());
  const size_t vocab = size_t(model->n_vocab());
  std::vector<float> rest((ids.size() - kPrefix) * vocab);
  resumed->forward(ids.data() + kPrefix, int(ids.size()) - kPrefix, kPrefix, kiln::Logits::All, rest.data());
  CHECK(std::memcmp(rest.data(), straight.data() + kPrefix * vocab, rest.size() * sizeof(float)) == 0);

  // Position 40's window (from 25) is no longer held: going on there is refused, not computed from stale rows.
  CHECK_THROWS_WITH_AS(whole->forward(ids.data() + 40, 1, 40, kiln::Logits::Last, rest.data()),
                       "forward: position 40 needs the sliding window's positions from 25, but the cache holds "
                       "them only from 46",
                       kiln::Error);
}

TEST_CASE("gemma3: a session reuses a prefix longer than the window while its ring holds the window, else starts over") {
  auto model = kiln::models::kiln_test_synth_gemma3::load();
  const auto ids = kiln::test::random_prompt(110, model->n_vocab(), 5);
  const auto fresh_logits = [&](std::span<const int32_t> prompt) {
    kiln::Session fresh(*model);
    const auto logits = fresh.ingest_prompt(prompt);
    return std::vector<float>(logits.begin(), logits.end());
  };
  kiln::Session session(*model);
  session.ingest_prompt(ids);
  // A new turn that branches off 6 tokens before the cache's end (a chat's
  // next message): its first 104 positions are kept.
  auto branch = std::vector<int32_t>(ids.begin(), ids.begin() + 104);
  branch.insert(branch.end(), {7, 8, 9});
  auto logits = session.ingest_prompt(branch);
  CHECK(session.last_reused() == 104);
  CHECK(std::vector<float>(logits.begin(), logits.end()) == fresh_logits(branch));

  // One that branches at 30, where the ring has moved on: computed again from the start, with the same logits.
  const kiln::SessionState saved = session.snapshot();
  auto early = std::vector<int32_t>(ids.begin(), ids.begin() + 30);
  early.push_back(3);
  CHECK(session.reusable_prefix(early) == 0);
  logits = session.ingest_prompt(early);
  CHECK(session.last_reused() == 0);
  CHECK(std::vector<float>(logits.begin(), logits.end()) == fresh_logits(early));

  // The saved state, through a state file, serves the late branch and not the early one.
  kiln::test::TempFolder tmp("gemma3-ring");
  const std::string path = tmp.file("s.state");
  kiln::write_state_file(path, saved);
  const kiln::SessionState read = kiln::read_state_file(path);
  CHECK(read.held_from == saved.held_from);
  CHECK(saved.held_from == 110 - 64);  // the first 110 positions' ring: 104..106 wrote over rows it had moved past
  kiln::Session loaded(*model);
  CHECK(loaded.restore_prefix(read, early) == 0);
  CHECK(loaded.restore_prefix(read, branch) == branch.size());
  logits = loaded.ingest_prompt(branch);
  CHECK(std::vector<float>(logits.begin(), logits.end()) == fresh_logits(branch));
}

TEST_CASE("gemma3: a window checkpoint at a system prompt's end serves a conversation that branches there") {
  auto model = kiln::models::kiln_test_synth_gemma3::load();
  REQUIRE(model->kv_ring_rows() == 64);
  const auto system = kiln::test::random_prompt(30, model->n_vocab(), 11);
  const auto with_question = [&](uint32_t seed, int n) {
    std::vector<int32_t> prompt = system;
    const auto question = kiln::test::random_prompt(n + 1, model->n_vocab(), seed);
    prompt.insert(prompt.end(), question.begin() + 1, question.end());  // without its BOS
    return prompt;
  };
  const auto first = with_question(12, 70), second = with_question(13, 85);
  const auto logits_of = [](std::span<const float> logits) { return std::vector<float>(logits.begin(), logits.end()); };
  kiln::Session fresh(*model);
  const auto expected = logits_of(fresh.ingest_prompt(second));

  // 100 positions moved the 64-row ring past position 30's window (and 115 again).
  kiln::Session checkpointed(*model);
  checkpointed.ingest_prompt(first, system.size());
  CHECK(checkpointed.reusable_prefix(second) == system.size());
  CHECK(logits_of(checkpointed.ingest_prompt(second, system.size())) == expected);
  CHECK(checkpointed.last_reused() == int(system.size()));

  // A third conversation on the same system prompt: the checkpoint is still there.
  const auto third = with_question(14, 60);
  CHECK(logits_of(checkpointed.ingest_prompt(third, system.size())) == logits_of(fresh.ingest_prompt(third)));
  CHECK(checkpointed.last_reused() == int(system.size()));

  // Without one, the second conversation is computed from its start.
  kiln::Session plain(*model);
  plain.ingest_prompt(first);
  CHECK(logits_of(plain.ingest_prompt(second)) == expected);
  CHECK(plain.last_reused() == 0);
}

TEST_CASE("qwen3, gemma3, smollm3, phi3, qwen3moe, qwen2moe, gpt-oss and the newer weight types match llama.cpp's logits and greedy ids") {
  for (const Fixture& f : kFixtures) {
    CAPTURE(std::string(f.name));
    auto model = f.load();
    auto sequence = model->new_sequence();
    const auto ref = kiln::test::read_llamacpp_reference(std::string(LLAMACPP_REFS) + "/" + f.name + ".ref-f32kv.txt");
    REQUIRE(ref.prompt.size() == 24);
    REQUIRE(ref.gen_ids.size() == 32);
    kiln::test::check_against_llamacpp(*sequence, ref, f.bounds);
  }
}

TEST_CASE("phi3 with its weights built in: each part of a fused matrix packed on its own, the GGUF's logits") {
  auto built_in = kiln::models::kiln_test_synth_phi3_q4_k_m_embed::load();
  auto from_file = kiln::models::kiln_test_synth_phi3_q4_k_m::load();
  CHECK(built_in->fingerprint() == from_file->fingerprint());
  const std::vector<int32_t> ids = {1, 63, 166, 260, 490, 265, 334, 443, 490, 55};
  CHECK(kiln::test::all_logits(*built_in->new_sequence(), ids, 4) ==
        kiln::test::all_logits(*from_file->new_sequence(), ids, 4));
}
