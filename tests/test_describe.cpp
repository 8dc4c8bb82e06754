// Reading a model description out of a GGUF (models/): what is accepted,
// what is refused and how the refusal reads; and what codegen emits for it.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "codegen/emit.hpp"
#include "codegen/synth.hpp"
#include "models/decoder/block_tensors.hpp"
#include "models/describe.hpp"

namespace {

using kiln::GgufFile;
using kiln::synth::SynthSpec;

SynthSpec tiny(std::string_view arch = "llama") {
  SynthSpec s;
  s.shape = {"tiny", arch, 64, 2, 4, 2, 96, 300, 128};
  return s;
}

GgufFile image(const kiln::GgufWriter& w) { return GgufFile::from_bytes(w.bytes(), "m.gguf"); }

// The same model with one metadata key replaced (or dropped when `value` is
// empty) and one tensor dropped: files that are almost right.
GgufFile altered(const SynthSpec& spec, const std::string& key, std::optional<kiln::GgufValue> value,
                 const std::string& drop_tensor = "", bool add_extra_tensor = false) {
  const GgufFile original = image(kiln::synth::make_model(spec));
  kiln::GgufWriter w;
  for (const auto& [k, v] : original.metadata())
    if (k != key) w.add(k, v);
  if (value) w.add(key, *value);
  for (const auto& t : original.tensors())
    if (t.name != drop_tensor) w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.nbytes));
  if (add_extra_tensor) w.add_tensor("blk.0.mystery.weight", kiln::TensorType::F32, {4}, std::vector<uint8_t>(16));
  return image(w);
}

kiln::GgufValue u32(uint32_t v) { return {kiln::GgufValueType::UINT32, uint64_t{v}}; }

}  // namespace

TEST_CASE("a synthetic llama model is described as written") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny())));
  CHECK(d.arch == "llama");
  CHECK(d.hp.n_embd == 64);
  CHECK(d.hp.n_layer == 2);
  CHECK(d.hp.n_head_kv == 2);
  CHECK(d.hp.head_dim == 16);
  CHECK(d.hp.n_vocab == 300);
  CHECK(d.hp.attn_scale == doctest::Approx(0.25));
  CHECK(d.layers == std::vector<kiln::LayerKind>(2, kiln::LayerKind{.sliding = false, .rope = true}));
  CHECK(d.tensors.size() == 3 + 2 * 9);
}

TEST_CASE("qwen2: biases come from the architecture's tensor list") {
  auto spec = tiny("qwen2");
  const auto d = kiln::describe_model(image(kiln::synth::make_model(spec)));
  CHECK(d.tensor("blk.1.attn_k.bias").dims == std::vector<int64_t>{32});
  CHECK(d.tensors.size() == 3 + 2 * 12);
}

TEST_CASE("qwen3: Q/K norms and a head size from attention.key_length") {
  auto spec = tiny("qwen3");
  spec.shape.head_dim = 24;  // not 64 / 4
  const auto d = kiln::describe_model(image(kiln::synth::make_model(spec)));
  CHECK(d.hp.head_dim == 24);
  CHECK(d.hp.n_rot == 24);
  CHECK(d.hp.attn_scale == doctest::Approx(1.0 / std::sqrt(24.0)));
  CHECK(d.tensor("blk.0.attn_q_norm.weight").dims == std::vector<int64_t>{24});
  CHECK(d.tensor("blk.1.attn_q.weight").dims == std::vector<int64_t>{64, 96});
  CHECK(d.tensor("blk.1.attn_output.weight").dims == std::vector<int64_t>{96, 64});
}

TEST_CASE("gemma3: five sliding layers of six, their own RoPE base, post-norms") {
  auto spec = tiny("gemma3");
  spec.shape.n_layer = 7;
  spec.shape.n_swa = 16;
  const auto d = kiln::describe_model(image(kiln::synth::make_model(spec)));
  CHECK(d.hp.n_swa == 16);
  CHECK(d.hp.rope_base_swa == 10000.0f);  // the file has no rope.freq_base_swa: llama.cpp's default
  std::vector<bool> sliding;
  for (const auto& k : d.layers) sliding.push_back(k.sliding);
  CHECK(sliding == std::vector<bool>{true, true, true, true, true, false, true});
  CHECK(d.tensor("blk.6.post_ffw_norm.weight").dims == std::vector<int64_t>{64});
  spec.shape.n_swa = 0;  // no sliding_window key: every layer global
  for (const auto& k : kiln::describe_model(image(kiln::synth::make_model(spec))).layers) CHECK_FALSE(k.sliding);
}

TEST_CASE("smollm3: every fourth layer has no RoPE") {
  auto spec = tiny("smollm3");
  spec.shape.n_layer = 8;
  std::vector<bool> rope;
  for (const auto& k : kiln::describe_model(image(kiln::synth::make_model(spec))).layers) rope.push_back(k.rope);
  CHECK(rope == std::vector<bool>{true, true, true, false, true, true, true, false});
}

namespace {

// phi3 as Phi-4-mini is, at a tiny size: RoPE on 12 of the 16 dimensions of
// a head, LongRoPE factors for an original context of 64, and the
// sliding_window key its converter writes.
SynthSpec tiny_phi3() {
  SynthSpec s = tiny("phi3");
  s.shape.n_rot = 12;
  s.shape.n_swa = 16;
  s.longrope_original_context = 64;
  return s;
}

// The same model with each layer's attn_qkv written as attn_q, attn_k and
// attn_v (F32: the rows are the tensor's bytes in order).
GgufFile with_separate_qkv(const SynthSpec& spec) {
  const GgufFile original = image(kiln::synth::make_model(spec));
  kiln::GgufWriter w;
  for (const auto& [k, v] : original.metadata()) w.add(k, v);
  for (const auto& t : original.tensors()) {
    if (!t.name.ends_with("attn_qkv.weight")) {
      w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.nbytes));
      continue;
    }
    const std::string layer = t.name.substr(0, t.name.size() - std::string("attn_qkv.weight").size());
    const int64_t q_rows = t.dims[0], kv_rows = (t.dims[1] - q_rows) / 2;  // phi3: Q is n_embd wide
    const std::pair<const char*, int64_t> parts[] = {
        {"attn_q.weight", q_rows}, {"attn_k.weight", kv_rows}, {"attn_v.weight", kv_rows}};
    int64_t first = 0;
    for (const auto& [name, rows] : parts) {
      const kiln::GgufTensor part = t.rows({first, rows});
      w.add_tensor(layer + name, t.type, part.dims, std::vector<uint8_t>(part.data, part.data + part.nbytes));
      first += rows;
    }
  }
  return image(w);
}

}  // namespace

TEST_CASE("phi3: fused Q/K/V and gate-up, partial rotary, LongRoPE, and no sliding window") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny_phi3())));
  CHECK(d.arch == "phi3");
  CHECK(d.hp.n_rot == 12);
  CHECK(d.hp.head_dim == 16);
  CHECK(d.tensor("blk.1.attn_qkv.weight").dims == std::vector<int64_t>{64, 64 + 2 * 32});
  CHECK(d.tensor("blk.1.ffn_up.weight").dims == std::vector<int64_t>{64, 2 * 96});
  CHECK(d.tensor("rope_factors_long.weight").dims == std::vector<int64_t>{6});
  CHECK(d.tensors.size() == 3 + 2 + 2 * 6);
  CHECK(d.hp.longrope);
  CHECK(d.hp.n_ctx_orig == 64);
  // As its converter computes it, from the context length 128 over the original 64.
  CHECK(d.hp.rope_attn_factor == doctest::Approx(std::sqrt(1 + std::log(2.0) / std::log(64.0))));
  // llama.cpp disables Phi's sliding window: the key is there, every layer attends to the whole context.
  CHECK(d.hp.n_swa == 0);
  CHECK(d.layers == std::vector<kiln::LayerKind>(2, kiln::LayerKind{.sliding = false, .rope = true}));
  // The factors a compiled model divides by: the long ones only for a context beyond the original 64.
  CHECK(std::string(kiln::rope_factors_tensor(false, true, 65, d.hp.n_ctx_orig)) == "rope_factors_long.weight");
  CHECK(std::string(kiln::rope_factors_tensor(false, true, 64, d.hp.n_ctx_orig)) == "rope_factors_short.weight");
  CHECK(kiln::rope_factors_tensor(false, false, 4096, 0) == nullptr);

  // Each part of a fused tensor is bound as the matrix it holds, by its rows.
  const auto matrices = kiln::decoder::block_matrices(d, kiln::architecture("phi3", "test"), 1);
  REQUIRE(matrices.size() == 7);
  CHECK(matrices[2].tensor == "blk.1.attn_qkv.weight");
  CHECK(kiln::decoder::matrix_role(*matrices[3].matrix) == "attn_k");
  CHECK(matrices[3].rows->first == 64);
  CHECK(matrices[3].rows->count == 32);
  CHECK(kiln::decoder::matrix_role(*matrices[6].matrix) == "ffn_up");
  CHECK(matrices[6].rows->first == 96);

  // Without LongRoPE the context keys are not read.
  auto plain = tiny_phi3();
  plain.longrope_original_context = 0;
  const auto p = kiln::describe_model(image(kiln::synth::make_model(plain)));
  CHECK_FALSE(p.hp.longrope);
  CHECK(p.hp.n_ctx_orig == 0);
  CHECK(p.hp.rope_attn_factor == 1.0f);
}

TEST_CASE("phi3: Q, K and V may come as three tensors, as llama.cpp accepts") {
  const auto d = kiln::describe_model(with_separate_qkv(tiny_phi3()));
  CHECK(d.tensor("blk.0.attn_k.weight").dims == std::vector<int64_t>{64, 32});
  CHECK_THROWS_AS(d.tensor("blk.0.attn_qkv.weight"), kiln::Error);
  const auto matrices = kiln::decoder::block_matrices(d, kiln::architecture("phi3", "test"), 0);
  CHECK(matrices[3].tensor == "blk.0.attn_k.weight");
  CHECK_FALSE(matrices[3].rows);
}

TEST_CASE("phi3: codegen gives each part its fused tensor's type, and the layer llama's with RoPE on halves") {
  auto d = kiln::describe_model(image(kiln::synth::make_model(tiny_phi3())));
  for (auto& t : d.tensors)
    if (t.name == "blk.0.attn_qkv.weight") t.type = kiln::TensorType::Q8_0;
  const auto src = kiln::codegen::emit_model(d, {.name = "phi", .gguf_path = "/p.gguf", .n_ctx = 128, .max_batch = 32});
  CHECK(src.forward.find("using Arch = kiln::phi3::Phi3;") != std::string::npos);
  CHECK(src.forward.find("static constexpr bool longrope = true;") != std::string::npos);
  CHECK(src.forward.find("static constexpr int n_ctx_orig = 64;") != std::string::npos);
  const std::string layer0 = src.forward.substr(src.forward.find("struct BlockTypes0"));
  CHECK(layer0.find("attn_v = kiln::TensorType::Q8_0;") < layer0.find("};"));
  CHECK(layer0.find("ffn_gate = kiln::TensorType::F32;") < layer0.find("};"));
}

namespace {

// A mixture at a tiny size: 4 experts of width 32, 2 per token.
SynthSpec tiny_moe(std::string_view arch) {
  SynthSpec s = tiny(arch);
  s.shape.n_expert = 4;
  s.shape.n_expert_used = 2;
  s.shape.n_ff_exp = 32;
  return s;
}

SynthSpec tiny_qwen3moe() { return tiny_moe("qwen3moe"); }

}  // namespace

TEST_CASE("qwen3moe: the expert keys, the router and the experts as 3-D tensors") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny_qwen3moe())));
  CHECK(d.hp.n_expert == 4);
  CHECK(d.hp.n_expert_used == 2);
  CHECK(d.hp.n_ff_exp == 32);
  CHECK(d.hp.expert_weights_norm);  // no key: Qwen3-MoE normalizes
  CHECK(d.tensor("blk.1.ffn_gate_inp.weight").dims == std::vector<int64_t>{64, 4});
  CHECK(d.tensor("blk.1.ffn_gate_inp.weight").type == kiln::TensorType::F32);
  CHECK(d.tensor("blk.0.ffn_up_exps.weight").dims == std::vector<int64_t>{64, 32, 4});
  CHECK(d.tensor("blk.0.ffn_down_exps.weight").dims == std::vector<int64_t>{32, 64, 4});
  CHECK(d.tensors.size() == 3 + 2 * 12);
  const auto src = kiln::codegen::emit_model(d, {.name = "moe", .gguf_path = "/p.gguf", .n_ctx = 128, .max_batch = 32});
  CHECK(src.forward.find("static constexpr int n_expert_used = 2;") != std::string::npos);
  CHECK(src.forward.find("ffn_down_exps = kiln::TensorType::F32;") != std::string::npos);

  using doctest::Contains;
  const auto off = altered(tiny_qwen3moe(), "qwen3moe.expert_weights_norm", kiln::GgufValue{kiln::GgufValueType::BOOL, false});
  CHECK_FALSE(kiln::describe_model(off).hp.expert_weights_norm);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny_qwen3moe(), "qwen3moe.expert_used_count", u32(5))),
                       Contains("expert_used_count 5 is more than expert_count 4"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny_qwen3moe(), "qwen3moe.expert_count", std::nullopt)),
                       Contains("qwen3moe.expert_count"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "llama.expert_count", u32(8))),
                       Contains("mixture-of-experts models of the llama architecture are not supported"), kiln::Error);
  // A shared expert where the architecture has none is named as such.
  const GgufFile original = image(kiln::synth::make_model(tiny_qwen3moe()));
  kiln::GgufWriter shared;
  for (const auto& [k, v] : original.metadata()) shared.add(k, v);
  for (const auto& t : original.tensors()) shared.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.nbytes));
  shared.add_tensor("blk.0.ffn_up_shexp.weight", kiln::TensorType::F32, {64, 32}, std::vector<uint8_t>(64 * 32 * 4));
  CHECK_THROWS_WITH_AS(kiln::describe_model(image(shared)),
                       Contains("'blk.0.ffn_up_shexp.weight' is a shared expert, which the qwen3moe architecture does not have"),
                       kiln::Error);
  auto dense_experts = tiny();
  dense_experts.shape.n_expert = 4;
  CHECK_THROWS_WITH_AS(kiln::synth::make_model(dense_experts), Contains("experts are not part of the llama architecture"),
                       kiln::Error);
}

namespace {

// qwen2moe's mixture with a shared expert of width 64.
SynthSpec tiny_qwen2moe() {
  SynthSpec s = tiny_moe("qwen2moe");
  s.shape.n_ff_shexp = 64;
  return s;
}

}  // namespace

TEST_CASE("qwen2moe: qwen2's biases, the experts, and a shared expert with its one-row gate") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny_qwen2moe())));
  CHECK(d.hp.n_expert == 4);
  CHECK(d.hp.n_ff_shexp == 64);
  CHECK_FALSE(d.hp.expert_weights_norm);
  CHECK(d.tensor("blk.0.attn_q.bias").dims == std::vector<int64_t>{64});
  CHECK(d.tensor("blk.1.ffn_gate_inp_shexp.weight").dims == std::vector<int64_t>{64, 1});
  CHECK(d.tensor("blk.1.ffn_gate_inp_shexp.weight").type == kiln::TensorType::F32);
  CHECK(d.tensor("blk.1.ffn_up_shexp.weight").dims == std::vector<int64_t>{64, 64});
  CHECK(d.tensor("blk.1.ffn_down_shexp.weight").dims == std::vector<int64_t>{64, 64});
  CHECK(d.tensors.size() == 3 + 2 * 17);
  const auto src = kiln::codegen::emit_model(d, {.name = "moe", .gguf_path = "/p.gguf", .n_ctx = 128, .max_batch = 32});
  CHECK(src.forward.find("static constexpr int n_ff_shexp = 64;") != std::string::npos);
  CHECK(src.forward.find("ffn_gate_inp_shexp = kiln::TensorType::F32;") != std::string::npos);

  // llama.cpp's qwen2moe graph never renormalizes, whatever the file says;
  // the shared width defaults to feed_forward_length, as there.
  const auto on = altered(tiny_qwen2moe(), "qwen2moe.expert_weights_norm", kiln::GgufValue{kiln::GgufValueType::BOOL, true});
  CHECK_FALSE(kiln::describe_model(on).hp.expert_weights_norm);
  auto as_wide = tiny_qwen2moe();
  as_wide.shape.n_ff_shexp = 96;  // the tiny shape's feed_forward_length
  CHECK(kiln::describe_model(altered(as_wide, "qwen2moe.expert_shared_feed_forward_length", std::nullopt)).hp.n_ff_shexp ==
        96);
  using doctest::Contains;
  auto no_shared = tiny_qwen2moe();
  no_shared.shape.n_ff_shexp = 0;
  CHECK_THROWS_WITH_AS(kiln::synth::make_model(no_shared), Contains("qwen2moe architecture needs --shared-expert-ff"),
                       kiln::Error);
  // The gate as a vector, as llama.cpp also accepts it.
  const GgufFile written = image(kiln::synth::make_model(tiny_qwen2moe()));
  kiln::GgufWriter vector_gate;
  for (const auto& [k, v] : written.metadata()) vector_gate.add(k, v);
  for (const auto& t : written.tensors())
    vector_gate.add_tensor(t.name, t.type, t.name.ends_with("ffn_gate_inp_shexp.weight") ? std::vector<int64_t>{64} : t.dims,
                           std::vector<uint8_t>(t.data, t.data + t.nbytes));
  CHECK(kiln::describe_model(image(vector_gate)).tensor("blk.0.ffn_gate_inp_shexp.weight").dims ==
        std::vector<int64_t>{64});
  auto shared_in_qwen3moe = tiny_qwen3moe();
  shared_in_qwen3moe.shape.n_ff_shexp = 64;
  CHECK_THROWS_WITH_AS(kiln::synth::make_model(shared_in_qwen3moe),
                       Contains("a shared expert is not part of the qwen3moe architecture"), kiln::Error);
}

namespace {

// gpt-oss's mixture on 3 layers, with a window of 8.
SynthSpec tiny_gpt_oss() {
  SynthSpec s = tiny_moe("gpt-oss");
  s.shape.n_layer = 3;
  s.shape.n_swa = 8;
  return s;
}

}  // namespace

TEST_CASE("gpt-oss: sliding even layers, YaRN, sinks, biases, experts without renormalization") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny_gpt_oss())));
  CHECK(d.hp.n_swa == 8);
  CHECK(d.layers[0].sliding);
  CHECK_FALSE(d.layers[1].sliding);
  CHECK(d.layers[2].sliding);
  CHECK(d.hp.rope_base_swa == d.hp.rope_base);
  CHECK(d.hp.rope_yarn);
  CHECK(d.hp.rope_freq_scale == 1.0f / 32);
  CHECK(d.hp.n_ctx_orig == 4096);
  CHECK(d.hp.rope_yarn_beta_fast == 32.0f);
  CHECK(d.hp.rope_yarn_beta_slow == 1.0f);
  CHECK(d.hp.rope_attn_factor == doctest::Approx(1 + 0.1 * std::log(32.0)));
  CHECK_FALSE(d.hp.expert_weights_norm);
  CHECK(d.tensor("blk.0.attn_sinks.weight").dims == std::vector<int64_t>{4});
  CHECK(d.tensor("blk.2.ffn_gate_exps.bias").dims == std::vector<int64_t>{32, 4});
  CHECK(d.tensor("blk.2.ffn_down_exps.bias").dims == std::vector<int64_t>{64, 4});
  CHECK(d.tensors.size() == 3 + 3 * 19);

  using doctest::Contains;
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny_gpt_oss(), "gpt-oss.attention.sliding_window", std::nullopt)),
                       Contains("key 'gpt-oss.attention.sliding_window' is missing"), kiln::Error);
  auto no_window = tiny_gpt_oss();
  no_window.shape.n_swa = 0;
  CHECK_THROWS_WITH_AS(kiln::synth::make_model(no_window), Contains("gpt-oss architecture needs --sliding-window"),
                       kiln::Error);
}

TEST_CASE("Llama 3.1 frequency factors and linear RoPE scaling are read") {
  auto spec = tiny();
  spec.rope_freqs = true;
  CHECK(kiln::describe_model(image(kiln::synth::make_model(spec))).hp.rope_freqs);
  const auto linear = altered(tiny(), "llama.rope.scaling.type", kiln::GgufValue{kiln::GgufValueType::STRING, std::string("linear")});
  CHECK(kiln::describe_model(linear).hp.rope_freq_scale == 1.0f);  // factor absent: 1
}

TEST_CASE("almost-right files are refused, naming what is wrong") {
  using doctest::Contains;
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "general.architecture", kiln::GgufValue{kiln::GgufValueType::STRING, std::string("gpt-neox")})),
                       Contains("architecture 'gpt-neox' is not supported"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "llama.block_count", std::nullopt)),
                       Contains("llama.block_count"), kiln::Error);
  // Refused at once, before a tensor rule is made for each of the blocks
  // (10^7 blocks of rules ended in std::bad_alloc).
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "llama.block_count", u32(10'000'000))),
                       Contains("block_count 10000000 needs at least 9 tensors per block, the file has"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "llama.attention.head_count", u32(6))),
                       Contains("not a multiple of head_count 6 and there is no attention.key_length"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "llama.attention.head_count", u32(5))),
                       Contains("head_count 5 is not a multiple of head_count_kv 2"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "llama.feed_forward_length", u32(100))),
                       Contains("tensor 'blk.0.ffn_gate.weight' has shape [64, 96], the hyperparameters imply [64, 100]"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "", std::nullopt, "blk.1.ffn_up.weight")),
                       Contains("tensor 'blk.1.ffn_up.weight' is missing"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "", std::nullopt, "", true)),
                       Contains("tensor 'blk.0.mystery.weight' is not part of the llama architecture"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "llama.rope.scaling.type", kiln::GgufValue{kiln::GgufValueType::STRING, std::string("su")})),
                       Contains("RoPE scaling 'su' is not supported"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny(), "llama.attention.layer_norm_rms_epsilon", std::nullopt)),
                       Contains("layer_norm_rms_epsilon' is missing"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny_phi3(), "", std::nullopt, "rope_factors_short.weight")),
                       Contains("tensor 'rope_factors_short.weight' is missing"), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::describe_model(altered(tiny_phi3(), "", std::nullopt, "blk.1.attn_qkv.weight")),
                       Contains("tensor 'blk.1.attn_qkv.weight' is missing"), kiln::Error);
  auto narrow_heads = tiny_phi3();  // a head size of 8: Q 32 wide, not n_embd
  narrow_heads.shape.head_dim = 8;
  narrow_heads.shape.n_rot = 0;
  CHECK_THROWS_WITH_AS(kiln::describe_model(image(kiln::synth::make_model(narrow_heads))),
                       Contains("phi3 needs head_count x head size = embedding_length"), kiln::Error);
  auto llama_longrope = tiny();
  llama_longrope.longrope_original_context = 64;
  CHECK_THROWS_WITH_AS(kiln::synth::make_model(llama_longrope), Contains("LongRoPE factors are not part of the llama"),
                       kiln::Error);
}

TEST_CASE("a missing output.weight means tied embeddings") {
  auto spec = tiny();
  spec.tied_output = true;
  CHECK(kiln::describe_model(image(kiln::synth::make_model(spec))).hp.tied_output);
}

TEST_CASE("the mismatch between two descriptions names the first difference") {
  auto a = kiln::describe_model(image(kiln::synth::make_model(tiny())));
  auto b = a;
  CHECK_FALSE(kiln::describe_mismatch(a, b));
  b.hp.n_layer = 3;
  CHECK(*kiln::describe_mismatch(a, b) == "block_count is 3, this binary was compiled for 2");
  b = a;
  b.tensors[5].type = kiln::TensorType::F16;
  CHECK(kiln::describe_mismatch(a, b)->find("has type f16, this binary was compiled for f32") != std::string::npos);
  CHECK(a.fingerprint() != b.fingerprint());
}

TEST_CASE("codegen emits one block-types struct per distinct layer type set, and every layer") {
  auto d = kiln::describe_model(image(kiln::synth::make_model(tiny())));
  for (auto& t : d.tensors)
    if (t.name == "blk.1.ffn_down.weight") t.type = kiln::TensorType::Q8_0;
  const auto src = kiln::codegen::emit_model(d, {.name = "tiny-model", .gguf_path = "/m.gguf", .n_ctx = 128, .max_batch = 32});
  CHECK(src.model.find("namespace kiln::models::tiny_model") != std::string::npos);
  CHECK(src.forward.find("struct BlockTypes1") != std::string::npos);
  CHECK(src.forward.find("using Arch = kiln::llama::Llama;") != std::string::npos);
  CHECK(src.forward.find("kiln::decoder::Layer<0, BlockTypes0, kiln::LayerKind{.sliding = false, .rope = true}>,\n") !=
        std::string::npos);
  CHECK(src.forward.find("kiln::decoder::Layer<1, BlockTypes1, kiln::LayerKind{.sliding = false, .rope = true}>>;") !=
        std::string::npos);
  CHECK(src.forward.find("static constexpr int n_ctx = 128;") != std::string::npos);
  CHECK(src.header.find("kDefaultGguf = \"/m.gguf\"") != std::string::npos);
  CHECK(kiln::codegen::identifier("3b.q4") == "m_3b_q4");
}

TEST_CASE("codegen compiles the timed forward pass in a file of its own, which only -bench links") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny())));
  const auto src = kiln::codegen::emit_model(d, {.name = "m", .gguf_path = "/m.gguf", .n_ctx = 128, .max_batch = 32});
  const std::string timed = "kiln::KernelTimes kiln::models::m::time_kernels(kiln::Sequence& seq,";
  CHECK(src.header.find("kiln::KernelTimes time_kernels(kiln::Sequence& seq,") != std::string::npos);
  CHECK(src.timed.find("#include \"m.forward.hpp\"") != std::string::npos);
  CHECK(src.timed.find("\n" + timed) != std::string::npos);
  CHECK(src.model.find("#include \"m.forward.hpp\"") != std::string::npos);
  CHECK(src.model.find("time_kernels") == std::string::npos);
  CHECK(src.bench.find("kiln::models::m::time_kernels") != std::string::npos);
  CHECK(src.main.find("time_kernels") == std::string::npos);
  CHECK(src.server.find("time_kernels") == std::string::npos);
}

TEST_CASE("codegen emits the KV cache type: F16 unless F32 is asked for") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny())));
  const char* kv = "static constexpr kiln::TensorType kv_type = kiln::TensorType::";
  const auto f16 = kiln::codegen::emit_model(d, {.name = "m", .gguf_path = "/m.gguf", .n_ctx = 128, .max_batch = 32});
  CHECK(f16.forward.find(std::string(kv) + "F16;") != std::string::npos);
  const auto f32 = kiln::codegen::emit_model(
      d, {.name = "m", .gguf_path = "/m.gguf", .n_ctx = 128, .max_batch = 32, .kv_type = kiln::TensorType::F32});
  CHECK(f32.forward.find(std::string(kv) + "F32;") != std::string::npos);
}

TEST_CASE("codegen emits whether sliding-window layers keep a ring or every position (SWA_FULL)") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny())));
  const auto ring = kiln::codegen::emit_model(d, {.name = "m", .gguf_path = "/m.gguf", .n_ctx = 128, .max_batch = 32});
  CHECK(ring.forward.find("static constexpr bool swa_full = false;") != std::string::npos);
  const auto full = kiln::codegen::emit_model(
      d, {.name = "m", .gguf_path = "/m.gguf", .n_ctx = 128, .max_batch = 32, .swa_full = true});
  CHECK(full.forward.find("static constexpr bool swa_full = true;") != std::string::npos);
}

TEST_CASE("codegen with a weight image: the packer, the .incbin and a load() that reads them; else the path search") {
  const auto d = kiln::describe_model(image(kiln::synth::make_model(tiny())));
  const auto plain = kiln::codegen::emit_model(d, {.name = "m", .gguf_path = "/models/m.gguf", .n_ctx = 128, .max_batch = 32});
  CHECK(plain.pack.empty());
  CHECK(plain.weights.empty());
  CHECK(plain.header.find("kBuiltIn = false") != std::string::npos);
  CHECK(plain.model.find("kiln::default_model_path(\"m.gguf\", kDefaultGguf)") != std::string::npos);

  const auto embed = kiln::codegen::emit_model(
      d, {.name = "m", .gguf_path = "/models/m.gguf", .n_ctx = 128, .max_batch = 32, .embed_image = "/b/m.weights"});
  CHECK(embed.header.find("kBuiltIn = true") != std::string::npos);
  CHECK(embed.pack.find("kiln::decoder::pack_main<kiln::models::m::generated::Config>") != std::string::npos);
  CHECK(embed.weights.find(".incbin \\\"/b/m.weights\\\"") != std::string::npos);
  CHECK(embed.weights.find(".lrodata") != std::string::npos);
  CHECK(embed.model.find("kiln_weights_m_size") != std::string::npos);
  CHECK(embed.model.find("kiln_weights_m_end") == std::string::npos);  // gigabytes away: never referenced
  CHECK_THROWS_AS(kiln::codegen::emit_model(d, {.name = "m", .gguf_path = "/m.gguf", .n_ctx = 128, .max_batch = 32,
                                                .embed_image = "/b/\"m.weights"}),
                  kiln::Error);
}
