#include "engine/files/file_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string_view>
#include <vector>

#include "engine/files/atomic_file.hpp"

namespace kiln {

namespace {

// A cache file is a few lines; anything larger is not one of ours.
constexpr size_t kMaxCacheBytes = 64 * 1024;
// The cache's first line: its format and hash function. A cache that starts
// otherwise (those written before kiln hashed with XXH3 have no such line)
// holds hashes of another function: none is reused, and the next store
// replaces them.
constexpr std::string_view kFirstLine = "kiln file-hashes 2 xxh3-64";

struct Entry {
  FileIdentity file;
  uint64_t hash = 0;
};

// Reads the cache without blocking on whatever might sit at its path;
// malformed lines are skipped.
std::vector<Entry> read_entries(const std::string& path) {
  std::vector<Entry> entries;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return entries;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && size_t(st.st_size) <= kMaxCacheBytes) {
    text.resize(size_t(st.st_size));
    const ssize_t got = ::read(fd, text.data(), text.size());
    text.resize(got > 0 ? size_t(got) : 0);
  }
  ::close(fd);
  std::istringstream lines(text);
  std::string first;
  if (!std::getline(lines, first) || first != kFirstLine) return entries;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    Entry e;
    if (in >> e.file.device >> e.file.inode >> e.file.size >> e.file.mtime_ns >> e.file.ctime_ns >> std::hex >> e.hash)
      entries.push_back(e);
  }
  return entries;
}

}  // namespace

std::string kiln_cache_path(const std::string& name) {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/kiln/" + name;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.cache/kiln/" + name;
}

FileIdentity FileIdentity::of(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
          int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
          int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec};
}

std::optional<uint64_t> cached_content_hash(const FileIdentity& file) {
  for (const Entry& e : read_entries(kiln_cache_path("file-hashes")))
    if (e.file == file) return e.hash;
  return std::nullopt;
}

void store_content_hash(const FileIdentity& file, uint64_t hash) {
  const std::string path = kiln_cache_path("file-hashes");
  std::vector<Entry> entries;
  for (const Entry& e : read_entries(path))
    if (e.file.device != file.device || e.file.inode != file.inode) entries.push_back(e);  // older versions go
  entries.push_back({file, hash});
  const size_t first = entries.size() > kMaxCachedHashes ? entries.size() - kMaxCachedHashes : 0;
  std::ostringstream text;
  text << kFirstLine << '\n';
  for (size_t i = first; i < entries.size(); ++i) {
    const FileIdentity& f = entries[i].file;
    text << f.device << ' ' << f.inode << ' ' << f.size << ' ' << f.mtime_ns << ' ' << f.ctime_ns << ' ' << std::hex
         << entries[i].hash << std::dec << '\n';
  }
  const std::string bytes = text.str();
  try {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    write_file_atomically(path, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  } catch (const std::exception&) {
    // Not cached; the next start hashes the file again.
  }
}

}  // namespace kiln
