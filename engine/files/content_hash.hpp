// A fast 64-bit hash of many bytes: four independent multiply-rotate lanes
// over 32-byte stripes (the round of xxHash64), so a core keeps four
// multiplications in flight and hashes about as fast as memory delivers.
// Not cryptographic: it tells files apart, it does not resist someone forging
// a collision on purpose.
#pragma once

#include <cstdint>
#include <span>

namespace kiln {

// The hash of `bytes`, continuing from `seed` (a previous hash, to chain parts).
uint64_t content_hash(std::span<const uint8_t> bytes, uint64_t seed = 0);

}  // namespace kiln
