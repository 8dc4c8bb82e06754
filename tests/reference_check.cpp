#include "tests/reference_check.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "tests/reference_forward.hpp"

namespace kiln::test {

std::vector<float> all_logits(Model& model, const std::vector<int32_t>& ids, int chunk) {
  const size_t vocab = size_t(model.n_vocab());
  std::vector<float> out(ids.size() * vocab);
  for (size_t pos = 0; pos < ids.size(); pos += size_t(chunk)) {
    const int n = static_cast<int>(std::min(ids.size() - pos, size_t(chunk)));
    model.forward(ids.data() + pos, n, static_cast<int>(pos), Logits::All, out.data() + pos * vocab);
  }
  return out;
}

ReferenceAgreement compare_with_reference(Model& model, const GgufFile& file, const std::vector<int32_t>& ids) {
  ReferenceModel ref(file, model.kv_layout().type == "f16");
  const std::vector<float> got = all_logits(model, ids, model.max_batch());
  const size_t vocab = size_t(model.n_vocab());
  ReferenceAgreement a;
  a.positions = ids.size();
  for (size_t p = 0; p < ids.size(); ++p) {
    const std::vector<float> want = ref.step(ids[p]);
    float worst_here = 0;
    for (size_t i = 0; i < vocab; ++i) worst_here = std::max(worst_here, std::fabs(got[p * vocab + i] - want[i]));
    a.worst = std::max(a.worst, worst_here);
    a.close += worst_here <= 2e-3f;
  }
  return a;
}

void check_against_reference(Model& model, const GgufFile& file, const std::vector<int32_t>& ids) {
  const ReferenceAgreement a = compare_with_reference(model, file, ids);
  INFO("max |d| vs the reference forward pass " << a.worst << "; " << a.close << " of " << a.positions
                                                << " positions within 2e-3");
  const auto& tensors = model.desc().tensors;
  const bool rounds_activations = std::any_of(tensors.begin(), tensors.end(), [](const TensorDesc& t) {
    return t.type == TensorType::Q8_0 || t.type == TensorType::Q4_0;
  });
  if (rounds_activations) {
    // Both round activations to 8 bits, but from values computed in float
    // here and in double there: where the two straddle a rounding boundary, a
    // value moves by one step, and the difference (up to ~0.7 seen) carries on
    // to later positions through the cache. A real error shows at every
    // position; such a move only at some.
    CHECK(a.close * 2 >= a.positions);
    CHECK(a.worst <= 1.0f);
  } else {
    CHECK(a.worst <= 2e-3f);
  }
}

}  // namespace kiln::test
