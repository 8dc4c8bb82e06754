// kiln.h over the C++ engine: every entry point catches what the engine
// throws and turns it into a return value and kiln_last_error(). (Two of
// them, kiln_model_load and kiln_last_error, check the CPU first:
// capi/cpu_gate.cpp.)
#include "capi/kiln.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>

#include "capi/compiled_model.hpp"
#include "capi/kiln_checked.hpp"
#include "engine/error/error.hpp"
#include "engine/session/sampler.hpp"
#include "engine/session/session.hpp"
#include "engine/tokenizer/tokenizer.hpp"

// The handles. A session keeps the model alive (shared ownership), so the
// order in which a caller frees them does not matter.
struct kiln_model {
  std::shared_ptr<const kiln::Model> model;
};

struct kiln_session {
  std::shared_ptr<const kiln::Model> model;
  kiln::Session session;
  kiln::Sampler sampler;
  bool has_logits = false;  // session.logits() are those of the last token in the context
};

namespace {

thread_local std::string t_last_error;

// Runs `body`; an exception becomes `failed` and the thread's last error,
// prefixed with the function's name.
template <class T, class Body>
T guarded(const char* function, T failed, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    t_last_error = std::string(function) + ": out of memory";
  } catch (const std::exception& e) {
    t_last_error = std::string(function) + ": " + e.what();
  } catch (...) {
    t_last_error = std::string(function) + ": unknown error";
  }
  return failed;
}

// The object behind a handle, or a kiln::Error if it is NULL.
template <class Handle>
Handle& checked(Handle* p, const char* what) {
  if (!p) throw kiln::Error(std::string(what) + " is NULL");
  return *p;
}

// An array or string argument that must not be NULL.
template <class T>
T* non_null(T* p, const char* what) {
  if (!p) throw kiln::Error(std::string(what) + " is NULL");
  return p;
}

kiln::SamplerParams to_params(const kiln_sampling* s) {
  kiln::SamplerParams p;
  if (!s) return p;
  p.temperature = s->temperature;
  p.top_k = s->top_k;
  p.top_p = s->top_p;
  p.min_p = s->min_p;
  p.repeat_penalty = s->repeat_penalty;
  p.repeat_last_n = s->repeat_last_n;
  p.seed = s->seed;
  return p;
}

int32_t all_hardware_threads() { return static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency())); }

void check_count(int32_t n, const char* what) {
  if (n < 0) throw kiln::Error(std::string(what) + " is negative (" + std::to_string(n) + ")");
}

}  // namespace

namespace kiln::capi {

kiln_model* load_model(const char* gguf_path) {
  return guarded<kiln_model*>("kiln_model_load", nullptr, [&] {
    return new kiln_model{load_compiled_model(gguf_path ? gguf_path : "")};
  });
}

const char* last_error() { return t_last_error.c_str(); }

}  // namespace kiln::capi

extern "C" {

kiln_sampling kiln_sampling_default(void) {
  const kiln::SamplerParams p;
  return {p.temperature, p.top_k, p.top_p, p.min_p, p.repeat_penalty, p.repeat_last_n, p.seed};
}

void kiln_model_free(kiln_model* model) { delete model; }

int32_t kiln_model_n_vocab(const kiln_model* model) {
  return guarded<int32_t>("kiln_model_n_vocab", -1, [&] { return checked(model, "model").model->n_vocab(); });
}

int32_t kiln_model_n_ctx(const kiln_model* model) {
  return guarded<int32_t>("kiln_model_n_ctx", -1, [&] { return checked(model, "model").model->n_ctx(); });
}

int32_t kiln_token_bos(const kiln_model* model) {
  return guarded<int32_t>("kiln_token_bos", -1, [&] { return checked(model, "model").model->tokenizer().bos(); });
}

int kiln_token_is_eog(const kiln_model* model, int32_t token) {
  return guarded<int>("kiln_token_is_eog", -1, [&] {
    const kiln::Model& m = *checked(model, "model").model;
    if (token < 0 || token >= m.n_vocab())
      throw kiln::Error("token id " + std::to_string(token) + " is outside the vocabulary");
    return m.tokenizer().is_end_of_generation(token) ? 1 : 0;
  });
}

int32_t kiln_tokenize(const kiln_model* model, const char* text, size_t text_len, int add_special, int parse_special,
                      int32_t* tokens, int32_t capacity) {
  return guarded<int32_t>("kiln_tokenize", -1, [&] {
    const kiln::Model& m = *checked(model, "model").model;
    if (text_len > 0) non_null(text, "text");
    check_count(capacity, "capacity");
    // Tokenizing gives up as soon as the text is known to need more tokens
    // than both the array and the context hold (Tokenizer::encode_at_most).
    const size_t limit = std::max(size_t(capacity), size_t(m.n_ctx()));
    const std::optional<std::vector<int32_t>> ids = m.tokenizer().encode_at_most(
        limit, std::string_view(text ? text : "", text_len), add_special != 0, parse_special != 0);
    if (!ids)
      throw kiln::Error("the text is more than " + std::to_string(limit) + " tokens, more than the context (" +
                        std::to_string(m.n_ctx()) + ") and `capacity` hold");
    if (ids->size() <= size_t(capacity) && !ids->empty()) std::copy(ids->begin(), ids->end(), non_null(tokens, "tokens"));
    return static_cast<int32_t>(ids->size());
  });
}

int64_t kiln_detokenize(const kiln_model* model, const int32_t* tokens, int32_t n_tokens, char* text,
                        size_t capacity) {
  return guarded<int64_t>("kiln_detokenize", -1, [&] {
    const kiln::Model& m = *checked(model, "model").model;
    check_count(n_tokens, "n_tokens");
    if (n_tokens > 0) non_null(tokens, "tokens");
    kiln::Detokenizer detok(m.tokenizer());
    std::string out;
    for (int32_t i = 0; i < n_tokens; ++i) {
      if (tokens[i] < 0 || tokens[i] >= m.n_vocab())
        throw kiln::Error("token id " + std::to_string(tokens[i]) + " is outside the vocabulary");
      out += detok.push(tokens[i]);
    }
    out += detok.flush();
    if (out.size() < capacity) {
      std::memcpy(non_null(text, "text"), out.data(), out.size());
      text[out.size()] = '\0';
    }
    return static_cast<int64_t>(out.size());
  });
}

kiln_session* kiln_session_new(kiln_model* model, const kiln_sampling* sampling, int32_t n_threads) {
  return guarded<kiln_session*>("kiln_session_new", nullptr, [&] {
    const std::shared_ptr<const kiln::Model>& m = checked(model, "model").model;
    auto s = std::unique_ptr<kiln_session>(
        new kiln_session{m, kiln::Session(*m), kiln::Sampler(to_params(sampling), m->n_vocab()), false});
    s->session.sequence().set_threads(n_threads > 0 ? n_threads : all_hardware_threads());
    return s.release();
  });
}

void kiln_session_free(kiln_session* session) { delete session; }

int32_t kiln_session_set_threads(kiln_session* session, int32_t n_threads) {
  return guarded<int32_t>("kiln_session_set_threads", -1, [&] {
    kiln::Sequence& seq = checked(session, "session").session.sequence();
    seq.set_threads(n_threads > 0 ? n_threads : all_hardware_threads());
    return static_cast<int32_t>(seq.threads());
  });
}

int kiln_session_set_sampling(kiln_session* session, const kiln_sampling* sampling) {
  return guarded<int>("kiln_session_set_sampling", -1, [&] {
    kiln_session& s = checked(session, "session");
    s.sampler = kiln::Sampler(to_params(sampling), s.model->n_vocab());
    return 0;
  });
}

int kiln_session_reset(kiln_session* session) {
  return guarded<int>("kiln_session_reset", -1, [&] {
    kiln_session& s = checked(session, "session");
    s.session.reset();
    s.sampler.reset();
    s.has_logits = false;
    return 0;
  });
}

int32_t kiln_session_n_past(const kiln_session* session) {
  return guarded<int32_t>("kiln_session_n_past", -1, [&] { return checked(session, "session").session.n_past(); });
}

int kiln_feed(kiln_session* session, const int32_t* tokens, int32_t n_tokens) {
  return guarded<int>("kiln_feed", -1, [&] {
    kiln_session& s = checked(session, "session");
    check_count(n_tokens, "n_tokens");
    if (n_tokens > 0) non_null(tokens, "tokens");
    const int before = s.session.n_past();
    try {
      s.session.ingest({tokens, static_cast<size_t>(n_tokens)});
    } catch (...) {
      // Refused before anything changed (tokens that do not fit, none at
      // all, a bad id in the first batch): the logits are still the last
      // token's. Otherwise earlier batches went in, and no logits are theirs.
      if (s.session.n_past() != before) s.has_logits = false;
      throw;
    }
    s.has_logits = true;
    for (int32_t i = 0; i < n_tokens; ++i) s.sampler.accept(tokens[i]);
    return 0;
  });
}

const float* kiln_logits(const kiln_session* session) {
  return guarded<const float*>("kiln_logits", nullptr, [&] {
    const kiln_session& s = checked(session, "session");
    if (!s.has_logits) throw kiln::Error("no logits: nothing was fed since the session started or was reset");
    return s.session.logits().data();
  });
}

int32_t kiln_sample(kiln_session* session) {
  return guarded<int32_t>("kiln_sample", -1, [&] {
    kiln_session& s = checked(session, "session");
    if (!s.has_logits) throw kiln::Error("no logits to sample from: feed tokens first");
    return s.sampler.sample(s.session.logits().data());
  });
}

int32_t kiln_generate(kiln_session* session, const int32_t* prompt, int32_t n_prompt, int32_t n_predict,
                      kiln_token_callback on_token, void* user_data) {
  return guarded<int32_t>("kiln_generate", -1, [&] {
    kiln_session& s = checked(session, "session");
    check_count(n_prompt, "n_prompt");
    if (n_prompt > 0) non_null(prompt, "prompt");
    const std::span<const int32_t> tokens(prompt, static_cast<size_t>(n_prompt));
    // The pieces read as they do after the prompt (SentencePiece's leading
    // space belongs to the start of the text, not of the reply).
    kiln::Detokenizer detok(s.model->tokenizer());
    for (int32_t t : tokens) detok.push(t);
    s.has_logits = false;
    const kiln::GenerationStats stats = kiln::generate(s.session, tokens, n_predict, s.sampler, [&](int32_t t) {
      if (!on_token) return true;
      const std::string piece = detok.push(t);
      return on_token(user_data, t, piece.data(), piece.size()) != 0;
    });
    s.has_logits = true;
    return static_cast<int32_t>(stats.generated_tokens);
  });
}

int kiln_session_save(const kiln_session* session, const char* path) {
  return guarded<int>("kiln_session_save", -1, [&] {
    checked(session, "session").session.save_state(non_null(path, "path"));
    return 0;
  });
}

int kiln_session_load(kiln_session* session, const char* path) {
  return guarded<int>("kiln_session_load", -1, [&] {
    kiln_session& s = checked(session, "session");
    s.session.load_state(non_null(path, "path"));
    s.has_logits = false;
    return 0;
  });
}

}  // extern "C"
