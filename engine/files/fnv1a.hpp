// FNV-1a (64-bit): the hash kiln uses to name models and check state files.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace kiln {

inline constexpr uint64_t kFnv1aStart = 0xcbf29ce484222325ull;
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ull;

// Continues hash `h` over `bytes`, one byte per step.
inline uint64_t fnv1a(uint64_t h, std::span<const uint8_t> bytes) {
  for (uint8_t b : bytes) h = (h ^ b) * kFnv1aPrime;
  return h;
}

// The same step taken over 8-byte little-endian words instead of bytes (the
// last word zero-padded): eight times fewer steps, for megabytes of data.
inline uint64_t fnv1a_words(uint64_t h, std::span<const uint8_t> bytes) {
  size_t i = 0;
  for (uint64_t word; i + 8 <= bytes.size(); i += 8) {
    std::memcpy(&word, bytes.data() + i, 8);
    h = (h ^ word) * kFnv1aPrime;
  }
  if (i < bytes.size()) {
    uint64_t last = 0;
    std::memcpy(&last, bytes.data() + i, bytes.size() - i);
    h = (h ^ last) * kFnv1aPrime;
  }
  return h;
}

}  // namespace kiln
