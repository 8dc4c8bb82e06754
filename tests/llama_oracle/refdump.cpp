// refdump: llama.cpp's logits for a list of token ids, written as a kiln
// reference file (the format of ../shared/models/synthetic/*.ref.txt).
//
// It uses only the public C API of llama.cpp (llama.h, and from ggml.h, which
// llama.h includes, ggml_commit() and ggml_type_name()). It is not part of
// kiln's build: see README.md in this folder for how to build and run it.
//
// What it computes, in this order:
//   1. one llama_decode() of all prompt ids with logits at every position;
//   2. greedy generation (argmax, ties to the lowest id) continuing that
//      context, one token per llama_decode();
//   3. a fresh context fed the same prompt one token per llama_decode(), and
//      the max |logit difference| against 1.
// and prints 1, 3, 2 (the order of the existing reference files).

#include <llama.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#ifndef REFDUMP_LLAMA_COMMIT
#define REFDUMP_LLAMA_COMMIT "unknown"
#endif
#ifndef REFDUMP_LLAMA_DIRTY
#define REFDUMP_LLAMA_DIRTY 0
#endif
#ifndef REFDUMP_LLAMA_BUILD
#define REFDUMP_LLAMA_BUILD "unknown build settings"
#endif
#ifndef REFDUMP_COMPILER
#define REFDUMP_COMPILER "unknown compiler"
#endif

namespace {

[[noreturn]] void die(const char* fmt, ...) {
  std::fprintf(stderr, "refdump: ");
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fprintf(stderr, "\n");
  std::exit(1);
}

// ---------------------------------------------------------------- SHA-256 (FIPS 180-4)

class Sha256 {
 public:
  void update(const unsigned char* p, size_t n) {
    total_ += n;
    while (n > 0) {
      const size_t take = std::min(n, sizeof(block_) - used_);
      std::memcpy(block_ + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ == sizeof(block_)) {
        compress(block_);
        used_ = 0;
      }
    }
  }

  std::string hex() {
    const uint64_t bits = total_ * 8;
    const unsigned char one = 0x80, zero = 0;
    update(&one, 1);
    while (used_ != 56) update(&zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(len, 8);
    std::string out;
    char buf[9];
    for (uint32_t v : h_) {
      std::snprintf(buf, sizeof(buf), "%08x", v);
      out += buf;
    }
    return out;
  }

 private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress(const unsigned char* b) {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (uint32_t(b[4 * i]) << 24) | (uint32_t(b[4 * i + 1]) << 16) | (uint32_t(b[4 * i + 2]) << 8) |
             uint32_t(b[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], bb = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = bb;
      bb = a;
      a = t1 + t2;
    }
    h_[0] += a;
    h_[1] += bb;
    h_[2] += c;
    h_[3] += d;
    h_[4] += e;
    h_[5] += f;
    h_[6] += g;
    h_[7] += h;
  }

  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char block_[64] = {};
  size_t used_ = 0;
  uint64_t total_ = 0;
};

std::string file_sha256(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) die("cannot open %s: %s", path.c_str(), std::strerror(errno));
  Sha256 sha;
  std::vector<unsigned char> buf(1 << 20);
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), f)) > 0;) sha.update(buf.data(), n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) die("read error on %s", path.c_str());
  return sha.hex();
}

// ---------------------------------------------------------------- options

struct Options {
  std::string model;
  std::vector<llama_token> ids;
  std::string ids_source;  // "--ids" or the --ids-file path
  int threads = 1;
  int n_ctx = -1;  // -1: not given (the library default)
  int gen = 32;
  // K/V cache and flash attention: -1 = llama_context_default_params()
  int kv_type = -1;  // ggml_type
  int fa = -2;       // llama_flash_attn_type, -2 = default
  int swa_full = -1;  // -1 default, 0/1 forced
  bool no_repack = false;
  bool no_seq = false;
  std::string logits_at = "all";
  std::string out;
  bool verbose = false;
  std::string command;  // as echoed in the header
};

void usage() {
  std::fprintf(stderr,
               "usage: refdump --model F.gguf (--ids 1,716,235,... | --ids-file F) [--threads 1] [--n-ctx N]\n"
               "               [--gen 32] [--f32kv] [--kv f16|f32|bf16|q8_0] [--fa auto|on|off]\n"
               "               [--swa-full | --no-swa-full] [--no-repack] [--no-seq] [--logits-at all|last|p,q,...]\n"
               "               [--verbose] [-o out.txt]\n"
               "  --f32kv        K/V cache F32 and flash attention off (same as --kv f32 --fa off)\n"
               "  --swa-full     full-size K/V cache for sliding-window layers (the llama_context_default_params()\n"
               "                 value at the pinned commit); --no-swa-full keeps only the window (llama-cli's default)\n"
               "  --no-repack    model loaded with use_extra_bufts = false (no CPU_REPACK weight layouts)\n"
               "  --no-seq       skip the one-token-per-decode pass (no SEQ_* lines)\n"
               "  --logits-at    positions that get a LOGITS line (POS lines are always written for all)\n"
               "  --verbose      copy llama.cpp's log to stderr\n");
}

std::vector<llama_token> parse_ids(std::string text, const char* what) {
  for (char& c : text)
    if (c == ',') c = ' ';
  std::istringstream in(text);
  std::vector<llama_token> ids;
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(word.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < 0 || v > INT32_MAX) die("%s: not a token id: '%s'", what, word.c_str());
    ids.push_back(static_cast<llama_token>(v));
  }
  return ids;
}

int parse_int(const char* s, const char* what, int lo) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno != 0 || v < lo || v > INT32_MAX) die("%s: bad value '%s'", what, s);
  return static_cast<int>(v);
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Options parse_args(int argc, char** argv) {
  Options o;
  o.command = "refdump";
  for (int i = 1; i < argc; ++i) {
    o.command += " ";
    o.command += argv[i];
  }
  auto value = [&](int& i) -> const char* {
    if (i + 1 >= argc) die("%s needs a value", argv[i]);
    return argv[++i];
  };
  bool have_ids = false, have_ids_file = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--model" || a == "-m") {
      o.model = value(i);
    } else if (a == "--ids") {
      o.ids = parse_ids(value(i), "--ids");
      o.ids_source = "--ids";
      have_ids = true;
    } else if (a == "--ids-file") {
      const std::string path = value(i);
      std::ifstream f(path);
      if (!f) die("cannot read %s", path.c_str());
      std::stringstream ss;
      ss << f.rdbuf();
      o.ids = parse_ids(ss.str(), path.c_str());
      o.ids_source = path;
      have_ids_file = true;
    } else if (a == "--threads" || a == "-t") {
      o.threads = parse_int(value(i), "--threads", 1);
    } else if (a == "--n-ctx" || a == "-c") {
      o.n_ctx = parse_int(value(i), "--n-ctx", 0);
    } else if (a == "--gen") {
      o.gen = parse_int(value(i), "--gen", 0);
    } else if (a == "--f32kv") {
      o.kv_type = GGML_TYPE_F32;
      o.fa = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    } else if (a == "--kv") {
      const std::string v = value(i);
      if (v == "f32") o.kv_type = GGML_TYPE_F32;
      else if (v == "f16") o.kv_type = GGML_TYPE_F16;
      else if (v == "bf16") o.kv_type = GGML_TYPE_BF16;
      else if (v == "q8_0") o.kv_type = GGML_TYPE_Q8_0;
      else die("--kv: expected f32, f16, bf16 or q8_0, got '%s'", v.c_str());
    } else if (a == "--fa") {
      const std::string v = value(i);
      if (v == "auto") o.fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
      else if (v == "on") o.fa = LLAMA_FLASH_ATTN_TYPE_ENABLED;
      else if (v == "off") o.fa = LLAMA_FLASH_ATTN_TYPE_DISABLED;
      else die("--fa: expected auto, on or off, got '%s'", v.c_str());
    } else if (a == "--swa-full") {
      o.swa_full = 1;
    } else if (a == "--no-swa-full") {
      o.swa_full = 0;
    } else if (a == "--no-repack") {
      o.no_repack = true;
    } else if (a == "--no-seq") {
      o.no_seq = true;
    } else if (a == "--logits-at") {
      o.logits_at = value(i);
    } else if (a == "-o" || a == "--output") {
      o.out = value(i);
    } else if (a == "--verbose" || a == "-v") {
      o.verbose = true;
    } else if (a == "-h" || a == "--help") {
      usage();
      std::exit(0);
    } else {
      usage();
      die("unknown argument '%s'", a.c_str());
    }
  }
  if (o.model.empty()) {
    usage();
    die("--model is required");
  }
  if (have_ids == have_ids_file) {
    usage();
    die("give exactly one of --ids and --ids-file");
  }
  if (o.ids.empty()) die("no token ids given");
  return o;
}

// ---------------------------------------------------------------- llama.cpp's log

struct LogCapture {
  bool verbose = false;
  bool capturing = true;
  std::string partial;
  std::vector<std::pair<ggml_log_level, std::string>> lines;  // captured while `capturing`
  ggml_log_level last_level = GGML_LOG_LEVEL_INFO;
};

LogCapture g_log;

void log_callback(ggml_log_level level, const char* text, void*) {
  if (g_log.verbose) std::fputs(text, stderr);
  if (level != GGML_LOG_LEVEL_CONT) g_log.last_level = level;
  if (!g_log.capturing) return;
  g_log.partial += text;
  for (size_t nl; (nl = g_log.partial.find('\n')) != std::string::npos;) {
    g_log.lines.emplace_back(g_log.last_level, g_log.partial.substr(0, nl));
    g_log.partial.erase(0, nl + 1);
  }
}

// The log lines worth keeping in a reference's header: how llama.cpp resolved
// its defaults (batch sizes, flash attention, K/V cache, sliding window, weight
// repacking) and every warning or error.
bool header_worthy(ggml_log_level level, const std::string& line) {
  // Which weights are (not) repacked: logged at debug level.
  if (line.find("cannot be used with preferred buffer type") != std::string::npos) return true;
  if (level == GGML_LOG_LEVEL_DEBUG) return false;
  if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) return true;
  static const char* const keys[] = {
      "CPU_REPACK model buffer size",
      "print_info: n_swa ",
      "llama_context: n_ctx ",
      "llama_context: n_ctx_seq",
      "llama_context: n_batch",
      "llama_context: n_ubatch",
      "llama_context: flash_attn",
      "llama_kv_cache: size =",
      "SWA KV cache",
      "Flash Attention",
  };
  for (const char* k : keys)
    if (line.find(k) != std::string::npos) return true;
  return false;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  const size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// ---------------------------------------------------------------- numbers

// Indices of the k largest values, larger first; equal values: lower id first.
std::vector<int> top_k(const float* v, int n, int k) {
  std::vector<int> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, n);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [v](int a, int b) {
    if (v[a] != v[b]) return v[a] > v[b];
    return a < b;
  });
  idx.resize(k);
  return idx;
}

struct Pick {
  int argmax;
  float margin;  // top1 - top2 (float arithmetic)
  std::vector<int> top5;
};

Pick pick(const float* logits, int n_vocab) {
  Pick p;
  p.top5 = top_k(logits, n_vocab, 5);
  p.argmax = p.top5[0];
  p.margin = p.top5.size() > 1 ? logits[p.top5[0]] - logits[p.top5[1]] : 0.0f;
  return p;
}

void append_f(std::string& s, const char* fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  if (n < 0) die("formatting error");
  if (static_cast<size_t>(n) < sizeof(buf)) {
    s.append(buf, n);
  } else {
    std::vector<char> big(n + 1);
    va_start(args, fmt);
    std::vsnprintf(big.data(), big.size(), fmt, args);
    va_end(args);
    s.append(big.data(), n);
  }
}

std::string pick_text(const Pick& p, const float* logits) {
  std::string s;
  append_f(s, "margin=%.9g top5:", static_cast<double>(p.margin));
  for (int id : p.top5) append_f(s, " %d:%.9g", id, static_cast<double>(logits[id]));
  return s;
}

// The CPU, from /proc/cpuinfo (Linux): its model name and the flags that
// change which code ggml compiles with GGML_NATIVE (F16 arithmetic, AMX).
std::string cpu_description() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, name = "unknown", flags;
  while (std::getline(f, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    if (key == "model name" && name == "unknown") name = trim(line.substr(colon + 1));
    if (key == "flags" && flags.empty()) flags = " " + trim(line.substr(colon + 1)) + " ";
  }
  if (flags.empty()) return name;
  auto has = [&](const char* flag) { return flags.find(std::string(" ") + flag + " ") != std::string::npos; };
  return name + " (/proc/cpuinfo flags: avx512f " + (has("avx512f") ? "yes" : "no") + ", avx512_fp16 " +
         (has("avx512_fp16") ? "yes" : "no") + ", amx_tile " + (has("amx_tile") ? "yes" : "no") + ")";
}

// ---------------------------------------------------------------- llama.cpp calls

llama_context* new_context(llama_model* model, const llama_context_params& cp) {
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) die("llama_init_from_model failed (see llama.cpp's log; --verbose shows it)");
  return ctx;
}

// Decodes ids at positions pos0.. in one llama_decode call on sequence 0;
// logits are requested at every position when all_logits, else at the last.
void decode(llama_context* ctx, const llama_token* ids, int n, int pos0, bool all_logits) {
  llama_batch batch = llama_batch_init(n, 0, 1);
  batch.n_tokens = n;
  for (int i = 0; i < n; ++i) {
    batch.token[i] = ids[i];
    batch.pos[i] = pos0 + i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = (all_logits || i == n - 1) ? 1 : 0;
  }
  const int32_t rc = llama_decode(ctx, batch);
  llama_batch_free(batch);
  if (rc != 0) die("llama_decode returned %d (n_tokens %d at position %d)", rc, n, pos0);
}

const float* logits_at(llama_context* ctx, int i) {
  const float* l = llama_get_logits_ith(ctx, i);
  if (!l) die("llama_get_logits_ith(%d) returned NULL", i);
  return l;
}

std::vector<bool> logits_positions(const std::string& spec, int n) {
  std::vector<bool> want(n, false);
  if (spec == "all") {
    std::fill(want.begin(), want.end(), true);
  } else if (spec == "last") {
    want[n - 1] = true;
  } else {
    for (llama_token p : parse_ids(spec, "--logits-at")) {
      if (p >= n) die("--logits-at: position %d is past the prompt (%d ids)", p, n);
      want[p] = true;
    }
  }
  return want;
}

const char* fa_name(int fa) {
  return llama_flash_attn_type_name(static_cast<llama_flash_attn_type>(fa));
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_args(argc, argv);
  g_log.verbose = opt.verbose;

  const std::string sha = file_sha256(opt.model);

  llama_log_set(log_callback, nullptr);
  llama_backend_init();

  llama_model_params mp = llama_model_default_params();
  if (opt.no_repack) mp.use_extra_bufts = false;
  llama_model* model = llama_model_load_from_file(opt.model.c_str(), mp);
  if (!model) die("cannot load %s (see llama.cpp's log; --verbose shows it)", opt.model.c_str());
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  const int n_prompt = static_cast<int>(opt.ids.size());
  for (llama_token id : opt.ids)
    if (id >= n_vocab) die("token id %d is outside the vocab (%d tokens)", id, n_vocab);

  llama_context_params cp = llama_context_default_params();
  const llama_context_params defaults = cp;
  if (opt.n_ctx >= 0) cp.n_ctx = static_cast<uint32_t>(opt.n_ctx);
  cp.n_threads = opt.threads;
  cp.n_threads_batch = opt.threads;
  if (opt.kv_type >= 0) cp.type_k = cp.type_v = static_cast<ggml_type>(opt.kv_type);
  if (opt.fa != -2) cp.flash_attn_type = static_cast<llama_flash_attn_type>(opt.fa);
  if (opt.swa_full >= 0) cp.swa_full = opt.swa_full != 0;

  // ---- section 1: the whole prompt in one llama_decode call
  llama_context* ctx = new_context(model, cp);
  const uint32_t ctx_n_ctx = llama_n_ctx(ctx), ctx_n_batch = llama_n_batch(ctx), ctx_n_ubatch = llama_n_ubatch(ctx);
  const int needed = n_prompt + std::max(opt.gen - 1, 0);
  if (static_cast<int>(ctx_n_ctx) < needed)
    die("the context holds %u positions; the prompt (%d) and %d generated ids need %d: raise --n-ctx", ctx_n_ctx,
        n_prompt, opt.gen, needed);
  if (static_cast<int>(ctx_n_batch) < n_prompt)
    die("n_batch is %u, below the prompt's %d ids: one llama_decode call cannot take them (raise --n-ctx)",
        ctx_n_batch, n_prompt);

  decode(ctx, opt.ids.data(), n_prompt, 0, true);
  std::vector<float> batch_logits(static_cast<size_t>(n_prompt) * n_vocab);
  for (int p = 0; p < n_prompt; ++p)
    std::memcpy(&batch_logits[static_cast<size_t>(p) * n_vocab], logits_at(ctx, p), sizeof(float) * n_vocab);
  // The header keeps the log of model loading, the first context and its first decode.
  g_log.capturing = false;

  // ---- greedy generation continuing that context
  std::string gen_text, gen_ids;
  float gen_min_margin = INFINITY;
  {
    std::vector<float> cur(batch_logits.end() - n_vocab, batch_logits.end());
    for (int s = 0; s < opt.gen; ++s) {
      const Pick p = pick(cur.data(), n_vocab);
      const int pos = n_prompt - 1 + s;
      append_f(gen_text, "GEN %d pos=%d next=%d %s\n", s, pos, p.argmax, pick_text(p, cur.data()).c_str());
      append_f(gen_ids, " %d", p.argmax);
      gen_min_margin = std::min(gen_min_margin, p.margin);
      if (s + 1 < opt.gen) {
        const llama_token next = p.argmax;
        decode(ctx, &next, 1, pos + 1, false);
        std::memcpy(cur.data(), logits_at(ctx, -1), sizeof(float) * n_vocab);
      }
    }
  }
  llama_free(ctx);

  // ---- section 2: the same ids one per llama_decode call, in a fresh context
  std::vector<float> seq_maxabs_pos(n_prompt, 0.0f);
  int seq_argmax_match = 0;
  if (!opt.no_seq) {
    ctx = new_context(model, cp);
    for (int p = 0; p < n_prompt; ++p) {
      decode(ctx, &opt.ids[p], 1, p, true);
      const float* l = logits_at(ctx, -1);
      const float* b = &batch_logits[static_cast<size_t>(p) * n_vocab];
      float m = 0.0f;
      for (int v = 0; v < n_vocab; ++v) m = std::max(m, std::fabs(l[v] - b[v]));
      seq_maxabs_pos[p] = m;
      if (pick(l, n_vocab).argmax == pick(b, n_vocab).argmax) ++seq_argmax_match;
    }
    llama_free(ctx);
  }

  // ---- what llama.cpp resolved, from its log
  std::vector<std::string> kept;
  std::string fa_resolved;
  for (const auto& [level, raw] : g_log.lines) {
    const std::string line = trim(raw);
    if (line.empty() || !header_worthy(level, line)) continue;
    kept.push_back(line);
    if (line.find("Flash Attention enabled") != std::string::npos) fa_resolved = "enabled";
    if (line.find("Flash Attention not supported") != std::string::npos) fa_resolved = "disabled";
  }

  // ---- output
  std::string o;
  const std::string out_name = opt.out.empty() ? std::string("refdump output") : basename_of(opt.out);
  const std::string model_name = basename_of(opt.model);
  char desc[256];
  llama_model_desc(model, desc, sizeof(desc));
  const int n_swa = llama_model_n_swa(model);
  const std::string kv_name = ggml_type_name(cp.type_k);
  const bool default_kv = cp.type_k == defaults.type_k && cp.type_v == defaults.type_v;
  const bool default_fa = cp.flash_attn_type == defaults.flash_attn_type;
  std::string kv_upper = kv_name;
  for (char& c : kv_upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));

  append_f(o, "# %s: reference outputs of llama.cpp for %s\n", out_name.c_str(), model_name.c_str());
  append_f(o, "# model sha256: %s\n", sha.c_str());
  append_f(o, "# llama.cpp   : commit %s%s (ggml_commit() \"%s\"); %s.\n", REFDUMP_LLAMA_COMMIT,
           REFDUMP_LLAMA_DIRTY ? " with local changes to src/include/ggml" : "", ggml_commit(), REFDUMP_LLAMA_BUILD);
  append_f(o, "#               Linked against its libllama by refdump (kiln tests/llama_oracle, %s), which uses only\n",
           REFDUMP_COMPILER);
  o += "#               the public llama.h API.\n";
  append_f(o, "# cpu         : %s\n", cpu_description().c_str());
  append_f(o, "# command     : %s\n", opt.command.c_str());
  append_f(o, "# threads     : %d (n_threads = n_threads_batch = %d)\n", opt.threads, opt.threads);
  {
    std::string what;
    if (default_kv && default_fa) {
      what = "llama_context_default_params()";
      what += opt.n_ctx >= 0 ? " except n_ctx = " + std::to_string(opt.n_ctx) : std::string();
      what += ": K/V cache " + kv_upper + ", flash attention '" + fa_name(cp.flash_attn_type) + "'";
      if (cp.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_AUTO)
        what += " (resolved to " + (fa_resolved.empty() ? std::string("?") : fa_resolved) + " on this CPU)";
    } else {
      what = "DIAGNOSTIC VARIANT: default params";
      what += opt.n_ctx >= 0 ? " except n_ctx = " + std::to_string(opt.n_ctx) : std::string();
      what += ", K/V cache " + kv_upper + " and flash attention " + fa_name(cp.flash_attn_type);
      if (cp.type_k == GGML_TYPE_F32 && cp.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_DISABLED)
        what += " (attention fully in F32)";
    }
    append_f(o, "# context     : %s,\n", what.c_str());
    append_f(o, "#               resolved n_ctx %u, n_batch %u, n_ubatch %u; swa_full %s (model n_swa %d).\n",
             ctx_n_ctx, ctx_n_batch, ctx_n_ubatch, cp.swa_full ? "true" : "false", n_swa);
    o += "#               Ids are fed as given (no BOS/EOS added, no tokenizer involved)";
    if (opt.ids_source != "--ids") append_f(o, "; ids read from %s", opt.ids_source.c_str());
    o += ".\n";
  }
  o += "# format      : PROMPT line; per prompt position p: 'POS p tok=<input id> argmax=<id> margin=<top1-top2>\n"
       "#               top5: id:logit x5' then 'LOGITS p' + all n_vocab logits (%.9g, float32 round-trip);\n"
       "#               SEQ_* lines: same ids fed one token per llama_decode, max |logit diff| vs the batch;\n"
       "#               GEN lines: greedy continuation (argmax, ties -> lowest id) of the batch context;\n";
  append_f(o, "#               GEN_IDS: the %d generated ids.\n", opt.gen);
  if (opt.logits_at != "all") append_f(o, "#               LOGITS lines only at positions: %s\n", opt.logits_at.c_str());
  o += "#\n";
  append_f(o, "# model_desc: %s, n_params %llu, n_vocab %d\n", desc,
           static_cast<unsigned long long>(llama_model_n_params(model)), n_vocab);
  append_f(o, "# system_info: %s\n", llama_print_system_info());
  append_f(o,
           "# context: n_ctx=%u n_batch=%u n_ubatch=%u n_threads=%d n_threads_batch=%d type_k=%s type_v=%s "
           "flash_attn_type=%s swa_full=%s\n",
           cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_threads, cp.n_threads_batch, ggml_type_name(cp.type_k),
           ggml_type_name(cp.type_v), fa_name(cp.flash_attn_type), cp.swa_full ? "true" : "false");
  if (opt.no_repack) o += "# model params: use_extra_bufts = false (--no-repack)\n";
  o += "# llama.cpp log lines (first context):\n";
  for (const std::string& line : kept) append_f(o, "#   %s\n", line.c_str());

  append_f(o, "PROMPT n=%d ids:", n_prompt);
  for (llama_token id : opt.ids) append_f(o, " %d", id);
  o += "\n# section 1: whole prompt decoded in one llama_decode call, logits requested at every position\n";
  const std::vector<bool> want_logits = logits_positions(opt.logits_at, n_prompt);
  for (int p = 0; p < n_prompt; ++p) {
    const float* l = &batch_logits[static_cast<size_t>(p) * n_vocab];
    const Pick pk = pick(l, n_vocab);
    append_f(o, "POS %d tok=%d argmax=%d %s\n", p, opt.ids[p], pk.argmax, pick_text(pk, l).c_str());
    if (want_logits[p]) {
      append_f(o, "LOGITS %d", p);
      for (int v = 0; v < n_vocab; ++v) append_f(o, " %.9g", static_cast<double>(l[v]));
      o += "\n";
    }
  }
  if (!opt.no_seq) {
    o += "# section 2: same ids fed one token per llama_decode call (fresh context); max |logit diff| vs section 1\n";
    append_f(o, "SEQ_MAXABS %.9g\n",
             static_cast<double>(*std::max_element(seq_maxabs_pos.begin(), seq_maxabs_pos.end())));
    o += "SEQ_MAXABS_PER_POS";
    for (float m : seq_maxabs_pos) append_f(o, " %.3g", static_cast<double>(m));
    append_f(o, "\nSEQ_ARGMAX_MATCH %d/%d\n", seq_argmax_match, n_prompt);
  }
  o += "# section 3: greedy generation continuing the context of section 1 (argmax, ties -> lowest id);\n"
       "#   GEN <step> pos=<position whose logits were used> next=<id> margin=<top1-top2> top5: ...\n";
  o += gen_text;
  append_f(o, "GEN_IDS%s\n", gen_ids.c_str());
  if (opt.gen > 0) append_f(o, "GEN_MIN_MARGIN %.9g\n", static_cast<double>(gen_min_margin));

  llama_model_free(model);
  llama_backend_free();

  if (opt.out.empty()) {
    std::fwrite(o.data(), 1, o.size(), stdout);
    std::fflush(stdout);
  } else {
    std::FILE* f = std::fopen(opt.out.c_str(), "wb");
    if (!f) die("cannot write %s: %s", opt.out.c_str(), std::strerror(errno));
    const bool ok = std::fwrite(o.data(), 1, o.size(), f) == o.size();
    if (std::fclose(f) != 0 || !ok) die("write error on %s", opt.out.c_str());
  }
  return 0;
}
