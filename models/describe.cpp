#include "models/describe.hpp"

#include "models/decoder/read_decoder.hpp"

namespace kiln {

extern const Architecture kLlama, kQwen2, kQwen3, kGemma3, kSmolLM3, kPhi3, kQwen3Moe, kQwen2Moe, kGptOss;

namespace {

const Architecture* const kArchitectures[] = {&kLlama, &kQwen2, &kQwen3, &kGemma3, &kSmolLM3, &kPhi3,
                                               &kQwen3Moe, &kQwen2Moe, &kGptOss};

}  // namespace

const Architecture& architecture(std::string_view name, const std::string& where) {
  std::string known;
  for (const Architecture* a : kArchitectures) {
    if (a->name == name) return *a;
    known += (known.empty() ? "" : ", ") + std::string(a->name);
  }
  throw Error(where + ": architecture '" + std::string(name) + "' is not supported (kiln knows: " + known + ")");
}

ModelDesc describe_model(const GgufFile& file) {
  const Architecture& a = architecture(file.get_string("general.architecture"), file.path());
  return a.describe ? a.describe(file) : read_decoder(file, a);
}

}  // namespace kiln
