#include "apps/token_profile.hpp"

#include <algorithm>
#include <vector>

namespace kiln {

TokenProfile profile_token(Sequence& seq, int pos, KernelTimer time_kernels) {
  constexpr int kRuns = 5;  // the median is kept: the machine may be busy with something else
  std::vector<float> logits(static_cast<size_t>(seq.model().n_vocab()));
  const int32_t token = 1;  // any token costs the same
  std::vector<KernelTimes> runs;
  for (int r = 0; r < kRuns; ++r) runs.push_back(time_kernels(seq, &token, 1, pos, Logits::Last, logits.data()));
  std::sort(runs.begin(), runs.end(), [](const KernelTimes& a, const KernelTimes& b) { return a.total() < b.total(); });
  return {runs[kRuns / 2], pos, kRuns};
}

}  // namespace kiln
