// The KV cache's element type, a build-time choice per model: F16 (half the
// memory and half the bytes attention reads per position, llama.cpp's default
// too) or F32. Keys and values are always computed in float; they are rounded
// to the cache type only when stored, after RoPE, as llama.cpp does.
//
// Its layout, a build-time consequence of the head size: a row of Dim
// elements per position, or, for heads narrower than a float vector
// (kv_blocked), blocks of kFloatLanes positions stored column by column, so
// that one vector holds one element of kFloatLanes consecutive positions and
// attention takes that many positions per instruction (kernels/attention.hpp).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/arch/simd.hpp"
#include "kernels/fp16.hpp"
#include "kernels/sync.hpp"
#include "kernels/team.hpp"
#include "kernels/tensor_type.hpp"

namespace kiln::kernels {

// How one element of a cache of type T is stored (F16 as raw bits, as in GGUF).
template <TensorType T>
using CacheValue = std::conditional_t<T == TensorType::F16, uint16_t, float>;

template <TensorType T>
constexpr bool is_cache_type = T == TensorType::F16 || T == TensorType::F32;

// Whether a cache of heads of HeadDim elements is stored in position blocks.
template <int HeadDim>
inline constexpr bool kv_blocked = HeadDim < kFloatLanes;

// Positions per block of a blocked cache.
inline constexpr int kKvBlock = kFloatLanes;

// Where element c of a cache's row `row` is, in a cache of rows Dim wide: at
// row * Dim + c, or in a blocked one at column c of the row's block, whose
// start, row * Dim for a row that starts a block, is the same in both layouts.
template <bool Blocked, int Dim>
constexpr int64_t kv_index(int64_t row, int c) {
  if constexpr (Blocked) return (row - row % kKvBlock) * Dim + int64_t{c} * kKvBlock + row % kKvBlock;
  else return row * Dim + c;
}

// The rows a cache of `rows` rows allocates: whole blocks where it is blocked.
template <bool Blocked>
constexpr int64_t kv_rows_allocated(int64_t rows) {
  return Blocked ? (rows + kKvBlock - 1) / kKvBlock * kKvBlock : rows;
}

// Copies row `row` of a cache out to Dim consecutive values, or in from them:
// the row's bytes as a row cache holds them, whatever the layout (state files, tests).
template <bool Blocked, int Dim, class Value>
void read_kv_row(const Value* cache, int64_t row, Value* out) {
  for (int c = 0; c < Dim; ++c) out[c] = cache[kv_index<Blocked, Dim>(row, c)];
}
template <bool Blocked, int Dim, class Value>
void write_kv_row(const Value* in, Value* cache, int64_t row) {
  for (int c = 0; c < Dim; ++c) cache[kv_index<Blocked, Dim>(row, c)] = in[c];
}

namespace detail {

// Dim floats into one cache row.
template <TensorType T, int Dim>
void store_row(const float* in, CacheValue<T>* out) {
  int i = 0;
  if constexpr (T == TensorType::F16) {
    for (; i + kFloatLanes <= Dim; i += kFloatLanes) narrow_f16(in + i, out + i);  // rounds as fp32_to_fp16
    for (; i < Dim; ++i) out[i] = fp32_to_fp16(in[i]);
  } else {
    for (; i < Dim; ++i) out[i] = in[i];
  }
}

}  // namespace detail

// Stores the keys and values of n_tokens consecutive positions (k and v:
// [n_tokens][Dim] floats) into cache rows row0 .. row0 + n_tokens - 1 of
// k_cache and v_cache (laid out as Blocked says), rounding to F16 where the
// cache holds F16. Work-shared over tokens; each element is converted on its
// own, so the cache does not depend on the batch or the threads.
template <TensorType T, int Dim, bool Blocked = false, Sync Y = Sync::Barrier>
void store_kv(const float* k, const float* v, CacheValue<T>* k_cache, CacheValue<T>* v_cache, int row0, int n_tokens) {
  static_assert(is_cache_type<T>);
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    const int64_t at = static_cast<int64_t>(t) * Dim;
    if constexpr (Blocked) {
      CacheValue<T> k_row[Dim], v_row[Dim];
      detail::store_row<T, Dim>(k + at, k_row);
      detail::store_row<T, Dim>(v + at, v_row);
      write_kv_row<true, Dim>(k_row, k_cache, row0 + t);
      write_kv_row<true, Dim>(v_row, v_cache, row0 + t);
    } else {
      const int64_t row = (int64_t{row0} + t) * Dim;
      detail::store_row<T, Dim>(k + at, k_cache + row);
      detail::store_row<T, Dim>(v + at, v_cache + row);
    }
  }
  if constexpr (Y == Sync::Barrier) team_barrier();
}

}  // namespace kiln::kernels
