#include "engine/files/content_hash.hpp"

#include <bit>
#include <cstring>

namespace kiln {

namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;

uint64_t word_at(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

uint64_t lane_step(uint64_t lane, uint64_t word) { return std::rotl(lane + word * kPrime2, 31) * kPrime1; }

// Spreads every input bit over the whole result.
uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  return h ^ (h >> 32);
}

}  // namespace

uint64_t content_hash(std::span<const uint8_t> bytes, uint64_t seed) {
  const uint8_t* p = bytes.data();
  const size_t n = bytes.size();
  uint64_t a = seed + kPrime1 + kPrime2, b = seed + kPrime2, c = seed, d = seed - kPrime1;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a = lane_step(a, word_at(p + i));
    b = lane_step(b, word_at(p + i + 8));
    c = lane_step(c, word_at(p + i + 16));
    d = lane_step(d, word_at(p + i + 24));
  }
  const uint64_t lanes[4] = {a, b, c, d};
  uint64_t h = std::rotl(lanes[0], 1) + std::rotl(lanes[1], 7) + std::rotl(lanes[2], 12) + std::rotl(lanes[3], 18);
  for (uint64_t lane : lanes) h = (h ^ lane_step(0, lane)) * kPrime1 + kPrime4;
  h += n;
  for (; i + 8 <= n; i += 8) h = std::rotl(h ^ lane_step(0, word_at(p + i)), 27) * kPrime1 + kPrime4;
  for (; i < n; ++i) h = std::rotl(h ^ (p[i] * kPrime3), 11) * kPrime1;
  return avalanche(h);
}

}  // namespace kiln
