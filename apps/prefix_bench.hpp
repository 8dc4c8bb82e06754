// Time to first token for a long prompt when part of it is already cached:
// restored from a SessionState in memory, or read from a state file, against
// computing all of it (cold). kiln-bench prints the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/session/session.hpp"

namespace kiln {

struct PrefixBenchOptions {
  int prompt_tokens = 1000;  // BOS and random token ids; at most the model's context
  std::vector<int> cached_percent = {50, 90, 100};
  int runs = 5;  // each time is the median of this many
  uint64_t seed = 1;
  std::string state_file;  // scratch file for the disk times; empty: one in the temp folder
};

struct PrefixBenchRow {
  int cached_percent = 0;
  int cached_tokens = 0;
  double memory_ms = 0;  // restore from a SessionState + ingest the rest + pick the first token
  double disk_ms = 0;    // the same, reading the state file first (from the OS page cache)
};

struct PrefixBenchResult {
  int prompt_tokens = 0;
  int runs = 0;
  int threads = 0;
  double cold_ms = 0;  // ingest the whole prompt + pick the first token
  std::vector<PrefixBenchRow> rows;

  std::string markdown() const;
};

// Runs on `session` with its current thread count; its context is
// overwritten. Throws kiln::Error for options that make no sense.
PrefixBenchResult run_prefix_bench(Session& session, const PrefixBenchOptions& options = {});

}  // namespace kiln
