#include "engine/files/content_hash.hpp"

// xxHash compiled into this file (XXH_INLINE_ALL) rather than linked: kiln's
// static libraries then need only the header, in an installed package and in
// a cross build alike, and the hash is compiled for kiln's instruction set.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kiln {

struct ContentHasher::State {
  XXH3_state_t xxh;
};

uint64_t content_hash(std::span<const uint8_t> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

ContentHasher::ContentHasher() : state_(std::make_unique<State>()) { XXH3_64bits_reset(&state_->xxh); }
ContentHasher::ContentHasher(ContentHasher&&) noexcept = default;
ContentHasher& ContentHasher::operator=(ContentHasher&&) noexcept = default;
ContentHasher::~ContentHasher() = default;

ContentHasher& ContentHasher::add(std::span<const uint8_t> bytes) {
  XXH3_64bits_update(&state_->xxh, bytes.data(), bytes.size());
  return *this;
}

uint64_t ContentHasher::digest() const { return XXH3_64bits_digest(&state_->xxh); }

}  // namespace kiln
