// Named model shapes for synthetic (random-weight) models: the demo and the
// benchmarks get real-sized models without any download.
#pragma once

#include <optional>
#include <string_view>

namespace kiln {

struct ModelShape {
  std::string_view name;
  std::string_view arch;  // GGUF general.architecture
  int n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
  int head_dim = 0;  // Q/K/V head size; 0: n_embd / n_head
  int n_swa = 0;     // sliding window of gemma3's sliding layers (phi3: written, unused); 0: none
  int n_rot = 0;     // rotated dimensions of a head (rope.dimension_count); 0: all of them
  int n_expert = 0;       // a mixture's experts per layer (qwen3moe, qwen2moe, gpt-oss); 0: a dense model
  int n_expert_used = 0;  // experts each token is routed to
  int n_ff_exp = 0;       // one expert's feed-forward width
  int n_ff_shexp = 0;     // the shared expert's width (qwen2moe); 0: none
};

inline constexpr ModelShape kPresets[] = {
    // Karpathy's llama2.c TinyStories models.
    {"stories260k", "llama", 64, 5, 8, 4, 172, 512, 512},
    {"stories15m", "llama", 288, 6, 6, 6, 768, 32000, 256},
    {"stories110m", "llama", 768, 12, 12, 12, 2048, 32000, 1024},
    // TinyLlama 1.1B (Llama 2 architecture with grouped-query attention).
    {"tinyllama-1.1b", "llama", 2048, 22, 32, 4, 5632, 32000, 2048},
    // Qwen2.5 0.5B (Q/K/V biases, NEOX RoPE, 151936-token vocabulary).
    {"qwen2.5-0.5b", "qwen2", 896, 24, 14, 2, 4864, 151936, 32768},
    // Qwen3 0.6B (Q/K norms, head size 128 from attention.key_length).
    {"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 3072, 151936, 40960, 128},
    // Gemma 3 1B (head size 256, a 512-token window on five layers of six, 262144-token vocabulary).
    {"gemma3-1b", "gemma3", 1152, 26, 4, 1, 6912, 262144, 32768, 256, 512},
    // SmolLM3 3B (no RoPE on every fourth layer).
    {"smollm3-3b", "smollm3", 2048, 36, 16, 4, 11008, 128256, 65536},
    // Phi-4-mini (fused attn_qkv and gate-up, RoPE on 96 of the 128 dimensions of a head).
    {"phi4-mini", "phi3", 3072, 32, 24, 8, 8192, 200064, 131072, 0, 0, 96},
    // Qwen3-30B-A3B (a mixture of 128 experts of width 768, 8 used per token;
    // feed_forward_length is its converter's, unused).
    {"qwen3-30b-a3b", "qwen3moe", 2048, 48, 32, 4, 6144, 151936, 40960, 128, 0, 0, 128, 8, 768},
    // gpt-oss-20b (64 heads of 64, a 128-token window on every other layer,
    // 32 experts of width 2880, 4 used per token; YaRN written by kiln-synth).
    {"gpt-oss-20b", "gpt-oss", 2880, 24, 64, 8, 2880, 201088, 131072, 64, 128, 0, 32, 4, 2880},
    // Qwen1.5-MoE-A2.7B (60 experts of width 1408, 4 used per token, and a
    // shared expert of width 5632 on every token).
    {"qwen1.5-moe-a2.7b", "qwen2moe", 2048, 24, 16, 16, 5632, 151936, 8192, 0, 0, 0, 60, 4, 1408, 5632},
};

constexpr std::optional<ModelShape> find_preset(std::string_view name) {
  for (const auto& p : kPresets)
    if (p.name == name) return p;
  return std::nullopt;
}

}  // namespace kiln
