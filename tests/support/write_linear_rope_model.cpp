// Writes the test model kiln_test_linear_rope (tests/CMakeLists.txt): a
// random-weight llama with linear RoPE scaling (rope.scaling.type "linear",
// factor 4), which kiln-synth does not write, Q8_0 attention and Q4_0
// feed-forward matrices whose rows (256 and 768 values) make token chunks of
// about 400 and 130 tokens, and an RMS epsilon other than the usual 1e-5.
//
//   write_linear_rope_model OUT.gguf
#include <cstdio>
#include <exception>

#include "codegen/synth.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_linear_rope_model OUT.gguf\n");
    return 1;
  }
  try {
    kiln::synth::SynthSpec spec;
    spec.shape = {"linear-rope", "llama", 256, 1, 4, 2, 768, 512, 512};
    spec.types.token_embd = kiln::TensorType::Q8_0;
    spec.types.output = kiln::TensorType::F16;
    spec.types.attention = kiln::TensorType::Q8_0;
    spec.types.feed_forward = kiln::TensorType::Q4_0;
    spec.rms_eps = 1e-6f;
    spec.seed = 5;
    kiln::GgufWriter w = kiln::synth::make_model(spec);
    w.add_string("llama.rope.scaling.type", "linear");
    w.add_f32("llama.rope.scaling.factor", 4.0f);
    w.write(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_linear_rope_model: %s\n", e.what());
    return 1;
  }
  return 0;
}
