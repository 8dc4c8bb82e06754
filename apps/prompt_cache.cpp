#include "apps/prompt_cache.hpp"

#include <cstdio>
#include <filesystem>

#include "engine/session/state_file.hpp"

namespace kiln {

void PromptCache::restore(Session& session, std::span<const int32_t> prompt) {
  std::error_code ec;
  if (!read_only_ && !std::filesystem::exists(path_, ec)) {
    report("not found; it will be created");
    return;
  }
  try {
    const SessionState state = read_state_file(path_);
    file_holds_prompt_ = session.restore_prefix(state, prompt) == prompt.size();
  } catch (const std::exception& e) {  // kiln::Error, or bad_alloc for a file too large to hold
    report(std::string(e.what()) + "; ignoring it");
  }
}

void PromptCache::save(const Session& session, std::span<const int32_t> prompt) const {
  if (read_only_ || file_holds_prompt_) return;
  try {
    write_state_file(path_, session.snapshot(prompt.size()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prompt cache not saved: %s\n", e.what());  // e names the file
  }
}

void PromptCache::report(const std::string& problem) const {
  std::fprintf(stderr, "prompt cache %s: %s\n", path_.c_str(), problem.c_str());
}

}  // namespace kiln
