/* kiln.h: the C interface of a model compiled by kiln.
 *
 * kiln_add_model(<name> ...) builds lib<name>.so, which exports exactly the
 * functions below and nothing else. C99; no C++ types cross this boundary.
 *
 * Handles are opaque. A kiln_model holds the weights, read only and shared by
 * all the sessions made from it; a kiln_session holds one conversation: its
 * KV cache, position, sampler and threads. Sessions of one model may be used
 * at the same time from different threads, one thread per session at a time;
 * a model may be freed while sessions made from it live (they keep it).
 *
 * Errors: a function that can fail returns NULL or a negative number, and
 * kiln_last_error() then says why in one line. No function throws, aborts or
 * exits on bad input.
 *
 * The library is compiled for an instruction set (-march). Loading it runs
 * none of its code; on a CPU without what it was compiled for,
 * kiln_model_load returns NULL and kiln_last_error() names the missing
 * extensions (no other function may be called then).
 */
#ifndef KILN_H
#define KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

typedef struct kiln_model kiln_model;
typedef struct kiln_session kiln_session;

/* The sampling parameters of the command-line program (its flags in
 * brackets), llama.cpp's chain: repetition penalty, then greedy when
 * temperature <= 0, else top-k, top-p, min-p, temperature and a seeded draw. */
typedef struct kiln_sampling {
  float temperature;     /* --temp; <= 0: greedy */
  int32_t top_k;         /* --top-k; <= 0: off */
  float top_p;           /* --top-p; 1: off */
  float min_p;           /* --min-p; 0: off */
  float repeat_penalty;  /* --repeat-penalty; 1: off */
  int32_t repeat_last_n; /* --repeat-last-n */
  uint64_t seed;         /* --seed; 0xFFFFFFFF: a random seed */
} kiln_sampling;

/* Called with each generated token and the text it completes (UTF-8, maybe
 * empty while a character is unfinished; not NUL-terminated). Returns
 * nonzero to go on, 0 to stop generating. */
typedef int (*kiln_token_callback)(void* user_data, int32_t token, const char* piece, size_t piece_len);

/* Why the last failing call on this thread failed ("" if none has). Valid
 * until the next failing call on the same thread. */
KILN_API const char* kiln_last_error(void);

/* The command-line program's defaults. */
KILN_API kiln_sampling kiln_sampling_default(void);

/* Loads the model this library was compiled for. gguf_path: a GGUF holding
 * it (checked to be that model), or NULL for its default: the weights built
 * into the library (kiln_add_model ... EMBED), else the GGUF found through
 * $KILN_MODEL_PATH, next to the program, or where it was at build time.
 * NULL on failure. */
KILN_API kiln_model* kiln_model_load(const char* gguf_path);
KILN_API void kiln_model_free(kiln_model* model);

KILN_API int32_t kiln_model_n_vocab(const kiln_model* model);
KILN_API int32_t kiln_model_n_ctx(const kiln_model* model); /* positions a session holds */
KILN_API int32_t kiln_token_bos(const kiln_model* model);   /* -1: none */
/* 1 if generation stops at `token` (EOS, EOT, ...), 0 if not, -1 on error. */
KILN_API int kiln_token_is_eog(const kiln_model* model, int32_t token);

/* Encodes text_len bytes of text. add_special: BOS/EOS as the model asks;
 * parse_special: control tokens spelled out in the text become those tokens
 * (the command-line program's prompts do both). Returns the number of tokens,
 * having written them only if it is at most `capacity` (call again with a
 * larger array otherwise), or -1. A text that needs more tokens than both
 * `capacity` and the context hold is -1 too, found out early: without
 * reading it if its length proves it, else without tokenizing more than that
 * (to tokenize a text longer than the context, pass a large enough array). */
KILN_API int32_t kiln_tokenize(const kiln_model* model, const char* text, size_t text_len, int add_special,
                               int parse_special, int32_t* tokens, int32_t capacity);

/* The text of n_tokens tokens, as the command-line program prints it.
 * Returns its length in bytes; if that is less than `capacity` the text and
 * a terminating NUL are written (call again with a larger buffer otherwise).
 * -1 on error. */
KILN_API int64_t kiln_detokenize(const kiln_model* model, const int32_t* tokens, int32_t n_tokens, char* text,
                                 size_t capacity);

/* A new session: allocates its KV cache and scratch once. sampling: NULL for
 * kiln_sampling_default(). n_threads: the threads its forward passes may use
 * (<= 0: all hardware threads). NULL on failure. */
KILN_API kiln_session* kiln_session_new(kiln_model* model, const kiln_sampling* sampling, int32_t n_threads);
KILN_API void kiln_session_free(kiln_session* session);

/* Returns the threads the session will use (at most n_threads), or -1. */
KILN_API int32_t kiln_session_set_threads(kiln_session* session, int32_t n_threads);
/* Replaces the sampler (its recorded tokens are forgotten). 0 or -1. */
KILN_API int kiln_session_set_sampling(kiln_session* session, const kiln_sampling* sampling);
/* Forgets the context and the sampler's recorded tokens. 0 or -1. */
KILN_API int kiln_session_reset(kiln_session* session);
/* Tokens in the session's context, or -1. */
KILN_API int32_t kiln_session_n_past(const kiln_session* session);

/* Appends tokens to the context and computes the logits of the last one;
 * the sampler records them (repetition penalty). 0 or -1. Tokens that do not
 * fit in the context are refused before anything changes: kiln_logits and
 * kiln_sample go on as before. After a failure part-way (a bad token id in
 * a later batch) the context holds the batches before it, and no logits. */
KILN_API int kiln_feed(kiln_session* session, const int32_t* tokens, int32_t n_tokens);
/* The n_vocab logits of the last token fed, valid until the session next
 * changes; NULL if nothing was fed since the last reset. */
KILN_API const float* kiln_logits(const kiln_session* session);
/* A token drawn from kiln_logits() with the session's sampler (not fed, not
 * recorded: kiln_feed it to go on), or -1. */
KILN_API int32_t kiln_sample(kiln_session* session);

/* What the command-line program does with a prompt: makes the n_prompt
 * tokens the context (a prefix the session already holds is not computed
 * again), then samples up to n_predict tokens (< 0: until end of generation
 * or a full context), feeding each and calling on_token (may be NULL) until
 * it returns 0. Returns the number of tokens generated, or -1. */
KILN_API int32_t kiln_generate(kiln_session* session, const int32_t* prompt, int32_t n_prompt, int32_t n_predict,
                               kiln_token_callback on_token, void* user_data);

/* The session's context (tokens and KV cache) to and from a state file,
 * written atomically; a file of another model is refused. 0 or -1 (a failed
 * load leaves the session as it was). */
KILN_API int kiln_session_save(const kiln_session* session, const char* path);
KILN_API int kiln_session_load(kiln_session* session, const char* path);

#ifdef __cplusplus
}
#endif

#endif /* KILN_H */
