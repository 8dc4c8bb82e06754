// Every setting the programs of a compiled model take from their command
// line, with its default. One struct for the four programs, as there is one
// option table (option_table.cpp): a flag two programs share is stored in one
// place, and --help shows the defaults written here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "engine/session/sampler.hpp"

namespace kiln {

// The programs kiln_add_model makes; an option names the ones that take it
// as a set of these bits.
enum Program : unsigned { kCli = 1, kServer = 2, kBench = 4, kPerplexity = 8 };

struct Options {
  bool help = false;               // -h
  std::string model_path;          // -m; empty: the program's default (default_model_text)
  int threads = 0;                 // -t (but the bench's); 0: every hardware thread
  std::string chat_template_file;  // --chat-template-file: instead of the GGUF's template

  // <model>
  std::string prompt;  // -p
  // -f; read by the program once the model is loaded (only as much as its
  // context could hold). The later of -p and -f counts.
  std::string prompt_file;
  std::vector<int32_t> prompt_ids;  // --prompt-ids: token ids fed as they are (no BOS added)
  std::string logits_out;           // --logits-out: every prompt position's logits go here
  int n_predict = -1;               // -n; -1: until end of generation or a full context
  SamplerParams sampling;
  std::string prompt_cache;  // --prompt-cache; empty: none
  bool prompt_cache_ro = false;
  bool display_prompt = true;
  bool interactive = false;   // -i: after the prompt, each line read from stdin continues the text
  bool conversation = false;  // -cnv: chat with the model's template, a user turn per line of stdin
  std::string system_prompt;  // -sys: the conversation's system message
  // What the generated text must follow (at most one): GBNF text or file, a
  // JSON schema or its file.
  std::string grammar;           // --grammar
  std::string grammar_file;      // --grammar-file
  std::string json_schema;       // -j
  std::string json_schema_file;  // -jf

  // <model>-server, with llama-server's defaults
  std::string host = "127.0.0.1";
  int port = 8080;                 // 0: any free port (the one taken is printed)
  int parallel = 1;                // -np: slots (requests admitted at once)
  std::string api_key;             // requests must carry it (Authorization: Bearer ...)
  std::string alias;               // -a: the model's id in responses; else the program's model name
  long long cache_ram_mib = 8192;  // -cram: the prefix cache's budget in MiB; -1 no limit, 0 none
  bool metrics = false;            // --metrics: GET /metrics in Prometheus' text format
  std::string reasoning_format = "auto";  // what chats that name none do with the model's reasoning
  int reasoning_budget = -1;              // -1: unrestricted; 0: no thinking (enable_thinking false); N: tokens of it
  std::string reasoning_budget_message;   // written before the close marker when the budget ends the reasoning
  std::string chat_template_kwargs;       // a JSON object: more variables for every chat's template
  float request_timeout = 30;      // seconds to receive a request's head and body, from its first byte
  int max_connections = 256;       // connections open at once; beyond: 503
  int max_waiting = 32;            // completions waiting for a slot; beyond: 503 with Retry-After

  // <model>-bench, with llama-bench's defaults
  std::vector<int> prompt_sizes = {512};  // -p
  std::vector<int> gen_sizes = {128};     // -n
  std::vector<int> depths = {0};          // -d: positions already cached before each test
  std::vector<int> thread_counts;         // -t; empty: every hardware thread
  int repetitions = 5;                    // -r
  bool json = false;                      // -o json
  bool probe = false;
  std::string limits_path;    // --machine; empty: the default cache, if it exists
  int prefix_tokens = 0;      // --prefix N: time to first token with part of an N-token prompt cached
  bool load = false;          // --load: start to first token in fresh processes, instead of pp/tg
  bool drop_caches = false;   // --drop-caches: ... with the page cache dropped before each (cold)
  bool load_child = false;    // one process measured by --load (kLoadChildFlag)

  // <model>-perplexity
  std::string text_path;  // -f
  int n_ctx = 0;          // -c; 0: the context the program was compiled for
  int chunks = -1;        // --chunks; -1: as many as the text holds
};

// Every hardware thread (at least one): what -t 0 and the bench's default mean.
inline int hardware_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// The threads -t asks for.
inline int wanted_threads(const Options& o) { return o.threads > 0 ? o.threads : hardware_threads(); }

}  // namespace kiln
