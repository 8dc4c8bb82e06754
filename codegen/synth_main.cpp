// kiln-synth: writes a synthetic llama GGUF with random weights.
//
//   kiln-synth --preset stories110m --type q8_0 -o stories110m-q8_0.gguf
//   kiln-synth --embd 256 --layers 2 --heads 4 --kv-heads 2 --ff 768 --vocab 1024 --ctx 256 -o tiny.gguf
//   kiln-synth --preset qwen3-0.6b --vocab-from ggml-vocab-qwen2.gguf -o qwen3-shape.gguf
#include <cstdio>
#include <optional>
#include <string>

#include "apps/cli_support.hpp"
#include "codegen/synth.hpp"

namespace {

using kiln::Error;

const char* kUsage =
    "usage: kiln-synth [--preset NAME] [sizes] [types] [--tied] [--seed N] -o FILE.gguf\n"
    "\n"
    "Writes a GGUF of any architecture kiln compiles, with RANDOM weights (it\n"
    "generates gibberish), in the keys and tensor names llama.cpp's converters write:\n"
    "for demos, benchmarks and tests without a download.\n"
    "\n"
    "  --preset NAME      stories260k, stories15m, stories110m, tinyllama-1.1b, qwen2.5-0.5b,\n"
    "                     qwen3-0.6b, gemma3-1b, smollm3-3b, phi4-mini, qwen3-30b-a3b, gpt-oss-20b\n"
    "                     or qwen1.5-moe-a2.7b\n"
    "  --arch NAME        llama (default), qwen2 (Q/K/V biases, NEOX RoPE), qwen3 (Q/K norms),\n"
    "                     gemma3 (Q/K norms, post-norms, GELU, sliding window), smollm3 (NoPE layers),\n"
    "                     phi3 (fused attn_qkv and gate-up ffn_up, NEOX RoPE), qwen3moe (qwen3's\n"
    "                     attention, a mixture of experts: needs the three expert sizes below),\n"
    "                     qwen2moe (qwen2's attention, a mixture of experts and a shared expert:\n"
    "                     needs the expert sizes and --shared-expert-ff) or\n"
    "                     gpt-oss (biases, attention sinks, YaRN, sliding window on even layers,\n"
    "                     a mixture of experts with biases: needs --sliding-window and the expert sizes)\n"
    "  sizes (override the preset; all are needed without one):\n"
    "    --embd N --layers N --heads N --kv-heads N --ff N --vocab N --ctx N\n"
    "    --head-dim N       Q/K/V head size (default n_embd / heads; written as attention.key_length)\n"
    "    --sliding-window N gemma3: the window of five layers of six (default none: all global);\n"
    "                       gpt-oss: of every other layer; phi3: written as its converter does,\n"
    "                       and ignored as llama.cpp does\n"
    "    --rope-dim N       rotated dimensions of a head (rope.dimension_count; default all)\n"
    "    --experts N        qwen3moe, qwen2moe, gpt-oss: experts per layer (expert_count)\n"
    "    --experts-used K   qwen3moe, qwen2moe, gpt-oss: experts each token is routed to (expert_used_count)\n"
    "    --expert-ff N      qwen3moe, qwen2moe, gpt-oss: one expert's width (expert_feed_forward_length)\n"
    "    --shared-expert-ff N  qwen2moe: the shared expert's width (expert_shared_feed_forward_length)\n"
    "  types (f32, f16, bf16, q8_0, q5_1, q5_0, q4_0, iq4_nl, mxfp4, q6_k, q5_k, q4_k, iq4_xs,\n"
    "         q3_k, q2_k; default f32; q8_0 .. mxfp4 need rows of a multiple of 32, the rest of 256):\n"
    "    --type T          every matrix; or q4_k_m: llama-quantize's Q4_K_M mix (Q4_K, with\n"
    "                      Q6_K for the output and for attn_v and ffn_down of some layers)\n"
    "    --type-embd T     token_embd      --type-output T   output\n"
    "    --type-attn T     attention       --type-ffn T      feed-forward\n"
    "    --type-experts T  a mixture's routed experts (default: the feed-forward's; the router\n"
    "                      and the shared expert's gate stay f32, its matrices take --type-ffn)\n"
    "  --vocab-from FILE  the tokenizer of FILE (a GGUF, e.g. llama.cpp's vocab-only ggml-vocab-qwen2.gguf):\n"
    "                     its tokenizer.* keys, chat template included, and its vocabulary's size\n"
    "                     (instead of --vocab and the synthetic SentencePiece vocabulary)\n"
    "  --tied             no output.weight (logits use token_embd)\n"
    "  --rope-freqs       Llama 3.1 RoPE frequency factors (rope_freqs.weight)\n"
    "  --longrope N       phi3: LongRoPE factors (rope_factors_long/short.weight) for an original\n"
    "                     context of N, and the attention factor its converter derives from --ctx / N\n"
    "  --seed N           random seed (default 1)\n"
    "  -o FILE            where to write the GGUF (atomically)\n";

kiln::TensorType parse_type(const std::string& name) {
  for (const auto& t : kiln::kTypeTraits)
    if (t.name == name) return t.type;
  throw Error("unknown weight type '" + name + "' (see --help)");
}

// --type: one type for every matrix, or a mix.
kiln::synth::WeightTypes parse_whole_type(const std::string& name) {
  if (name == "q4_k_m") return kiln::synth::q4_k_m_types();
  const kiln::TensorType type = parse_type(name);
  return {type, type, type, type, std::nullopt, std::nullopt};
}

int parse_positive(const std::string& flag, const std::string& text) {
  return static_cast<int>(kiln::parse_int(flag, text, 1, 1 << 30));
}

int run(int argc, char** argv) {
  kiln::synth::SynthSpec spec;
  spec.shape = {"custom", "llama", 0, 0, 0, 0, 0, 0, 0};
  std::string arch;
  std::string out;
  std::optional<kiln::GgufFile> vocabulary;
  bool vocab_size_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return kiln::flag_value(argc, argv, i); };
    auto& s = spec.shape;
    auto& t = spec.types;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--preset") {
      const std::string name = value();
      const auto p = kiln::find_preset(name);
      if (!p) throw Error("unknown preset '" + name + "' (see --help)");
      s = *p;
    } else if (a == "--embd") s.n_embd = parse_positive(a, value());
    else if (a == "--layers") s.n_layer = parse_positive(a, value());
    else if (a == "--heads") s.n_head = parse_positive(a, value());
    else if (a == "--kv-heads") s.n_head_kv = parse_positive(a, value());
    else if (a == "--ff") s.n_ff = parse_positive(a, value());
    else if (a == "--vocab") {
      s.n_vocab = parse_positive(a, value());
      vocab_size_given = true;
    } else if (a == "--vocab-from") vocabulary = kiln::GgufFile::open(value());
    else if (a == "--ctx") s.n_ctx = parse_positive(a, value());
    else if (a == "--head-dim") s.head_dim = parse_positive(a, value());
    else if (a == "--sliding-window") s.n_swa = parse_positive(a, value());
    else if (a == "--rope-dim") s.n_rot = parse_positive(a, value());
    else if (a == "--experts") s.n_expert = parse_positive(a, value());
    else if (a == "--experts-used") s.n_expert_used = parse_positive(a, value());
    else if (a == "--expert-ff") s.n_ff_exp = parse_positive(a, value());
    else if (a == "--shared-expert-ff") s.n_ff_shexp = parse_positive(a, value());
    else if (a == "--type") t = parse_whole_type(value());
    else if (a == "--type-embd") t.token_embd = parse_type(value());
    else if (a == "--type-output") t.output = parse_type(value());
    else if (a == "--type-attn") t.attention = parse_type(value());
    else if (a == "--type-ffn") t.feed_forward = parse_type(value());
    else if (a == "--type-experts") t.experts = parse_type(value());
    else if (a == "--tied") spec.tied_output = true;
    else if (a == "--arch") arch = value();
    else if (a == "--rope-freqs") spec.rope_freqs = true;
    else if (a == "--longrope") spec.longrope_original_context = parse_positive(a, value());
    else if (a == "--seed") spec.seed = static_cast<uint64_t>(parse_positive(a, value()));
    else if (a == "-o" || a == "--output") out = value();
    else throw Error("unknown argument '" + a + "' (see --help)");
  }
  if (vocabulary) {
    if (vocab_size_given) throw Error("--vocab and --vocab-from both size the vocabulary: give one");
    spec.shape.n_vocab = kiln::synth::token_count(*vocabulary);
    spec.vocabulary = &*vocabulary;
  }
  const auto& s = spec.shape;
  if (out.empty()) throw Error("no output file: give -o FILE.gguf");
  if (!s.n_embd || !s.n_layer || !s.n_head || !s.n_ff || !s.n_vocab || !s.n_ctx)
    throw Error("the model's size is incomplete: give --preset or all of --embd --layers --heads --ff --vocab --ctx");
  if (!s.n_head_kv) spec.shape.n_head_kv = s.n_head;
  if (!arch.empty()) spec.shape.arch = arch;
  // The RoPE base and norm epsilon of Qwen2/3, Gemma 3 and SmolLM3, and
  // gpt-oss's; Phi-3's are llama's.
  if (spec.shape.arch == "gpt-oss") {
    spec.rope_base = 150000.0f;
  } else if (spec.shape.arch != "llama" && spec.shape.arch != "phi3") {
    spec.rope_base = 1e6f;
    spec.rms_eps = 1e-6f;
  }
  kiln::synth::make_model(spec).write(out);
  std::fprintf(stderr, "kiln-synth: wrote %s (%s shape, random weights)\n", out.c_str(), std::string(s.name).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return kiln::run_reporting_errors("kiln-synth", [&] { return run(argc, argv); });
}
