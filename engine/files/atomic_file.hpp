// Replacing a file so that readers (and a crash) see either the old or the
// new contents, never a partial write.
#pragma once

#include <cstdint>
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

}  // namespace kiln
