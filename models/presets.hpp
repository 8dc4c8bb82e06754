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
  int n_swa = 0;     // sliding window of gemma3's sliding layers; 0: none
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
};

constexpr std::optional<ModelShape> find_preset(std::string_view name) {
  for (const auto& p : kPresets)
    if (p.name == name) return p;
  return std::nullopt;
}

}  // namespace kiln
