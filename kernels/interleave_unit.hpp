// One row's share of the codes of 32 columns (a unit: what one block of Q8
// activations multiplies), in the forms the integer kernels decode
// (kernels/arch/int8_*.hpp). A unit is a run of vectors of 4 bytes per
// interleaved row; in each vector row r owns bytes 4r .. 4r + 3, so that
// each 32-bit lane of a register holds one row. A type's codes are split
// into some of these parts (interleave.hpp, interleave_k.hpp say which):
//
//   nibbles, 4 vectors: byte j of a row's 16 (vector j / 4, byte j % 4)
//     holds 4 bits of element j in its low nibble and of element j + 16 in
//     its high one (GGUF's Q4_0 order);
//   crumbs, 2 vectors, for elements 0..15 then 16..31: byte k of a row's 4
//     has at bits 2v, 2v + 1 two bits of element 4v + k (+ 16);
//   bits, 1 vector: byte k of a row's 4 has at bit v one bit of element
//     4v + k and at bit 4 + v one of element 16 + 4v + k.
//
// Decoded, element 4v + k is byte k of a row's lane in code vector v and
// element 16 + 4v + k the same byte of code vector 4 + v: the nibble
// vectors give that with a mask and a shift, and one more shift and mask
// put a crumb or bit vector's bits in their place above or below them.
#pragma once

#include <cstdint>

#include "kernels/arch/int8.hpp"

namespace kiln::kernels {

// Bytes of one vector: 4 of each row.
inline constexpr int64_t kInterleavedVectorBytes = 4 * kInterleaveRows;

namespace unit {

struct Place {
  int half;  // 0: elements 0..15, 1: 16..31
  int v;     // the code vector within the half
  int k;     // the byte within the row's 4
};

constexpr Place place(int e) { return {e / 16, e % 16 / 4, e % 4}; }

// Writes (ORs into zeroed bytes) part of element e's code for row r.
inline void put_nibble(uint8_t* nibbles, int64_t r, int e, int value) {
  const Place p = place(e);
  nibbles[p.v * kInterleavedVectorBytes + r * 4 + p.k] |= static_cast<uint8_t>(value << (4 * p.half));
}
inline void put_crumb(uint8_t* crumbs, int64_t r, int e, int value) {
  const Place p = place(e);
  crumbs[p.half * kInterleavedVectorBytes + r * 4 + p.k] |= static_cast<uint8_t>(value << (2 * p.v));
}
inline void put_bit(uint8_t* bits, int64_t r, int e, int value) {
  const Place p = place(e);
  bits[r * 4 + p.k] |= static_cast<uint8_t>(value << (4 * p.half + p.v));
}

}  // namespace unit

}  // namespace kiln::kernels
