// Replacing a file so that readers (and a crash) see either the old or the
// new contents, never a partial write.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace kiln {

// Writes `bytes` to `path` according to what `path` names:
// - nothing, or a regular file: the bytes go to an unnamed temporary file in
//   the same folder (O_TMPFILE; a named `<path>.tmp.<pid>` where the file
//   system lacks it), which is synced, given a name, renamed over `path`,
//   and the folder synced so the rename itself is durable. A replaced file
//   keeps its permission bits;
// - a symbolic link: the same, for the file the link leads to (the link stays);
// - a character device (/dev/null, a terminal): written directly, since it
//   cannot be replaced;
// - a folder, FIFO, socket or block device: refused.
// On any failure the temporary file is removed and kiln::Error names the path
// and the reason. A process killed while writing leaves no temporary behind
// where O_TMPFILE is available.
void write_file_atomically(const std::string& path, std::span<const uint8_t> bytes);

// The same for a file too large to hold in memory, written piece by piece:
// to a temporary file next to what `path` names (a symbolic link is
// followed), put in place by commit(). Only regular files: a device, folder,
// FIFO or socket at `path` is refused at construction. Destroyed without
// commit() (an exception while writing), the temporary file is removed and
// `path` is untouched. Errors are kiln::Error naming `path` and the reason.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Appends `bytes`.
  void write(std::span<const uint8_t> bytes);
  // Overwrites bytes already written, from `offset` (a header filled in last).
  void write_at(uint64_t offset, std::span<const uint8_t> bytes);
  // Syncs the file and renames it over its target.
  void commit();

 private:
  class TemporaryFile;
  std::string target_;
  std::unique_ptr<TemporaryFile> file_;
};

}  // namespace kiln
