// kiln's per-user cache folder, and the cache of file content hashes that
// lets a model's fingerprint (engine/model/model_fingerprint.hpp) cost one pass
// over its file once, not at every start.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

// $XDG_CACHE_HOME/kiln/<name>, or ~/.cache/kiln/<name>.
std::string kiln_cache_path(const std::string& name);

// Which file, at which version: a result computed from a file's bytes is
// reused only while all of these are unchanged. The change time (ctime) moves
// with every write and cannot be set back by a user, unlike the modification
// time, so a file rewritten in place with its mtime restored still differs.
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;

  static FileIdentity of(const struct stat& st);
  bool operator==(const FileIdentity&) const = default;
};

// The content hash recorded for `file` in kiln_cache_path("file-hashes"),
// or nullopt when there is none (or the cache cannot be read, or was written
// by a kiln that hashed with another function).
std::optional<uint64_t> cached_content_hash(const FileIdentity& file);

// Records it, keeping the most recent kMaxCachedHashes entries. A cache that
// cannot be written is skipped silently: it only saves time.
void store_content_hash(const FileIdentity& file, uint64_t hash);

inline constexpr size_t kMaxCachedHashes = 64;

}  // namespace kiln
