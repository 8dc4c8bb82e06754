#include "engine/files/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "engine/error/error.hpp"

namespace kiln {

namespace {

// Symbolic links followed before giving up, as the kernel's own limit.
constexpr int kMaxLinkHops = 40;

// Throws "<path>: cannot <action> <object> (<reason from errno>)". The
// arguments are built before the call, so errno is read first thing.
[[noreturn]] void fail(const std::string& path, const char* action, const std::string& object) {
  const int err = errno;
  throw Error(path + ": cannot " + action + " " + object + " (" + std::strerror(err) + ")");
}

void write_all(int fd, std::span<const uint8_t> bytes, const std::string& path, const std::string& object) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, "write", object);
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

std::string folder_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// What `path` finally names: the path itself, or for a symbolic link (a
// chain of them) the file it leads to, which need not exist yet. `st` is that
// file's lstat, or nullopt when there is none.
std::string resolve_links(const std::string& path, std::optional<struct stat>& st) {
  std::string target = path;
  for (int hops = 0;; ++hops) {
    struct stat s {};
    if (::lstat(target.c_str(), &s) != 0) {
      if (errno != ENOENT) fail(path, "inspect", target);
      st.reset();
      return target;
    }
    if (!S_ISLNK(s.st_mode)) {
      st = s;
      return target;
    }
    if (hops == kMaxLinkHops) throw Error(path + ": more than " + std::to_string(kMaxLinkHops) + " symbolic links");
    std::error_code ec;
    const std::filesystem::path link = std::filesystem::read_symlink(target, ec);
    if (ec) throw Error(path + ": cannot read the symbolic link " + target + " (" + ec.message() + ")");
    target = link.is_absolute() ? link.string() : (std::filesystem::path(folder_of(target)) / link).string();
  }
}

// A character device cannot be replaced (and must not be: /dev/null); it is
// written in place. Opened without blocking, and checked again once open, in
// case the name was changed to something else in between.
void write_device(const std::string& path, const std::string& target, std::span<const uint8_t> bytes) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(path, "open", "the device " + target);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, "inspect", target);
  if (!S_ISCHR(st.st_mode)) throw Error(path + ": changed while it was opened; not written");
  if (::fcntl(fd, F_SETFL, 0) != 0) fail(path, "set blocking writes on", target);
  write_all(fd, bytes, path, target);
}

// Why a file of this type is not written, or nullptr when it is.
const char* refusal(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder";
  if (S_ISFIFO(mode)) return "is a FIFO";
  if (S_ISSOCK(mode)) return "is a socket";
  if (S_ISBLK(mode)) return "is a block device";
  return nullptr;
}

}  // namespace

// A file being written next to `target`: unnamed (O_TMPFILE) while possible,
// so a killed process leaves nothing behind; removed on destruction unless
// it was renamed over `target`.
class AtomicFileWriter::TemporaryFile {
 public:
  TemporaryFile(const std::string& path, const std::string& target)
      : path_(path), folder_(folder_of(target)), named_(target + ".tmp." + std::to_string(::getpid())) {
    fd_ = ::open(folder_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd_ >= 0) return;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) fail(path_, "create", "a file in " + folder_);
    ::unlink(named_.c_str());  // a leftover of a killed process with our pid
    fd_ = ::open(named_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(path_, "create", named_);
    has_name_ = true;
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (has_name_) ::unlink(named_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void append(std::span<const uint8_t> bytes) { write_all(fd_, bytes, path_, "a temporary file in " + folder_); }

  void write_at(uint64_t offset, std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(path_, "write", "a temporary file in " + folder_);
      bytes = bytes.subspan(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
    }
  }

  void set_mode(mode_t mode) {
    if (::fchmod(fd_, mode) != 0) fail(path_, "set the permissions of", "a temporary file");
  }

  // Syncs the file, renames it over `target`, then syncs the folder so the
  // rename is durable.
  void replace(const std::string& target) {
    if (::fsync(fd_) != 0) fail(path_, "sync", "a temporary file in " + folder_);
    if (!has_name_) {
      const std::string self = "/proc/self/fd/" + std::to_string(fd_);
      ::unlink(named_.c_str());
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, named_.c_str(), AT_SYMLINK_FOLLOW) != 0)
        fail(path_, "name", named_);
      has_name_ = true;
    }
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail(path_, "close", named_);
    if (::rename(named_.c_str(), target.c_str()) != 0) fail(path_, "replace it with", named_);
    has_name_ = false;
    sync_folder();
  }

 private:
  void sync_folder() const {
    const int fd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail(path_, "open folder", folder_);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    errno = err;
    if (rc != 0) fail(path_, "sync folder", folder_);
  }

  std::string path_;    // as the caller named it, for messages
  std::string folder_;
  std::string named_;   // the name it has, or gets just before the rename
  int fd_ = -1;
  bool has_name_ = false;
};

AtomicFileWriter::AtomicFileWriter(const std::string& path) {
  std::optional<struct stat> st;
  target_ = resolve_links(path, st);
  if (st && S_ISCHR(st->st_mode)) throw Error(path + ": is a character device; only a regular file can be written here");
  if (st && refusal(st->st_mode))
    throw Error(path + ": " + refusal(st->st_mode) + "; kiln writes only regular files and character devices");
  file_ = std::make_unique<TemporaryFile>(path, target_);
  if (st) file_->set_mode(st->st_mode & 07777);  // a replaced file keeps its permissions
}

AtomicFileWriter::~AtomicFileWriter() = default;

void AtomicFileWriter::write(std::span<const uint8_t> bytes) { file_->append(bytes); }

void AtomicFileWriter::write_at(uint64_t offset, std::span<const uint8_t> bytes) { file_->write_at(offset, bytes); }

void AtomicFileWriter::commit() {
  file_->replace(target_);
  file_.reset();
}

void write_file_atomically(const std::string& path, std::span<const uint8_t> bytes) {
  std::optional<struct stat> st;
  const std::string target = resolve_links(path, st);
  if (st && S_ISCHR(st->st_mode)) return write_device(path, target, bytes);
  AtomicFileWriter out(path);
  out.write(bytes);
  out.commit();
}

}  // namespace kiln
