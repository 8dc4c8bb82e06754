#include "models/decoder/block_tensors.hpp"

#include "engine/error.hpp"

namespace kiln::decoder {

const BlockTensor& block_tensor(std::string_view name) {
  for (const BlockTensor& t : kBlockTensors)
    if (t.name == name) return t;
  throw Error("'" + std::string(name) + "' is not a block tensor kiln knows (models/decoder/block_tensors.hpp)");
}

}  // namespace kiln::decoder
