// The model fingerprint covers every byte of the file, so saved state can
// never be restored into other weights, and its cache is reused only for the
// very same version of the very same file.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/synth.hpp"
#include "engine/files/content_hash.hpp"
#include "engine/files/file_cache.hpp"
#include "engine/model/model_fingerprint.hpp"
#include "models/describe.hpp"
#include "models/presets.hpp"
#include "tests/support/temp_folder.hpp"

using kiln::GgufFile;
using kiln::test::TempFolder;
using Bytes = std::vector<uint8_t>;

namespace {

Bytes model_bytes() {
  kiln::synth::SynthSpec spec;
  spec.shape = *kiln::find_preset("stories260k");
  return kiln::synth::make_model(spec).bytes();
}

uint64_t fingerprint_of(const GgufFile& f) { return kiln::model_fingerprint(kiln::describe_model(f), f); }

// Points the cache at a folder of the test's own while it lives.
struct CacheIn {
  explicit CacheIn(const TempFolder& tmp) { ::setenv("XDG_CACHE_HOME", tmp.file("cache").c_str(), 1); }
  ~CacheIn() { ::unsetenv("XDG_CACHE_HOME"); }
};

}  // namespace

TEST_CASE("one changed weight byte anywhere in a tensor changes the fingerprint") {
  const Bytes original = model_bytes();
  const GgufFile a = GgufFile::from_bytes(original);
  const kiln::GgufTensor* t = a.find_tensor("blk.0.ffn_down.weight");
  REQUIRE(t != nullptr);
  REQUIRE(t->nbytes > 1000);
  // Bytes away from the start, middle and end, where the old fingerprint sampled.
  for (const uint64_t at : {uint64_t{100}, t->nbytes / 2 + 200, t->nbytes - 100}) {
    CAPTURE(at);
    Bytes changed = original;
    changed[size_t(a.data_offset() + t->offset + at)] ^= 0x80;
    const GgufFile b = GgufFile::from_bytes(changed);
    CHECK(kiln::describe_model(b).fingerprint() == kiln::describe_model(a).fingerprint());
    CHECK(fingerprint_of(b) != fingerprint_of(a));
  }
}

TEST_CASE("the content hash is reused only for the same version of the same file") {
  TempFolder tmp("fingerprint");
  const CacheIn cache(tmp);
  const std::string path = tmp.file("model.gguf");
  kiln::test::write_bytes(path, model_bytes());
  const uint64_t first = fingerprint_of(GgufFile::open(path));
  const std::string cache_file = kiln::kiln_cache_path("file-hashes");
  CHECK(cache_file == tmp.file("cache") + "/kiln/file-hashes");
  REQUIRE(std::filesystem::exists(cache_file));
  CHECK(fingerprint_of(GgufFile::open(path)) == first);

  // The cache is what the second open read: a hash planted for this file's
  // identity comes back.
  const GgufFile opened = GgufFile::open(path);
  kiln::store_content_hash(*opened.identity(), 12345);
  CHECK(kiln::cached_content_hash(*opened.identity()) == 12345u);
  CHECK(fingerprint_of(opened) != first);

  // The same bytes written again are a new version of the file (another
  // inode and change time): hashed again, the planted value is not used.
  kiln::test::write_bytes(tmp.file("copy.gguf"), model_bytes());
  std::filesystem::rename(tmp.file("copy.gguf"), path);
  CHECK(fingerprint_of(GgufFile::open(path)) == first);
}

TEST_CASE("a damaged or foreign cache file is ignored") {
  TempFolder tmp("fingerprint");
  const CacheIn cache(tmp);
  const std::string path = tmp.file("model.gguf");
  kiln::test::write_bytes(path, model_bytes());
  const uint64_t expected = kiln::model_fingerprint(kiln::describe_model(GgufFile::from_bytes(model_bytes())),
                                                    GgufFile::from_bytes(model_bytes()));
  std::filesystem::create_directories(tmp.file("cache") + "/kiln");
  kiln::test::write_bytes(kiln::kiln_cache_path("file-hashes"), {'x', ' ', '1', '\n', 0xff, '\n'});
  CHECK(fingerprint_of(GgufFile::open(path)) == expected);
}

TEST_CASE("a cache written before the hash was XXH3 is not reused, and is replaced") {
  TempFolder tmp("fingerprint");
  const CacheIn cache(tmp);
  const std::string path = tmp.file("model.gguf");
  kiln::test::write_bytes(path, model_bytes());
  const GgufFile opened = GgufFile::open(path);
  const uint64_t expected = kiln::model_fingerprint(kiln::describe_model(opened), GgufFile::from_bytes(model_bytes()));
  // The earlier format: lines of the file's identity and its hash in hex, no first line.
  const kiln::FileIdentity& id = *opened.identity();
  const std::string old_line = std::to_string(id.device) + " " + std::to_string(id.inode) + " " +
                               std::to_string(id.size) + " " + std::to_string(id.mtime_ns) + " " +
                               std::to_string(id.ctime_ns) + " 3039\n";
  std::filesystem::create_directories(tmp.file("cache") + "/kiln");
  kiln::test::write_bytes(kiln::kiln_cache_path("file-hashes"), Bytes(old_line.begin(), old_line.end()));
  CHECK_FALSE(kiln::cached_content_hash(id));
  CHECK(fingerprint_of(opened) == expected);
  const Bytes rewritten = kiln::test::read_bytes(kiln::kiln_cache_path("file-hashes"));
  CHECK(std::string(rewritten.begin(), rewritten.end()).find(old_line) == std::string::npos);
  CHECK(kiln::cached_content_hash(id) == kiln::file_content_hash(GgufFile::from_bytes(model_bytes())));
}

TEST_CASE("content_hash: XXH3-64; every byte and the length count; parts give the hash of the whole") {
  CHECK(kiln::content_hash({}) == 0x2D06800538D394C2ull);  // XXH3-64 of no bytes, as xxHash's own tests have it
  Bytes bytes(1000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 31);
  const uint64_t h = kiln::content_hash(bytes);
  for (size_t i = 0; i < bytes.size(); i += 37) {
    Bytes changed = bytes;
    changed[i] ^= 1;
    CHECK(kiln::content_hash(changed) != h);
  }
  CHECK(kiln::content_hash(std::span(bytes).first(999)) != h);
  for (const size_t split : {size_t{0}, size_t{1}, size_t{240}, size_t{999}, size_t{1000}}) {
    CAPTURE(split);
    const std::span<const uint8_t> all(bytes);
    CHECK(kiln::ContentHasher().add(all.first(split)).add(all.subspan(split)).digest() == h);
  }
  const GgufFile file = GgufFile::from_bytes(model_bytes());
  CHECK(file.hash_contents() == kiln::content_hash(model_bytes()));
}
