// The 32-element block types whose 4-bit codes index a table of 16 signed
// values (IQ4_NL's codebook, MXFP4's doubled E2M1 values): the tables as the
// integer kernels look them up, signed or biased by 128 (code_bias in
// kernels/int8_dot.hpp), so one decoding path serves both types.
#pragma once

#include <cstdint>

#include "kernels/quant_iq4.hpp"
#include "kernels/quant_mxfp4.hpp"

namespace kiln::kernels {

constexpr bool is_codebook_type(TensorType t) { return t == TensorType::IQ4_NL || t == TensorType::MXFP4; }

// The types whose block products are of signed weights, with no offset.
constexpr bool has_signed_weights(TensorType t) { return t == TensorType::Q8_0 || is_codebook_type(t); }

// The 16 values of a codebook type's codes (IQ4_XS shares IQ4_NL's).
template <TensorType T>
constexpr const int8_t* codebook_values() {
  return T == TensorType::MXFP4 ? kMxfp4Values : kIq4Values;
}

// The same + 128, unsigned.
template <TensorType T>
constexpr const uint8_t* codebook_biased() {
  return T == TensorType::MXFP4 ? kMxfp4Biased : kIq4Biased;
}

}  // namespace kiln::kernels
