// Replacing a file so that readers (and a crash) see either the old or the
// new contents, never a partial write.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace kiln {

// Writes `bytes` to `<path>.tmp.<pid>` in the same folder, syncs it, renames it
// over `path`, then syncs the folder so the rename itself is durable. On any
// failure the temporary file is removed and kiln::Error names the path and the
// system's reason.
void write_file_atomically(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace kiln
