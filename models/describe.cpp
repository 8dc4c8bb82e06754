#include "models/describe.hpp"

namespace kiln {

extern const Architecture kLlama, kQwen2, kQwen3, kGemma3, kSmolLM3;

namespace {

const Architecture* const kArchitectures[] = {&kLlama, &kQwen2, &kQwen3, &kGemma3, &kSmolLM3};

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
  return architecture(file.get_string("general.architecture"), file.path()).describe(file);
}

}  // namespace kiln
