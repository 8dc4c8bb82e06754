// The KV cache's element type, a build-time choice per model: F16 (half the
// memory and half the bytes attention reads per position, llama.cpp's default
// too) or F32. Keys and values are always computed in float; they are rounded
// to the cache type only when stored, after RoPE, as llama.cpp does.
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
// [n_tokens][Dim] floats) into the cache rows starting at k_cache and v_cache,
// rounding to F16 where the cache holds F16. Work-shared over tokens; each
// element is converted on its own, so the cache does not depend on the batch
// or the threads.
template <TensorType T, int Dim, Sync Y = Sync::Barrier>
void store_kv(const float* k, const float* v, CacheValue<T>* k_cache, CacheValue<T>* v_cache, int n_tokens) {
  static_assert(is_cache_type<T>);
#pragma omp for schedule(static) nowait
  for (int t = 0; t < n_tokens; ++t) {
    const int64_t at = static_cast<int64_t>(t) * Dim;
    detail::store_row<T, Dim>(k + at, k_cache + at);
    detail::store_row<T, Dim>(v + at, v_cache + at);
  }
  if constexpr (Y == Sync::Barrier) team_barrier();
}

}  // namespace kiln::kernels
