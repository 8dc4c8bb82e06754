// --logits-out: the logits of every prompt position as text, so kiln can be
// compared with another engine without writing code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/session/session.hpp"

namespace kiln {

// Makes `prompt` the session's context, computed from position 0
// (Session::ingest_every_position), and writes one line per position: all n_vocab logits, space-separated, printed with
// %.9g (exact for float32). The file is written atomically.
void write_prompt_logits(Session& session, const std::vector<int32_t>& prompt, const std::string& path);

}  // namespace kiln
