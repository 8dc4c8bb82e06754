// What GET /metrics reports (--metrics), in Prometheus' text format: totals
// counted as requests end and steps run (the worker thread), and the state
// of the slots and the KV caches, under names that mirror llama-server's
// `llamacpp:` metrics with a `kiln_` prefix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace kiln {

struct CompletionResult;
struct SlotCounts;

class ServerMetrics {
 public:
  explicit ServerMetrics(size_t kv_cells_total) : kv_cells_total_(kv_cells_total) {}

  // A request that ended (its choice, for n > 1): its tokens and times, and
  // whether the prefix cache seeded it.
  void request_done(const CompletionResult& r, bool from_prefix_cache);
  // A batched forward pass over `sequences` slots' next tokens.
  void decoded(int sequences);
  // The positions the slots' KV caches hold now.
  void set_kv_cells_used(size_t cells);

  // The text GET /metrics answers with; `slots` for requests_processing and requests_deferred.
  std::string prometheus_text(const SlotCounts& slots) const;

 private:
  mutable std::mutex mutex_;  // the worker writes, HTTP threads read
  size_t kv_cells_total_;
  uint64_t requests_ = 0;
  uint64_t prompt_tokens_ = 0;  // computed, not reused
  uint64_t prompt_tokens_reused_ = 0;
  double prompt_seconds_ = 0;
  uint64_t predicted_tokens_ = 0;
  double predicted_seconds_ = 0;
  uint64_t prefix_cache_hits_ = 0;
  uint64_t decodes_ = 0;
  uint64_t decoded_sequences_ = 0;
  size_t kv_cells_used_ = 0;
};

}  // namespace kiln
