#include "models/describe.hpp"

namespace kiln {

ModelDesc describe_model(const GgufFile& file) {
  const std::string arch = file.get_string("general.architecture");
  if (arch == "llama") return describe_llama(file);
  if (arch == "qwen2") return describe_qwen2(file);
  throw Error(file.path() + ": architecture '" + arch + "' is not supported (kiln knows: llama, qwen2)");
}

}  // namespace kiln
