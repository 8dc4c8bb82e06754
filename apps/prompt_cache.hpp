// --prompt-cache FILE: the KV state of the last prompt, kept in a state file
// so that the next run with a prompt sharing its beginning computes only the
// rest (llama.cpp's flag and behaviour; --prompt-cache-ro never writes it).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "engine/session/session.hpp"

namespace kiln {

class PromptCache {
 public:
  PromptCache(std::string path, bool read_only) : path_(std::move(path)), read_only_(read_only) {}

  // Restores into `session` the longest prefix of `prompt` the file holds. A
  // file that cannot be used (missing, damaged, another model's) is reported
  // in one line on stderr and ignored: the prompt is then computed in full.
  void restore(Session& session, std::span<const int32_t> prompt);

  // Saves the session's first prompt.size() positions (the prompt, not what
  // was generated after it) unless the cache is read-only or the file already
  // holds the whole prompt. A failure is reported on stderr; the run's output
  // is already out, so it is not an error.
  void save(const Session& session, std::span<const int32_t> prompt) const;

 private:
  void report(const std::string& problem) const;

  std::string path_;
  bool read_only_;
  bool file_holds_prompt_ = false;
};

}  // namespace kiln
