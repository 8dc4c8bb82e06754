// The decoder forward pass that every architecture shares, written once as
// templates over a compile-time configuration `C` (codegen's Config: the
// hyperparameters, the sizes chosen at build time, and `C::Arch`, the
// architecture's type) and a list of layers, each a compile-time type that
// says what the layer is (LayerKind: sliding-window or global attention,
// RoPE or not) and the weight type of each of its matrices. Codegen emits
// only that data; the pass is Forward<C, Layers>: embed, then each layer in
// turn through its architecture's `layer` (models/<arch>/<arch>.hpp), then
// the output.
//
// An architecture's layer reads like a reference forward pass: it calls the
// building blocks below (blocks.hpp) on a Pass, which carries the batch, its
// activations and how each kernel call is run (a Step: models/decoder/
// kernel_step.hpp; Untimed for inference, Timed to measure each call).
//
// All functions here run inside the single parallel region the forward pass
// opens (or, on one thread, outside any); every kernel shares out its own
// work and ends with a barrier unless marked Sync::NoWait.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>

#include "engine/error/error.hpp"
#include "engine/model/model.hpp"
#include "engine/model/model_desc.hpp"
#include "kernels/attention.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/matmul.hpp"
#include "kernels/q8_activations.hpp"
#include "models/decoder/block_tensors.hpp"
#include "models/decoder/kernel_step.hpp"
#include "models/decoder/moe_activations.hpp"

namespace kiln::decoder {

// Upper bound on OpenMP threads a pass runs on.
inline constexpr int kMaxThreads = 64;

// Rows of attention scores for the threads a pass runs on (kernels::attention's
// scratch): sized when the thread count is set rather than for kMaxThreads,
// so a long context's reservation grows with the threads actually used.
template <class C>
class AttentionScratch {
 public:
  static constexpr int rows = kernels::kAttentionScratchRows<C::n_head, C::n_head_kv, C::head_dim>;

  void fit(int threads) {
    if (threads == threads_) return;
    data_.reset(static_cast<float*>(::operator new[](sizeof(float) * rows * C::n_ctx * threads, kAlignment)));
    threads_ = threads;
  }
  int threads() const { return threads_; }
  float* data() { return data_.get(); }

 private:
  static constexpr std::align_val_t kAlignment{64};
  struct Free {
    void operator()(float* p) const { ::operator delete[](p, kAlignment); }
  };
  std::unique_ptr<float[], Free> data_;
  int threads_ = 0;
};

// One layer of the generated list: its index, the weight type of each of its
// matrices (Types::attn_q, ...) and its kind.
template <int Index, class Types_, LayerKind Kind>
struct Layer {
  static constexpr int index = Index;
  using Types = Types_;
  static constexpr LayerKind kind = Kind;
};

template <class... Layers>
struct LayerList {};

template <class C>
struct Weights {
  const void* token_embd;
  const float* output_norm;
  const void* output;  // token_embd when the output matrix is tied
  LayerWeights layers[C::n_layer];
};

// Rows of a sliding-window layer's cache: a ring (kernels/attention.hpp)
// that holds the window of every query of a batch, the window plus
// max_batch - 1 positions, in whole blocks of 64 (so that no block of keys
// the attention reads at once wraps). 0 where such a ring would not be
// smaller than the context, or the build keeps every position (SWA_FULL).
template <class C>
inline constexpr int kv_ring_rows = [] {
  const int rows = (C::n_swa + C::max_batch - 1 + 63) / 64 * 64;
  return C::n_swa > 0 && !C::swa_full && rows < C::n_ctx ? rows : 0;
}();

// The ring a layer of this kind keeps (0: none, a row per position).
template <class C>
constexpr int kv_ring(LayerKind kind) {
  return kind.sliding ? kv_ring_rows<C> : 0;
}

// One sequence's keys and values in the build's cache type, layer by layer:
// a row per position of the context, or a sliding-window layer's ring
// (kv_ring). The rows are allocated once per sequence (CompiledSequence);
// this holds where each layer's start, and which positions the rings still
// hold.
template <class C>
struct KvCache {
  static constexpr int kv_dim = C::n_head_kv * C::head_dim;
  using Value = kernels::CacheValue<C::kv_type>;  // the cache's element type, chosen at build time

  Value* k[C::n_layer];
  Value* v[C::n_layer];
  // Positions [held_from, held_to) are in every sliding-window layer's
  // cache; every other layer holds [0, held_to). Kept by the forward pass
  // (wrote) and by write_kv (CompiledSequence).
  int held_from = 0, held_to = 0;

  // Throws kiln::Error unless a pass may write positions from `pos` on: each
  // of its sliding-window queries needs the window before it.
  void check_continues_at(int pos) const {
    if (kv_continues_at(C::n_swa, held_from, pos)) return;
    throw Error("forward: position " + std::to_string(pos) + " needs the sliding window's positions from " +
                std::to_string(pos - C::n_swa + 1) + ", but the cache holds them only from " +
                std::to_string(held_from));
  }
  // Positions [pos, pos + n) were written: later ones are gone, and a ring
  // keeps its last rows.
  void wrote(int pos, int n) {
    held_to = pos + n;
    held_from = pos == 0 ? 0 : held_from;
    if constexpr (kv_ring_rows<C> > 0) held_from = std::max(held_from, held_to - kv_ring_rows<C>);
  }
};

// One sequence's part of a batch: the batch's tokens [first, first + n)
// (ids at `tokens`) sit at positions [pos, pos + n) of `cache`, and `which`
// of their logits are wanted. A batch is a list of runs in token order, each
// of another sequence; a single sequence's forward call is a batch of one run.
template <class C>
struct Run {
  const int32_t* tokens;
  KvCache<C>* cache;
  int first, n, pos;
  Logits which;
};

template <class C>
int batch_tokens(std::span<const Run<C>> runs) {
  return runs.back().first + runs.back().n;
}

// The activations of one batch, at sizes fixed by the configuration: what a
// forward pass writes besides the runs' caches. Every token's row is
// computed from that token's row alone (or its own sequence's cache), so a
// token's results do not depend on what else is in the batch.
template <class C>
struct Activations {
  static constexpr int q_dim = C::n_head * C::head_dim;
  static constexpr int kv_dim = KvCache<C>::kv_dim;
  // The widest matmul input, in whole Q8 blocks.
  static constexpr int q8_cols = (std::max({C::n_embd, q_dim, C::n_ff, C::n_ff_shexp}) + 31) / 32 * 32;

  alignas(64) float x[C::max_batch][C::n_embd];   // residual stream
  alignas(64) float xn[C::max_batch][C::n_embd];  // normalized block input, or a block's output before its norm
  alignas(64) float q[C::max_batch][q_dim];
  alignas(64) float att[C::max_batch][q_dim];     // attention output before the projection
  alignas(64) float gate[C::max_batch][C::n_ff];
  alignas(64) float up[C::max_batch][C::n_ff];
  // The current matmul input rounded to Q8 blocks, for the integer matmul's weights
  // ([n][cols] packed for whichever input width is current).
  alignas(64) int8_t q8[C::max_batch * q8_cols];
  alignas(64) float q8_scale[C::max_batch * q8_cols / 32];
  alignas(64) int32_t q8_sum[C::max_batch * q8_cols / kernels::kQ8HalfElems];
  alignas(64) float q8_scaled_sum[C::max_batch * q8_cols / 32 * kernels::kQ8ScaledSums];
  // This batch's keys and values in float, until RoPE is applied and they are stored in the caches.
  alignas(64) float k_new[C::max_batch][kv_dim];
  alignas(64) float v_new[C::max_batch][kv_dim];
  AttentionScratch<C> scores;
  // RoPE's angle per position of each rotated pair: the global layers', the sliding-window layers'.
  float rope_inv_freq[C::n_rot / 2];
  float rope_inv_freq_swa[C::n_rot / 2];
  // A mixture of experts' own (nothing in a dense model).
  [[no_unique_address]] MoeActivations<C> moe;

  // Where tokens from first_token on of an input cols wide are rounded to.
  kernels::Q8Out q8_out(int first_token, int cols) {
    const kernels::Q8Out all{q8, q8_scale, q8_sum, q8_scaled_sum};
    return all.at_block(first_token * cols / 32);
  }
  // The input at f (tokens from first_token on, cols wide), in both forms.
  kernels::MatmulInput input(const float* f, int first_token, int cols) {
    const kernels::Q8Out rounded = q8_out(first_token, cols);
    return {f, {rounded.qs, rounded.d, rounded.sum, rounded.scaled_sum}};
  }
};

// One forward pass over a batch, as a layer sees it: the configuration, the
// layer (L), the activations, the runs and how kernel calls are made.
template <class C_, class L_, class Step>
struct Pass {
  using C = C_;
  using L = L_;
  Activations<C>& s;
  std::span<const Run<C>> runs;
  int n;  // tokens in the batch
  Step step;
};

// Calls per_run(run) for every run, then waits for all threads: per_run makes
// Sync::NoWait calls, which in different runs touch different rows and
// caches, so they need no barrier between them.
template <class C, class PerRun>
void each_run(std::span<const Run<C>> runs, PerRun per_run) {
  for (const Run<C>& r : runs) per_run(r);
  kernels::team_barrier();
}

template <class C, class Step>
void embed(Activations<C>& s, const Weights<C>& w, std::span<const Run<C>> runs, Step step) {
  for (const Run<C>& r : runs)
    step.run(KernelKind::Other, kernels::get_rows<C::token_embd_type, C::n_embd>, w.token_embd, r.tokens, r.n,
             &s.x[r.first][0]);
}

// The rows of a run whose logits are wanted: [begin, end) of the batch.
template <class C>
std::pair<int, int> wanted_rows(const Run<C>& r) {
  const int end = r.first + r.n;
  switch (r.which) {
    case Logits::All: return {r.first, end};
    case Logits::Last: return {end - 1, end};
    case Logits::None: break;
  }
  return {end, end};
}

// Moves the residual rows whose logits are wanted to rows [0, count), in
// batch order, and returns count. Every thread counts; the first one moves
// the rows (a row never moves down, so in this order none is overwritten
// before it is read; rows already in place stay), then the team meets.
template <class C>
int gather_wanted_rows(Activations<C>& s, std::span<const Run<C>> runs) {
  const bool mover = omp_get_thread_num() == 0;
  int count = 0;
  for (const Run<C>& r : runs)
    for (auto [row, end] = wanted_rows(r); row < end; ++row, ++count)
      if (mover && row != count) std::memcpy(s.x[count], s.x[row], sizeof s.x[0]);
  kernels::team_barrier();
  return count;
}

}  // namespace kiln::decoder
