#include "engine/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/error.hpp"

namespace kiln {

namespace {

// Throws "<path>: cannot <action> <object> (<reason from errno>)". The
// arguments are built before the call, so errno is read first thing.
[[noreturn]] void fail(const std::string& path, const char* action, const std::string& object) {
  const int err = errno;
  throw Error(path + ": cannot " + action + " " + object + " (" + std::strerror(err) + ")");
}

void write_all(int fd, std::span<const uint8_t> bytes, const std::string& path, const std::string& tmp) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, "write", tmp);
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

// Writes and syncs the temporary file; the caller removes it if this throws.
void write_synced(const std::string& path, const std::string& tmp, std::span<const uint8_t> bytes) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "create", tmp);
  try {
    write_all(fd, bytes, path, tmp);
    if (::fsync(fd) != 0) fail(path, "sync", tmp);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail(path, "close", tmp);
}

// Makes the rename of `path` durable.
void sync_folder(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  const std::string folder = parent.empty() ? "." : parent;
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(path, "open folder", folder);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  errno = err;
  if (rc != 0) fail(path, "sync folder", folder);
}

}  // namespace

void write_file_atomically(const std::string& path, std::span<const uint8_t> bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    write_synced(path, tmp, bytes);
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail(path, "replace it with", tmp);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  sync_folder(path);
}

}  // namespace kiln
