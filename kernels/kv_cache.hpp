// The KV cache's element type, a build-time choice per model: F16 (half the
// memory and half the bytes attention reads per position, llama.cpp's default
// too) or F32. Keys and values are always computed in float; they are rounded
// to the cache type only when stored, after RoPE, as llama.cpp does.
//
// Its layout: keys in blocks of kFloatLanes positions stored column by
// column, so that one vector holds one element of kFloatLanes consecutive
// positions, and a score is a chain of FMAs in its position's lane, with no
// adding across lanes (kernels/attention.hpp). Values are a row of Dim
// elements per position, which a weighted sum reads a row at a time, or for
// heads narrower than a float vector (kv_values_blocked) blocked as the keys
// are, so that attention takes kFloatLanes positions per instruction.
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

// Whether the values of a cache of heads of HeadDim elements are stored in
// position blocks (the keys always are).
template <int HeadDim>
inline constexpr bool kv_values_blocked = HeadDim < kFloatLanes;

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
// k_cache (blocked) and v_cache (blocked if ValuesBlocked), rounding to F16
// where the cache holds F16. Work-shared over tokens; each element is
// converted on its own, so the cache does not depend on the batch or the threads.
template <TensorType T, int Dim, bool ValuesBlocked, Sync Y = Sync::Barrier>
void store_kv(const float* k, const float* v, CacheValue<T>* k_cache, CacheValue<T>* v_cache, int row0, int n_tokens) {
  static_assert(is_cache_type<T>);
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    const int64_t at = static_cast<int64_t>(t) * Dim;
    CacheValue<T> row[Dim];
    detail::store_row<T, Dim>(k + at, row);
    write_kv_row<true, Dim>(row, k_cache, row0 + t);
    if constexpr (ValuesBlocked) {
      detail::store_row<T, Dim>(v + at, row);
      write_kv_row<true, Dim>(row, v_cache, row0 + t);
    } else {
      detail::store_row<T, Dim>(v + at, v_cache + (int64_t{row0} + t) * Dim);
    }
  }
  if constexpr (Y == Sync::Barrier) team_barrier();
}

}  // namespace kiln::kernels
