// Causal multi-head attention over the KV cache, with grouped-query heads.
// The cache holds F32 or F16 (kv_cache.hpp); F16 elements are widened in
// registers as they are read, and all arithmetic is in float.
//
// The queries that read the same keys and values (the heads of one kv head,
// and a few consecutive tokens) are computed together, so that each cache
// row is loaded (and widened) once for all of them, and the weighted sum of
// values has several independent FMA chains in flight. Each query's
// arithmetic stays its own: its result does not depend on which queries it
// was computed with, so not on the batch or the thread count. Keys are
// stored in blocks of positions (kv_cache.hpp), so a score is computed in its
// position's lane with no adding across lanes (scores). Heads narrower than
// a vector have their values blocked too (kv_values_blocked) and take a
// token's heads of a kv head two at a time, their positions in the lanes
// (blocked_queries).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "kernels/activation.hpp"
#include "kernels/dot.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/sync.hpp"
#include "kernels/team.hpp"

namespace kiln::kernels {

// Consecutive tokens whose queries are computed together: enough that a work
// item holds about 8 queries where a kv head serves fewer query heads, and
// about 32 for heads as wide as a vector, whose items widen each block of an
// F16 cache once for all their queries (scores, weighted_sums).
template <int NHead, int NHeadKV, int HeadDim>
inline constexpr int kAttentionTokensPerItem =
    std::max(1, (kv_values_blocked<HeadDim> ? 8 : 32) / (NHead / NHeadKV));

// Rows of attention scratch (scores) each thread needs: one per query of a work item.
template <int NHead, int NHeadKV, int HeadDim>
inline constexpr int kAttentionScratchRows = NHead / NHeadKV * kAttentionTokensPerItem<NHead, NHeadKV, HeadDim>;

namespace detail {

template <TensorType T>
const uint8_t* bytes_of(const CacheValue<T>* p) {
  return reinterpret_cast<const uint8_t*>(p);
}

// The cache row that holds position j: j itself, or in a ring of Ring rows
// (a sliding-window layer's cache, kv_cache.hpp) j % Ring.
template <int Ring>
constexpr int64_t cache_row(int j) {
  if constexpr (Ring == 0) return j;
  else return j % Ring;
}

// The queries of one work item: query r (N floats at q[r]) of kv head kv[r]
// attends to positions [first[r], n[r]) (first: 0, or where its window
// starts), its scores and then softmax weights go to w[r] (at the same
// positions), its result to out[r]. The queries of one kv head are
// consecutive.
template <int Capacity>
struct Queries {
  static constexpr int kCapacity = Capacity;
  const float* q[Capacity];
  float* w[Capacity];
  float* out[Capacity];
  int first[Capacity];
  int n[Capacity];
  int kv[Capacity];
  int count = 0;

  // The end of the queries from r on that share query r's kv head.
  int kv_end(int r) const {
    int e = r;
    while (e < count && kv[e] == kv[r]) ++e;
    return e;
  }
};

// The first block a query reads: the one holding its first position.
inline int first_block(int first) { return first / kKvBlock * kKvBlock; }

// count elements of a cache widened to float (exactly: F16 widens without rounding).
template <TensorType T>
void widen(const CacheValue<T>* in, int count, float* out) {
  int i = 0;
  for (; i + kFloatLanes <= count; i += kFloatLanes) WeightRow<T>::load(bytes_of<T>(in), i).store_unaligned(out + i);
  for (; i < count; ++i) out[i] = WeightRow<T>::at(bytes_of<T>(in), i);
}

// Scores of the queries r .. r + Q - 1, which all read the block of keys at
// `block` (positions j0 .. j0 + kFloatLanes - 1): w[r + i][j] = q[r + i] .
// k_j * scale for the block's positions below the query's n. A block's
// column d holds element d of its positions' keys, so a score is a sum of
// FMAs over the head's N elements in its position's lane: two chains from
// zero, the even and the odd elements, added at the end.
// Each column is loaded (and widened) once for the Q queries.
template <TensorType T, int N, int Q, class Queries>
void block_scores(const Queries& qs, int r, const CacheValue<T>* block, int j0, float scale) {
  constexpr int L = kFloatLanes;
  const auto column = [&](int d) { return WeightRow<T>::load(bytes_of<T>(block + d * L), 0); };
  // The chains start at zero rather than at a product: a product that an FMA
  // then adds to is one the compiler may fuse with it, and whether it does
  // differs between instantiations (Q), which would change the bits.
  FloatVec even[Q], odd[Q];
  for (int i = 0; i < Q; ++i) even[i] = odd[i] = FloatVec(0.0f);
  for (int d = 0; d + 1 < N; d += 2) {
    const FloatVec ke = column(d), ko = column(d + 1);
    for (int i = 0; i < Q; ++i) {
      even[i] = xsimd::fma(FloatVec(qs.q[r + i][d]), ke, even[i]);
      odd[i] = xsimd::fma(FloatVec(qs.q[r + i][d + 1]), ko, odd[i]);
    }
  }
  if constexpr (N % 2 == 1) {
    const FloatVec kl = column(N - 1);
    for (int i = 0; i < Q; ++i) even[i] = xsimd::fma(FloatVec(qs.q[r + i][N - 1]), kl, even[i]);
  }
  for (int i = 0; i < Q; ++i) {
    const FloatVec s = (even[i] + odd[i]) * FloatVec(scale);
    float* w = qs.w[r + i];
    const int n = qs.n[r + i];
    if (j0 + L <= n) {
      s.store_unaligned(w + j0);
    } else {  // w has room only up to n
      alignas(FloatVec::arch_type::alignment()) float lanes[L];
      s.store_aligned(lanes);
      std::copy(lanes, lanes + (n - j0), w + j0);
    }
  }
}

// Queries scored together by scores(): enough chains (two a query) to keep
// the FMAs busy, within the registers.
inline constexpr int kScoredQueries = kFloatRegisters >= 32 ? 8 : 4;

// Every query's scores, w[r][j] = q[r] . k_j * scale for j in [first[r],
// n[r]) (and a few before first[r], in its first block, which nothing reads),
// from keys in blocks of kFloatLanes positions (kv_cache.hpp), Dim elements
// a position, kv head g's columns at k + g * N * kKvBlock in a block: a
// block at a time, all kv heads of the item in turn (so the block is read in
// order), for runs of up to kScoredQueries consecutive queries of a kv head
// that read it (block_scores). An F16 head's block that more than one run
// reads is widened once, into float (exactly), and the runs read that. A
// score depends only on its query and key. In a ring (Ring rows, a multiple
// of kFloatLanes) a block of positions never wraps.
template <TensorType T, int N, int Dim, int Ring, class Queries>
void scores(const Queries& qs, const CacheValue<T>* k, float scale) {
  static_assert(Ring % kKvBlock == 0 && kKvBlock == kFloatLanes);
  int lowest = qs.count > 0 ? first_block(qs.first[0]) : 0, end = 0;
  for (int r = 0; r < qs.count; ++r) {
    lowest = std::min(lowest, first_block(qs.first[r]));
    end = std::max(end, qs.n[r]);
  }
  constexpr int kMost = std::min(kScoredQueries, Queries::kCapacity), kHalf = std::max(kMost / 2, 1);
  alignas(FloatVec::arch_type::alignment()) float wide[N * kKvBlock];
  for (int j0 = lowest; j0 < end; j0 += kKvBlock) {
    const auto reads = [&](int r) { return j0 >= first_block(qs.first[r]) && j0 < qs.n[r]; };
    for (int head = 0, head_end = 0; head < qs.count; head = head_end) {
      head_end = qs.kv_end(head);
      const auto runs = [&]<TensorType B>(const CacheValue<B>* block) {
        for (int r = head; r < head_end;) {
          int run = 0;
          while (run < kMost && r + run < head_end && reads(r + run)) ++run;
          if (run == kMost) {
            block_scores<B, N, kMost>(qs, r, block, j0, scale);
          } else if (run >= kHalf) {
            block_scores<B, N, kHalf>(qs, r, block, j0, scale);
            run = kHalf;
          } else if (run > 0) {
            block_scores<B, N, 1>(qs, r, block, j0, scale);
            run = 1;
          } else {
            run = 1;  // this query does not read the block
          }
          r += run;
        }
      };
      const CacheValue<T>* block = k + cache_row<Ring>(j0) * Dim + int64_t{qs.kv[head]} * N * kKvBlock;
      if constexpr (T != TensorType::F32) {
        int readers = 0;
        for (int r = head; r < head_end; ++r) readers += reads(r);
        if (readers > kMost) {
          widen<T>(block, N * kKvBlock, wide);
          runs.template operator()<TensorType::F32>(wide);
          continue;
        }
      }
      runs.template operator()<T>(block);
    }
  }
}

// sum_j w_j * v_j over positions added in order (N elements each). Each
// output vector is accumulated in kChains FMA chains, position j feeding
// chain j % kChains, added in order at the end: a small head (HeadDim 8:
// one vector) then does not wait on one FMA's latency per position. The
// grouping depends only on j.
template <int N>
struct ValueSum {
  static constexpr int kVecs = N / kFloatLanes;
  static constexpr int kTail = N - kVecs * kFloatLanes;  // elements after the whole vectors
  static constexpr int kChains = kVecs >= 4 ? 1 : 4 / std::max(kVecs, 1);
  static constexpr auto kChainIndices = std::make_integer_sequence<int, kChains>{};

  FloatVec acc[kChains][kVecs + 1];  // (+1: never zero-sized)
  float tail[kTail + 1] = {};

  ValueSum() {
    for (auto& chain : acc)
      for (auto& a : chain) a = FloatVec(0.0f);
  }
  // Adds w * v (one row of type T) to chain C.
  template <int C, TensorType T>
  void add(float w, const CacheValue<T>* v) {
    const FloatVec wv(w);
    for (int i = 0; i < kVecs; ++i)
      acc[C][i] = xsimd::fma(wv, WeightRow<T>::load(bytes_of<T>(v), i * kFloatLanes), acc[C][i]);
    for (int i = 0; i < kTail; ++i) tail[i] = std::fma(w, WeightRow<T>::at(bytes_of<T>(v), kVecs * kFloatLanes + i), tail[i]);
  }
  // Adds position j's w * v to its chain.
  template <TensorType T>
  void add_at(int j, float w, const CacheValue<T>* v) {
    [&]<int... C>(std::integer_sequence<int, C...>) {
      ((j % kChains == C ? add<C, T>(w, v) : void()), ...);
    }(kChainIndices);
  }
  // Takes another's sums, vector by vector: a copy of the whole object
  // (std::copy, rep movs) kept it in memory, where these loads go straight
  // to the registers the loop keeps it in.
  void take(const ValueSum& other) {
    for (int c = 0; c < kChains; ++c)
      for (int i = 0; i < kVecs; ++i) acc[c][i] = other.acc[c][i];
    std::copy(other.tail, other.tail + kTail, tail);
  }
  void store(float* out) const {
    for (int i = 0; i < kVecs; ++i) {
      FloatVec sum = acc[0][i];
      for (int c = 1; c < kChains; ++c) sum += acc[c][i];
      sum.store_unaligned(out + i * kFloatLanes);
    }
    for (int i = 0; i < kTail; ++i) out[kVecs * kFloatLanes + i] = tail[i];
  }
};

// Queries that ValueSum keeps in registers at once: about 16 vector accumulators.
template <int N>
inline constexpr int kValueTile = std::max(1, 16 / (ValueSum<N>::kChains * std::max(ValueSum<N>::kVecs, 1)));

// The weighted sums of the R queries from `first` (a tile): each value row
// is read once for the R of them. Positions are added in order, in whole
// groups of kChains (position j feeds chain j % kChains), by add() over
// consecutive ranges, from where the earliest of the queries starts (a
// multiple of kChains) up to where the first of them ends; finish() adds
// each query's last positions and stores the results. A query that starts
// later gets weights of exactly 0 up to its first position, which leave its
// chains' bits as they are (an accumulator that starts at +0 never becomes
// -0), so its result is that of its positions alone.
template <int N, int R, class Queries>
struct ValueTile {
  using Sum = ValueSum<N>;
  Sum sums[R];
  int first = 0;
  int common = 0;  // the end of the positions every query of the tile reads
  int next = 0;    // where add() goes on

  ValueTile(const Queries& qs, int first_query) : first(first_query) {
    common = qs.n[first];
    int start = qs.first[first];
    for (int r = 1; r < R; ++r) {
      common = std::min(common, qs.n[first + r]);
      start = std::min(start, qs.first[first + r]);
    }
    next = start / Sum::kChains * Sum::kChains;
    for (int r = 0; r < R; ++r) std::fill(qs.w[first + r] + next, qs.w[first + r] + qs.first[first + r], 0.0f);
  }

  // Adds the whole groups of positions from `next` below min(to, common),
  // position j's row (of type B) at row(j).
  template <TensorType B, class RowAt>
  void add(const Queries& qs, int to, RowAt row) {
    to = std::min(to, common);
    // The sums go through the loop as locals, copied in and out: faster in
    // generation than updating the members in place (docs/benchmarks.md).
    Sum local[R];
    for (int r = 0; r < R; ++r) local[r].take(sums[r]);
    int j = next;
    for (; j + Sum::kChains <= to; j += Sum::kChains) {
      [&]<int... C>(std::integer_sequence<int, C...>) {
        ((
             [&] {
               const CacheValue<B>* v = row(j + C);
               for (int r = 0; r < R; ++r) local[r].template add<C, B>(qs.w[first + r][j + C], v);
             }()),
         ...);
      }(Sum::kChainIndices);
    }
    for (int r = 0; r < R; ++r) sums[r].take(local[r]);
    next = j;
  }

  template <TensorType T, int Ring>
  void finish(const Queries& qs, const CacheValue<T>* v, int64_t stride) {
    for (int r = 0; r < R; ++r) {
      for (int j = next; j < qs.n[first + r]; ++j)
        sums[r].template add_at<T>(j, qs.w[first + r][j], v + cache_row<Ring>(j) * stride);
      sums[r].store(qs.out[first + r]);
    }
  }
};

// Positions of values taken at a time by weighted_sums: about 16 KiB of
// floats where they are widened.
template <int N>
inline constexpr int kValueChunk = std::max(1, 4096 / N / ValueSum<N>::kChains) * ValueSum<N>::kChains;

// out[r] = sum_{first[r] <= j < n[r]} w[r][j] * v_j for every query, v_j =
// v + cache_row<Ring>(j) * stride + kv[r] * N, in tiles of up to
// kValueTile queries of one kv head (ValueTile), a chunk of positions at a
// time for all of them, so that the rows are read in order. Where a kv head
// has more than two tiles, its F16 rows are widened once (exactly) per chunk
// and its tiles read those (for two, storing the widened rows costs about
// what converting them again does).
template <TensorType T, int N, int Ring, class Queries>
void weighted_sums(const Queries& qs, const CacheValue<T>* v, int64_t stride) {
  constexpr int kTile = kValueTile<N>, kCapacity = Queries::kCapacity;
  using Full = ValueTile<N, kTile, Queries>;
  using Single = ValueTile<N, 1, Queries>;
  struct Head {  // the tiles of one kv head's queries
    int kv, full_begin, full_end, single_begin, single_end;
    int from = INT32_MAX, to = 0;  // the positions its tiles add in chunks
    bool widen = false;
  };
  std::optional<Full> full[std::max(1, kCapacity / kTile)];
  std::optional<Single> single[kCapacity];
  Head heads[kCapacity];
  int n_heads = 0, n_full = 0, n_single = 0;
  for (int r = 0; r < qs.count; r = qs.kv_end(r)) {
    Head& h = heads[n_heads++];
    const auto begin = [&](auto& tile, int first) {
      tile.emplace(qs, first);
      h.from = std::min(h.from, tile->next);
      h.to = std::max(h.to, tile->common);
    };
    const int end = qs.kv_end(r);
    h.kv = qs.kv[r];
    h.full_begin = n_full;
    int first = r;
    for (; first + kTile <= end; first += kTile) begin(full[n_full++], first);
    h.full_end = n_full;
    h.single_begin = n_single;
    for (; first < end; ++first) begin(single[n_single++], first);
    h.single_end = n_single;
    h.widen = T != TensorType::F32 && (h.full_end - h.full_begin) + (h.single_end - h.single_begin) > 2;
  }
  int from = INT32_MAX, to = 0;
  for (int i = 0; i < n_heads; ++i) {
    from = std::min(from, heads[i].from);
    to = std::max(to, heads[i].to);
  }
  constexpr int kChunk = kValueChunk<N>;
  alignas(FloatVec::arch_type::alignment()) float wide[kChunk * N];
  for (int c0 = from; c0 < to; c0 += kChunk) {
    const int c1 = std::min(c0 + kChunk, to);
    for (int i = 0; i < n_heads; ++i) {
      const Head& h = heads[i];
      const CacheValue<T>* head_v = v + int64_t{h.kv} * N;
      const auto add_all = [&]<TensorType B>(auto rows) {
        for (int t = h.full_begin; t < h.full_end; ++t) full[t]->template add<B>(qs, c1, rows);
        for (int t = h.single_begin; t < h.single_end; ++t) single[t]->template add<B>(qs, c1, rows);
      };
      if (h.widen) {
        for (int j = std::max(c0, h.from); j < std::min(c1, h.to); ++j)
          widen<T>(head_v + cache_row<Ring>(j) * stride, N, wide + (j - c0) * N);
        add_all.template operator()<TensorType::F32>([&](int j) { return wide + (j - c0) * N; });
      } else {
        add_all.template operator()<T>([&](int j) { return head_v + cache_row<Ring>(j) * stride; });
      }
    }
  }
  for (int i = 0; i < n_heads; ++i) {
    const Head& h = heads[i];
    const CacheValue<T>* head_v = v + int64_t{h.kv} * N;
    for (int t = h.full_begin; t < h.full_end; ++t) full[t]->template finish<T, Ring>(qs, head_v, stride);
    for (int t = h.single_begin; t < h.single_end; ++t) single[t]->template finish<T, Ring>(qs, head_v, stride);
  }
}

// Heads narrower than a vector (N < kFloatLanes), from a blocked cache
// (kv_cache.hpp) whose head columns start at k and v: queries r .. r + Q - 1
// of `qs`, of one token and one kv head, attend to the positions [first, n)
// of query r (its q, w and out as Queries has them; query r + i's sink is
// sink[r + i]). Each block of keys and values is loaded (and
// widened) once for the Q of them, and their chains interleave. A block's
// vector of one dimension holds kFloatLanes consecutive positions, so a
// score is a chain of FMAs from zero over the query's dimensions in order,
// in its position's lane. The softmax is fused with the weighted
// sum: lane p of the exponentials' sum and of the weighted values collects
// the positions j with j % kFloatLanes == p, block after block; the lanes are
// added at the end (sum_each, a tree per query) and the sums divided by the
// exponentials' once. All of it depends only on the query's own positions,
// not on Q. Lanes outside [first, n), whose cache rows may hold anything,
// are left out (masked).
template <TensorType T, int N, int Dim, int Ring, int Q, class Queries>
void blocked_queries(const Queries& qs, int r, const float* sinks, const CacheValue<T>* k, const CacheValue<T>* v,
                     float scale) {
  static_assert(N < kFloatLanes && Ring % kKvBlock == 0 && kKvBlock == kFloatLanes);
  const float* const* q = qs.q + r;
  float* const* w = qs.w + r;
  float* const* out = qs.out + r;
  const float* sink = sinks + r;
  const int first = qs.first[r], n = qs.n[r];
  constexpr int L = kFloatLanes;
  constexpr auto kAlign = FloatVec::arch_type::alignment();
  const auto column = [](const CacheValue<T>* block, int d) {
    return WeightRow<T>::load(bytes_of<T>(block + d * L), 0);
  };
  alignas(kAlign) float lane_index[L];
  for (int p = 0; p < L; ++p) lane_index[p] = static_cast<float>(p);
  const FloatVec lane = FloatVec::load_aligned(lane_index);
  const auto whole = [&](int j0) { return j0 >= first && j0 + L <= n; };
  const auto valid = [&](int j0) {  // the lanes of the block at j0 that hold the queries' positions
    return (lane >= FloatVec(static_cast<float>(first - j0))) & (lane < FloatVec(static_cast<float>(n - j0)));
  };
  // A last, partial block's scores stay here: w has room only up to n.
  alignas(kAlign) float last[Q][L];
  const auto scores_at = [&](int i, int j0) { return j0 + L <= n ? w[i] + j0 : last[i]; };
  const int start = first / L * L;

  FloatVec vmax[Q];
  for (auto& m : vmax) m = FloatVec(-INFINITY);
  for (int j0 = start; j0 < n; j0 += L) {
    const CacheValue<T>* block = k + cache_row<Ring>(j0) * Dim;
    FloatVec s[Q];  // from zero, as block_scores' chains
    for (auto& chain : s) chain = FloatVec(0.0f);
    for (int d = 0; d < N; ++d) {
      const FloatVec kd = column(block, d);
      for (int i = 0; i < Q; ++i) s[i] = xsimd::fma(FloatVec(q[i][d]), kd, s[i]);
    }
    for (int i = 0; i < Q; ++i) {
      s[i] *= FloatVec(scale);
      s[i].store_unaligned(scores_at(i, j0));
      vmax[i] = xsimd::max(vmax[i], whole(j0) ? s[i] : xsimd::select(valid(j0), s[i], FloatVec(-INFINITY)));
    }
  }
  FloatVec max[Q];
  float max_value[Q];
  for (int i = 0; i < Q; ++i) {
    alignas(kAlign) float lanes[L];
    vmax[i].store_aligned(lanes);
    max_value[i] = std::max(*std::max_element(lanes, lanes + L), sink[i]);
    max[i] = FloatVec(max_value[i]);
  }

  FloatVec sums[Q][L];  // per query: the weighted values' N, then the exponentials', then nothing
  for (auto& query_sums : sums)
    for (auto& a : query_sums) a = FloatVec(0.0f);
  for (int j0 = start; j0 < n; j0 += L) {
    const CacheValue<T>* block = v + cache_row<Ring>(j0) * Dim;
    FloatVec e[Q];
    for (int i = 0; i < Q; ++i) e[i] = xsimd::exp(FloatVec::load_unaligned(scores_at(i, j0)) - max[i]);
    if (whole(j0)) {
      for (int i = 0; i < Q; ++i) sums[i][N] += e[i];
      for (int d = 0; d < N; ++d) {
        const FloatVec vd = column(block, d);
        for (int i = 0; i < Q; ++i) sums[i][d] = xsimd::fma(e[i], vd, sums[i][d]);
      }
    } else {
      const auto in = valid(j0);
      for (int i = 0; i < Q; ++i) {
        e[i] = xsimd::select(in, e[i], FloatVec(0.0f));
        sums[i][N] += e[i];
      }
      for (int d = 0; d < N; ++d) {
        const FloatVec vd = xsimd::select(in, column(block, d), FloatVec(0.0f));
        for (int i = 0; i < Q; ++i) sums[i][d] = xsimd::fma(e[i], vd, sums[i][d]);
      }
    }
  }
  for (int i = 0; i < Q; ++i) {
    alignas(kAlign) float lanes[L];
    sum_each(sums[i]).store_aligned(lanes);
    // A sink joins the sum (softmax's rule); none, -inf, adds exactly nothing.
    const float inv_sum =
        1.0f / (lanes[N] + (sink[i] == -INFINITY ? 0.0f : std::exp(sink[i] - max_value[i])));
    for (int d = 0; d < N; ++d) out[i][d] = lanes[d] * inv_sum;
  }
}

// Queries of a blocked cache taken together by blocked_queries: two heads of
// one token share every load of a block (their accumulators, 2 x 9 vectors
// for heads of 8, still fit in 32 registers).
inline constexpr int kBlockedQueries = 2;

}  // namespace detail

// q and out are [n_tokens][NHead * HeadDim]; k_cache and v_cache are
// [position][NHeadKV * HeadDim] of KvType, the keys in blocks of positions
// and the values too where kv_values_blocked<HeadDim> (kv_cache.hpp), and
// already hold positions 0 .. pos0 + n_tokens - 1 (or, with Ring > 0, are a
// ring of Ring rows, position j in row j % Ring, that holds at least every
// query's window). Token t
// (position p = pos0 + t), head h attends to positions 0 .. p of kv head
// h / (NHead / NHeadKV), or with a window w > 0 to the last w of them
// (p - w < j <= p):
//   out = sum_j softmax_j(q . k_j * scale) * v_j.
// A windowed query reads only its window's keys and values: a sliding layer
// costs its window, whatever the context. With `sinks` (one logit per head,
// gpt-oss), head h's softmax also counts sinks[h] as a position with no
// value: the weights sum to less than 1 by that sink's share.
// scores is scratch: kAttentionScratchRows rows of scores_stride >= pos0 +
// n_tokens floats per OpenMP thread. Work-shared over items of queries that
// share a kv head (a few tokens, some or all of its heads), or in generation
// a few kv heads; a query's result does not depend on the rest of the batch.
// Sync::NoWait ends it without a barrier.
template <int NHead, int NHeadKV, int HeadDim, TensorType KvType, Sync Y = Sync::Barrier, int Ring = 0>
void attention(const float* q, const CacheValue<KvType>* k_cache, const CacheValue<KvType>* v_cache, float* out,
               int n_tokens, int pos0, float* scores, int scores_stride, float scale, int window,
               const float* sinks = nullptr) {
  static_assert(NHead % NHeadKV == 0 && is_cache_type<KvType> && Ring >= 0);
  constexpr int kHeadsPerKV = NHead / NHeadKV;
  constexpr int64_t kQDim = static_cast<int64_t>(NHead) * HeadDim;
  constexpr int64_t kKVDim = static_cast<int64_t>(NHeadKV) * HeadDim;
  constexpr int kCapacity = kAttentionScratchRows<NHead, NHeadKV, HeadDim>;
  float* rows = scores + static_cast<int64_t>(omp_get_thread_num()) * kCapacity * scores_stride;

  // Fewer queries per item where there would be fewer items than threads
  // (one token's generation): the same on every thread, so the loop below
  // is too. Where an item's tokens leave room (generation again), it takes
  // the queries of several kv heads, whose blocks of keys and rows of values
  // lie side by side: read in order, rather than a kv head's part of each
  // at a time (heads as wide as a vector; narrower ones' caches are small).
  int tokens = kAttentionTokensPerItem<NHead, NHeadKV, HeadDim>, heads = kHeadsPerKV, kv_heads = 1;
  const auto items = [&] {
    return (n_tokens + tokens - 1) / tokens * (NHeadKV / kv_heads) * (kHeadsPerKV / heads);
  };
  while (items() < omp_get_num_threads() && tokens > 1) tokens = (tokens + 1) / 2;
  while (items() < omp_get_num_threads() && heads % 2 == 0) heads /= 2;
  if constexpr (!kv_values_blocked<HeadDim>) {
    while (NHeadKV % (2 * kv_heads) == 0 && std::min(tokens, n_tokens) * heads * 2 * kv_heads <= kCapacity) {
      kv_heads *= 2;
      if (items() < omp_get_num_threads()) {
        kv_heads /= 2;
        break;
      }
    }
  }
  const int parts = kHeadsPerKV / heads;  // items per kv head and token block
  const int n_items = items();

  // Round-robin, so that the threads share early (short) and late (long) tokens alike.
#pragma omp for schedule(static, 1) nowait
  for (int item = 0; item < n_items; ++item) {
    const int part = item % parts;
    const int g0 = item / parts % (NHeadKV / kv_heads) * kv_heads;  // the first kv head
    const int t0 = item / parts / (NHeadKV / kv_heads) * tokens;
    detail::Queries<kCapacity> qs;
    float sink[kCapacity];
    for (int g = g0; g < g0 + kv_heads; ++g) {
      for (int t = t0; t < std::min(t0 + tokens, n_tokens); ++t) {
        for (int h = g * kHeadsPerKV + part * heads; h < g * kHeadsPerKV + (part + 1) * heads; ++h) {
          sink[qs.count] = sinks ? sinks[h] : -INFINITY;
          qs.q[qs.count] = q + t * kQDim + h * HeadDim;
          qs.out[qs.count] = out + t * kQDim + h * HeadDim;
          qs.w[qs.count] = rows + static_cast<int64_t>(qs.count) * scores_stride;
          qs.n[qs.count] = pos0 + t + 1;
          qs.first[qs.count] = window > 0 ? std::max(0, pos0 + t + 1 - window) : 0;
          qs.kv[qs.count] = g;
          ++qs.count;
        }
      }
    }
    if constexpr (kv_values_blocked<HeadDim>) {
      const CacheValue<KvType>* k_head = k_cache + int64_t{g0} * HeadDim * kKvBlock;  // its first column in a block
      const CacheValue<KvType>* v_head = v_cache + int64_t{g0} * HeadDim * kKvBlock;
      // Queries r, r + 1, ... of one token (the same positions) go together.
      const auto together = [&]<int Q>(int r) {
        detail::blocked_queries<KvType, HeadDim, kKVDim, Ring, Q>(qs, r, sink, k_head, v_head, scale);
      };
      constexpr int Q = std::min(kHeadsPerKV, detail::kBlockedQueries);
      int r = 0;
      for (; r + Q <= qs.count; r += Q) {
        if (qs.n[r] == qs.n[r + Q - 1] && qs.first[r] == qs.first[r + Q - 1])
          together.template operator()<Q>(r);
        else
          for (int i = r; i < r + Q; ++i) together.template operator()<1>(i);
      }
      for (; r < qs.count; ++r) together.template operator()<1>(r);
    } else {
      detail::scores<KvType, HeadDim, kKVDim, Ring>(qs, k_cache, scale);
      for (int r = 0; r < qs.count; ++r) softmax(qs.w[r] + qs.first[r], qs.n[r] - qs.first[r], sink[r]);
      detail::weighted_sums<KvType, HeadDim, Ring>(qs, v_cache, kKVDim);
    }
  }
  if constexpr (Y == Sync::Barrier) team_barrier();
}

}  // namespace kiln::kernels
