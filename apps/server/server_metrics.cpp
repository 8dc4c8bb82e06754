#include "apps/server/server_metrics.hpp"

#include <cstdio>

#include "apps/server/completion.hpp"
#include "apps/server/slot_scheduler.hpp"

namespace kiln {

namespace {

void metric(std::string& out, const char* type, const char* name, const char* help, double value) {
  char number[64];
  std::snprintf(number, sizeof number, "%.17g", value);
  out.append("# HELP kiln_").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE kiln_").append(name).append(" ").append(type).append("\n");
  out.append("kiln_").append(name).append(" ").append(number).append("\n");
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

void ServerMetrics::request_done(const CompletionResult& r, bool from_prefix_cache) {
  std::lock_guard lock(mutex_);
  ++requests_;
  prompt_tokens_ += static_cast<uint64_t>(r.prompt_tokens - r.cached_tokens);
  prompt_tokens_reused_ += static_cast<uint64_t>(r.cached_tokens);
  prompt_seconds_ += r.prompt_ms / 1000.0;
  predicted_tokens_ += static_cast<uint64_t>(r.completion_tokens);
  predicted_seconds_ += r.generation_ms / 1000.0;
  prefix_cache_hits_ += from_prefix_cache ? 1 : 0;
}

void ServerMetrics::decoded(int sequences) {
  std::lock_guard lock(mutex_);
  ++decodes_;
  decoded_sequences_ += static_cast<uint64_t>(sequences);
}

void ServerMetrics::set_kv_cells_used(size_t cells) {
  std::lock_guard lock(mutex_);
  kv_cells_used_ = cells;
}

std::string ServerMetrics::prometheus_text(const SlotCounts& slots) const {
  std::lock_guard lock(mutex_);
  std::string out;
  const auto counter = [&](const char* name, const char* help, double v) { metric(out, "counter", name, help, v); };
  const auto gauge = [&](const char* name, const char* help, double v) { metric(out, "gauge", name, help, v); };
  counter("requests_total", "Requests (choices) completed.", double(requests_));
  counter("prompt_tokens_total", "Prompt tokens computed.", double(prompt_tokens_));
  counter("prompt_tokens_reused_total", "Prompt tokens a slot's KV cache or the prefix cache already held.",
          double(prompt_tokens_reused_));
  counter("prompt_seconds_total", "Prompt computing time.", prompt_seconds_);
  counter("tokens_predicted_total", "Generated tokens.", double(predicted_tokens_));
  counter("tokens_predicted_seconds_total", "Generation time.", predicted_seconds_);
  counter("prefix_cache_hits_total", "Requests seeded from the prefix cache.", double(prefix_cache_hits_));
  counter("n_decode_total", "Batched forward passes of generating slots.", double(decodes_));
  gauge("n_busy_slots_per_decode", "Average slots per batched forward pass.", ratio(double(decoded_sequences_), double(decodes_)));
  gauge("prompt_tokens_seconds", "Average prompt throughput in tokens/s.", ratio(double(prompt_tokens_), prompt_seconds_));
  gauge("predicted_tokens_seconds", "Average generation throughput in tokens/s.",
        ratio(double(predicted_tokens_), predicted_seconds_));
  gauge("kv_cache_tokens", "KV cache cells used, over all slots.", double(kv_cells_used_));
  gauge("kv_cache_usage_ratio", "KV cache cells used, as a fraction of all slots' cells.",
        ratio(double(kv_cells_used_), double(kv_cells_total_)));
  gauge("requests_processing", "Requests in slots.", slots.processing);
  gauge("requests_deferred", "Requests waiting for a slot.", slots.waiting);
  return out;
}

}  // namespace kiln
