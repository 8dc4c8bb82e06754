// The hash kiln tells bytes apart by: XXH3-64 of xxHash (Debian's
// libxxhash-dev), which runs at about memory speed. It names model files
// (engine/model/model_fingerprint.hpp) and checks state files and weight images.
// Not cryptographic: it tells files apart, it does not resist someone forging
// a collision on purpose.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace kiln {

// XXH3-64 of `bytes` (seed 0): what `xxhsum -H3` prints for a file of them.
uint64_t content_hash(std::span<const uint8_t> bytes);

// The same hash of bytes given in parts: after add(a) and add(b), digest()
// is content_hash of a followed by b.
class ContentHasher {
 public:
  ContentHasher();
  ContentHasher(ContentHasher&&) noexcept;
  ContentHasher& operator=(ContentHasher&&) noexcept;
  ~ContentHasher();

  ContentHasher& add(std::span<const uint8_t> bytes);
  uint64_t digest() const;

 private:
  struct State;  // xxHash's, kept out of this header (see content_hash.cpp)
  std::unique_ptr<State> state_;
};

}  // namespace kiln
