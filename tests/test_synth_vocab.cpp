// kiln-synth --vocab-from: a synthetic model with the tokenizer of a real
// vocabulary (Qwen2's 151,936 tokens) tokenizes as that vocabulary does.
#include <doctest/doctest.h>

#include <string>

#include "codegen/synth.hpp"
#include "tests/support/test_tokenizer_support.hpp"

namespace {

using kiln::GgufFile;
using kiln::Tokenizer;

kiln::synth::SynthSpec small_qwen3(const GgufFile& vocabulary) {
  kiln::synth::SynthSpec spec;
  spec.shape = {"test", "qwen3", 64, 1, 2, 1, 128, kiln::synth::token_count(vocabulary), 256};
  spec.types = {kiln::TensorType::Q8_0, kiln::TensorType::Q8_0, kiln::TensorType::F32, kiln::TensorType::F32, {}, {}};
  spec.tied_output = true;
  spec.vocabulary = &vocabulary;
  return spec;
}

}  // namespace

TEST_CASE("a synthetic model with Qwen2's vocabulary tokenizes as the vocabulary does" * kiln::test::needs_fixtures) {
  const GgufFile source = kiln::test::open_shared("tokenizer-tests/ggml-vocab-qwen2.gguf");
  const GgufFile model = GgufFile::from_bytes(kiln::synth::make_model(small_qwen3(source)).bytes());
  for (const auto& entry : source.metadata()) {
    const std::string& key = entry.first;  // a variable, not a binding: doctest's CAPTURE takes it in a lambda
    if (!key.starts_with("tokenizer.")) continue;
    CAPTURE(key);
    const kiln::GgufValue* copied = model.find(key);
    REQUIRE(copied);
    CHECK(*copied == entry.second);
  }
  CHECK(model.get_uint("qwen3.vocab_size") == 151936);
  REQUIRE(model.find_tensor("token_embd.weight"));
  CHECK(model.find_tensor("token_embd.weight")->dims == std::vector<int64_t>{64, 151936});

  const Tokenizer expected = Tokenizer::from_gguf(source);
  const Tokenizer tokenizer = Tokenizer::from_gguf(model);
  CHECK(tokenizer.n_vocab() == 151936);
  const auto texts = kiln::test::read_test_texts(source.path() + ".inp");
  REQUIRE(texts.size() > 40);
  for (const std::string& text : texts) {
    CAPTURE(text);
    CHECK(tokenizer.encode(text, /*add_special=*/true, /*parse_special=*/true) ==
          expected.encode(text, /*add_special=*/true, /*parse_special=*/true));
  }
}

TEST_CASE("a vocabulary whose size is not the shape's is refused" * kiln::test::needs_fixtures) {
  const GgufFile source = kiln::test::open_shared("tokenizer-tests/ggml-vocab-qwen2.gguf");
  kiln::synth::SynthSpec spec = small_qwen3(source);
  spec.shape.n_vocab = 512;
  CHECK_THROWS_WITH_AS(kiln::synth::make_model(spec), doctest::Contains("has 151936 tokens, the shape 512"), kiln::Error);
}
