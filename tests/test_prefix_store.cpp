// The prefix store without a model: it keeps to its budget, evicts the least
// recently used entry first, finds the longest shared prefix, and does not
// keep an entry that another one covers. (Seeding a real session is tested
// in e2e_prefix.)
#include <doctest/doctest.h>

#include <vector>

#include "engine/session/prefix_store.hpp"

using kiln::PrefixStore;
using kiln::SessionState;
using Tokens = std::vector<int32_t>;

namespace {

constexpr uint64_t kModel = 42;

// Two KV bytes per position, so an entry of n tokens takes 6n bytes.
SessionState state(Tokens tokens, uint64_t fingerprint = kModel) {
  SessionState s;
  s.fingerprint = fingerprint;
  s.kv = {1, 1, "u8", 1};
  s.kv_bytes.assign(tokens.size() * s.kv.bytes_per_position(), 7);
  s.tokens = std::move(tokens);
  return s;
}

}  // namespace

TEST_CASE("the prefix store keeps to its budget and evicts the least recently used") {
  const Tokens a = {1, 10, 11}, b = {1, 20, 21}, c = {1, 30, 31}, d = {1, 40, 41};
  PrefixStore store(3 * state(a).bytes());  // room for three entries of three tokens
  CHECK(store.put(state(a)));
  CHECK(store.put(state(b)));
  CHECK(store.put(state(c)));
  CHECK(store.size() == 3);
  CHECK(store.bytes_used() == 3 * state(a).bytes());

  CHECK(store.find(kModel, a).length == 3);  // a is now the most recently used; b the least
  CHECK(store.put(state(d)));
  CHECK(store.contains(a));
  CHECK_FALSE(store.contains(b));
  CHECK(store.contains(c));
  CHECK(store.contains(d));

  CHECK(store.put(state({1, 50, 51, 52, 53})));  // 5 tokens: two entries must go (c, then a)
  CHECK(store.bytes_used() <= store.budget_bytes());
  CHECK_FALSE(store.contains(c));
  CHECK_FALSE(store.contains(a));
  CHECK(store.contains(d));
  CHECK(store.size() == 2);

  CHECK_FALSE(store.put(state(Tokens(16, 3))));  // larger than the whole budget: refused, nothing evicted
  CHECK_FALSE(store.put(state({})));
  CHECK(store.size() == 2);
}

TEST_CASE("the prefix store finds the longest shared prefix") {
  PrefixStore store(1 << 20);
  store.put(state({1, 2, 3}));
  store.put(state({1, 2, 3, 4, 5, 6}));
  store.put(state({1, 9}));
  store.put(state({1, 2, 3, 4, 5, 6, 7}, /*fingerprint=*/7));  // another model's: never matched

  PrefixStore::Match m = store.find(kModel, Tokens{1, 2, 3, 4, 5, 8});
  REQUIRE(m.state != nullptr);
  CHECK(m.length == 5);
  CHECK(m.state->tokens == Tokens{1, 2, 3, 4, 5, 6});

  m = store.find(kModel, Tokens{1, 9, 9});
  REQUIRE(m.state != nullptr);
  CHECK(m.length == 2);
  CHECK(m.state->tokens == Tokens{1, 9});

  CHECK(store.find(kModel, Tokens{2, 2}).state == nullptr);
  CHECK(store.find(99, Tokens{1, 2, 3}).state == nullptr);

  // Equally long matches: the more recently used entry wins.
  store.find(kModel, Tokens{1, 9});
  m = store.find(kModel, Tokens{1, 5});
  REQUIRE(m.state != nullptr);
  CHECK(m.state->tokens == Tokens{1, 9});
}

TEST_CASE("the prefix store keeps no entry another one covers") {
  PrefixStore store(1 << 20);
  store.put(state({1, 2, 3}));
  store.put(state({1, 7}));
  store.put(state({1, 2, 3, 4}));  // serves every prompt {1, 2, 3} did
  CHECK(store.size() == 2);
  CHECK_FALSE(store.contains(Tokens{1, 2, 3}));
  CHECK(store.bytes_used() == state({1, 7}).bytes() + state({1, 2, 3, 4}).bytes());

  store.put(state({1, 7, 8}));
  store.put(state({1, 2}));  // covered by {1, 2, 3, 4}: not stored, but that entry is now the most recent
  CHECK(store.size() == 2);
  CHECK_FALSE(store.contains(Tokens{1, 2}));
  CHECK(store.find(kModel, Tokens{1, 3}).state->tokens == Tokens{1, 2, 3, 4});
}
