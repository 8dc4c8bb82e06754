// State files without a model: a round trip keeps everything, each kind of
// damage is refused with its own message, and a failed save leaves the
// previous file as it was.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/error/error.hpp"
#include "engine/session/state_file.hpp"
#include "tests/support/temp_folder.hpp"

namespace fs = std::filesystem;
using kiln::SessionState;
using kiln::test::read_bytes;
using kiln::test::TempFolder;
using kiln::test::write_bytes;
using Bytes = std::vector<uint8_t>;

namespace {

constexpr size_t kHeader = 52;

// 2 layers x 3 f32 values: 48 KV bytes per position.
SessionState make_state(size_t n_tokens) {
  SessionState s;
  s.fingerprint = 0x0123456789abcdefull;
  s.kv = {2, 3, "f32", 4};
  for (size_t i = 0; i < n_tokens; ++i) s.tokens.push_back(static_cast<int32_t>(100 + 7 * i));
  s.kv_bytes.resize(n_tokens * s.kv.bytes_per_position());
  for (size_t i = 0; i < s.kv_bytes.size(); ++i) s.kv_bytes[i] = static_cast<uint8_t>(i * 31 + 5);
  s.held_from = static_cast<int>(n_tokens / 2);
  return s;
}

void check_same(const SessionState& a, const SessionState& b) {
  CHECK(a.fingerprint == b.fingerprint);
  CHECK(a.kv == b.kv);
  CHECK(a.tokens == b.tokens);
  CHECK(a.kv_bytes == b.kv_bytes);
  CHECK(a.held_from == b.held_from);
}

void check_refused(const std::string& path, const std::string& message) {
  CAPTURE(message);
  CHECK_THROWS_WITH_AS(kiln::read_state_file(path), doctest::Contains(message.c_str()), kiln::Error);
}

template <class T>
void patch(Bytes& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

}  // namespace

TEST_CASE("a state file reads back what was written") {
  TempFolder tmp("state-file");
  for (size_t n : {0, 1, 5}) {
    CAPTURE(n);
    const SessionState s = make_state(n);
    kiln::write_state_file(tmp.file("s.state"), s);
    CHECK(fs::file_size(tmp.file("s.state")) == kHeader + n * (4 + 48) + 8);
    check_same(kiln::read_state_file(tmp.file("s.state")), s);
  }
}

TEST_CASE("a damaged state file is refused with a message naming the damage") {
  TempFolder tmp("state-file");
  const std::string path = tmp.file("s.state");
  kiln::write_state_file(path, make_state(5));
  const Bytes good = read_bytes(path);
  const size_t tokens_at = kHeader, kv_at = kHeader + 5 * 4, checksum_at = good.size() - 8;

  struct Case {
    const char* what;
    Bytes bytes;
    std::string message;
  };
  std::vector<Case> cases = {
      {"empty", {}, "the file is empty"},
      {"cut in the header", Bytes(good.begin(), good.begin() + 20), "truncated: 20 bytes"},
      {"cut in the tokens", Bytes(good.begin(), good.begin() + long(tokens_at + 6)), "truncated: 58 bytes"},
      {"cut in the KV data", Bytes(good.begin(), good.begin() + long(kv_at + 100)), "does not fit the 5 tokens"},
      {"cut in the checksum", Bytes(good.begin(), good.end() - 3), "does not fit the 5 tokens"},
      {"a byte too many", good, "does not fit the 5 tokens"},
  };
  cases.back().bytes.push_back(0);
  auto flipped = [&](const char* what, size_t offset, const std::string& message) {
    Bytes b = good;
    b[offset] ^= 0x10;
    cases.push_back({what, b, message});
  };
  flipped("magic", 0, "not a kiln state file");
  flipped("token count", 12, "does not fit the 21 tokens");
  flipped("fingerprint", 16, "checksum mismatch");
  flipped("layout", 28, "does not fit the 5 tokens");
  flipped("type name", 37, "checksum mismatch");
  flipped("sliding-window start", 48, "corrupt header: the sliding-window layers' positions start past the last token");
  flipped("a token", tokens_at + 4, "checksum mismatch");
  flipped("KV data", kv_at + 77, "checksum mismatch");
  flipped("the last KV byte", checksum_at - 1, "checksum mismatch");
  flipped("checksum", checksum_at + 7, "checksum mismatch");
  const std::string reads = ", this binary reads version " + std::to_string(kiln::kStateFileVersion);
  Bytes newer = good;
  patch<uint32_t>(newer, 8, kiln::kStateFileVersion + 1);
  cases.push_back({"a newer version", newer, "format version " + std::to_string(kiln::kStateFileVersion + 1) + reads});
  // Version 1 files (FNV-1a checksums, fingerprints of another hash) are
  // refused by their version, before their checksum could be misread.
  Bytes version_1 = good;
  patch<uint32_t>(version_1, 8, 1);
  cases.push_back({"version 1", version_1, "format version 1" + reads});
  Bytes no_layers = good;
  patch<uint32_t>(no_layers, 24, 0);
  cases.push_back({"zero layers", no_layers, "corrupt header: impossible KV layout"});
  Bytes huge = good;
  patch<uint32_t>(huge, 12, 0xffffffffu);
  patch<uint32_t>(huge, 28, 1u << 20);
  cases.push_back({"huge counts", huge, "does not fit the 4294967295 tokens"});

  for (const Case& c : cases) {
    CAPTURE(c.what);
    write_bytes(path, c.bytes);
    check_refused(path, c.message);
  }
  check_refused(tmp.file("missing.state"), "cannot open (No such file or directory)");
}

TEST_CASE("a save that fails before the rename leaves the previous file valid") {
  TempFolder tmp("state-file");
  const std::string path = tmp.file("s.state");
  const SessionState before = make_state(3);
  kiln::write_state_file(path, before);

  // A crash after writing part of the temporary file: the target is untouched.
  write_bytes(path + ".tmp.12345", Bytes(30, 0xee));
  check_same(kiln::read_state_file(path), before);

  // The temporary file cannot be created (a folder is in its way): the save
  // fails, naming the file, and the target still holds the previous state.
  fs::create_directory(path + ".tmp." + std::to_string(::getpid()));
  CHECK_THROWS_WITH_AS(kiln::write_state_file(path, make_state(4)), doctest::Contains((path + ": cannot").c_str()),
                       kiln::Error);
  check_same(kiln::read_state_file(path), before);
}
