// The file form of a SessionState, for --prompt-cache and Session::save_state.
//
// Little-endian, in this order:
//   offset  bytes    field
//   0       8        magic "KILNKVST"
//   8       4        format version (kStateFileVersion)
//   12      4        number of tokens n
//   16      8        fingerprint of the model (Model::fingerprint)
//   24      4        KV layout: layers
//   28      4                   elements per key or value vector (kv_dim)
//   32      4                   bytes per element
//   36      12                  element type name, NUL-padded ("f32")
//   48      4        first position the sliding-window layers' rows hold (SessionState::held_from)
//   52      4n       token ids (int32)
//   52+4n   n*P      KV data, P = KvLayout::bytes_per_position(), as Sequence::read_kv lays it out
//   end-8   8        checksum of everything before it: its content_hash
//                    (engine/files/content_hash.hpp, XXH3-64)
#pragma once

#include <cstdint>
#include <string>

#include "engine/session/session_state.hpp"

namespace kiln {

// 2: XXH3-64 for the checksum and in the model's fingerprint. 3: where the
// sliding-window layers' rows start (their caches keep only a ring). Older
// files are refused by their version.
inline constexpr uint32_t kStateFileVersion = 3;

// Replaces `path` atomically (write_file_atomically): a failed or interrupted
// save leaves the previous file as it was. Throws kiln::Error "<path>: ...".
void write_state_file(const std::string& path, const SessionState& state);

// Reads a whole state file and checks its form: magic, version, a size that
// matches its header, the checksum. Does not check that it fits a model (see
// check_state_fits). Throws kiln::Error with the reason alone ("the file is
// empty", "checksum mismatch: the file is corrupt"); callers name the file.
SessionState read_state_file(const std::string& path);

}  // namespace kiln
