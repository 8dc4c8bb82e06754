#include "models/decoder/block_tensors.hpp"

#include <algorithm>

#include "engine/error/error.hpp"

namespace kiln::decoder {

BlockSizes block_sizes(const Hyperparams& hp) {
  return {hp.n_embd, int64_t(hp.n_head) * hp.head_dim, int64_t(hp.n_head_kv) * hp.head_dim, hp.head_dim, hp.n_head,
          hp.n_ff, hp.n_expert, hp.n_ff_exp, hp.n_ff_shexp};
}

std::vector<int64_t> tensor_dims(const BlockTensor& t, const BlockSizes& size) {
  std::vector<int64_t> dims = {size(t.cols)};
  if (t.rows != Dim::None) dims.push_back(size(t.rows));
  if (t.stack != Dim::None) dims.push_back(size(t.stack));
  return dims;
}

const BlockTensor& block_tensor(std::string_view name) {
  for (const BlockTensor& t : kBlockTensors)
    if (t.name == name) return t;
  throw Error("'" + std::string(name) + "' is not a block tensor kiln knows (models/decoder/block_tensors.hpp)");
}

const FusedTensor& fused_tensor(std::string_view name) {
  for (const FusedTensor& f : kFusedTensors)
    if (f.name == name) return f;
  throw Error("'" + std::string(name) + "' is not a fused tensor kiln knows (models/decoder/block_tensors.hpp)");
}

std::vector<int64_t> stacked_dims(std::span<const std::string_view> matrices, const BlockSizes& size) {
  int64_t rows = 0;
  for (const std::string_view m : matrices) rows += size(block_tensor(m).rows);
  return {size(block_tensor(matrices.front()).cols), rows};
}

std::vector<MatrixSource> block_matrices(const ModelDesc& d, const Architecture& arch, int layer) {
  std::vector<MatrixSource> out;
  for (const std::string_view name : arch.block)
    if (const BlockTensor& t = block_tensor(name); t.matrix) out.push_back({&t, block_tensor_name(layer, name), {}});
  const BlockSizes size = block_sizes(d.hp);
  for (const std::string_view name : arch.fused) {
    const std::string fused = block_tensor_name(layer, name);
    const bool present =
        std::any_of(d.tensors.begin(), d.tensors.end(), [&](const TensorDesc& t) { return t.name == fused; });
    int64_t first = 0;
    for (const std::string_view part : fused_tensor(name).parts) {
      const BlockTensor& t = block_tensor(part);
      if (!present) {  // held apart (FusedTensor::or_separate)
        out.push_back({&t, block_tensor_name(layer, part), {}});
        continue;
      }
      out.push_back({&t, fused, RowRange{first, size(t.rows)}});
      first += size(t.rows);
    }
  }
  return out;
}

}  // namespace kiln::decoder
