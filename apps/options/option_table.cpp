#include "apps/options/option_table.hpp"

#include <climits>
#include <cstdio>
#include <type_traits>

#include "apps/cli.hpp"
#include "apps/load_bench.hpp"
#include "apps/machine_probe.hpp"
#include "engine/error/error.hpp"

namespace kiln {

namespace {

constexpr unsigned kEveryProgram = kCli | kServer | kBench | kPerplexity;

// A default as --help writes it; empty values show none.
std::string shown(const std::string& v) { return v; }
std::string shown(long long v) { return std::to_string(v); }
std::string shown(int v) { return std::to_string(v); }
std::string shown(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}
std::string shown(const std::vector<int>& v) {
  std::string text;
  for (int x : v) text.append(text.empty() ? "" : ",").append(std::to_string(x));
  return text;
}

// One of the sampler's fields, as a field of Options.
template <class T>
auto sampling(T SamplerParams::*field) {
  return [field](Options& o) -> T& { return o.sampling.*field; };
}

// The type of the field `field` (a member pointer or an accessor) names.
template <class Field>
using FieldType = std::remove_cvref_t<std::invoke_result_t<Field, Options&>>;

// A flag whose value `read` turns into one field of Options; --help shows
// that field's default.
template <class Field, class Read>
Option stored(std::vector<std::string> names, std::string value_name, unsigned programs, std::string help, Field field,
              Read read) {
  return {std::move(names), std::move(value_name), programs, std::move(help),
          [field, read](Options& o, const FlagValue& v) { std::invoke(field, o) = read(v); },
          [field](const ModelEntry&) {
            Options defaults;
            return shown(std::invoke(field, defaults));
          }};
}

template <class Field>
Option integer(std::vector<std::string> names, std::string value_name, unsigned programs, std::string help,
               Field field, long long min = INT_MIN, long long max = INT_MAX) {
  return stored(std::move(names), std::move(value_name), programs, std::move(help), field,
                [min, max](const FlagValue& v) { return static_cast<FieldType<Field>>(v.integer(min, max)); });
}

template <class Field>
Option number(std::vector<std::string> names, std::string value_name, unsigned programs, std::string help,
              Field field) {
  return stored(std::move(names), std::move(value_name), programs, std::move(help), field,
                [](const FlagValue& v) { return v.number(); });
}

template <class Field>
Option text(std::vector<std::string> names, std::string value_name, unsigned programs, std::string help, Field field) {
  return stored(std::move(names), std::move(value_name), programs, std::move(help), field,
                [](const FlagValue& v) { return v.text; });
}

// A flag without a value that sets a switch of Options to `to`.
Option setting(std::vector<std::string> names, unsigned programs, std::string help, bool Options::*field,
               bool to = true) {
  return {std::move(names), "", programs, std::move(help), [field, to](Options& o, const FlagValue&) { o.*field = to; },
          nullptr};
}

std::vector<Option> make_table() {
  return {
      setting({"-h", "--help"}, kEveryProgram, "show this help", &Options::help),
      {{"-m", "--model"}, "FILE", kEveryProgram, "GGUF with this model's weights",
       [](Options& o, const FlagValue& v) { o.model_path = v.text; }, default_model_text},
      integer({"-t", "--threads"}, "N", kCli | kServer | kPerplexity, "threads to use; 0: all hardware threads",
              &Options::threads, 0, 1 << 16),

      // <model>
      {{"-p", "--prompt"}, "TEXT", kCli, "prompt to start from; empty: BOS only",
       [](Options& o, const FlagValue& v) { o.prompt = v.text, o.prompt_file.clear(); }, nullptr},
      {{"-f", "--file"}, "FILE", kCli, "read the prompt from a file",
       [](Options& o, const FlagValue& v) { o.prompt_file = v.text, o.prompt.clear(); }, nullptr},
      stored({"--prompt-ids"}, "IDS", kCli, "the prompt as token ids, e.g. \"1 716 235\" (fed as given, no BOS added)",
             &Options::prompt_ids, [](const FlagValue& v) { return v.token_ids(); }),
      text({"--logits-out"}, "FILE", kCli,
           "write the logits of every prompt position (a line each, all of the vocabulary)", &Options::logits_out),
      integer({"-n", "--n-predict"}, "N", kCli, "tokens to generate; -1: until end of text or a full context",
              &Options::n_predict, -1),
      {{"-s", "--seed"}, "N", kCli, "sampling seed; -1: random",
       [](Options& o, const FlagValue& v) {
         const long long seed = v.integer(-1LL, LLONG_MAX);
         o.sampling.seed = seed < 0 ? kRandomSeed : static_cast<uint64_t>(seed);
       },
       [](const ModelEntry&) {
         const uint64_t seed = SamplerParams{}.seed;
         return seed == kRandomSeed ? std::string("-1") : std::to_string(seed);
       }},
      number({"--temp"}, "T", kCli, "temperature; 0: greedy", sampling(&SamplerParams::temperature)),
      integer({"--top-k"}, "N", kCli, "top-k sampling; 0: off", sampling(&SamplerParams::top_k)),
      number({"--top-p"}, "P", kCli, "top-p sampling; 1: off", sampling(&SamplerParams::top_p)),
      number({"--min-p"}, "P", kCli, "min-p sampling; 0: off", sampling(&SamplerParams::min_p)),
      number({"--repeat-penalty"}, "X", kCli, "penalize repeated tokens; 1: off",
             sampling(&SamplerParams::repeat_penalty)),
      number({"--presence-penalty"}, "X", kCli,
             "lower the logit of every token among the last --repeat-last-n by X (OpenAI's); 0: off",
             sampling(&SamplerParams::presence_penalty)),
      number({"--frequency-penalty"}, "X", kCli,
             "lower the logit of every token among the last --repeat-last-n by X per occurrence (OpenAI's); 0: off",
             sampling(&SamplerParams::frequency_penalty)),
      integer({"--repeat-last-n"}, "N", kCli, "tokens the penalties look back at",
              sampling(&SamplerParams::repeat_last_n)),
      text({"--prompt-cache"}, "FILE", kCli,
           "keep the prompt's KV state in FILE: a later run whose prompt starts the same way computes only the rest",
           &Options::prompt_cache),
      setting({"--prompt-cache-ro"}, kCli, "use the --prompt-cache file but never write it", &Options::prompt_cache_ro),
      setting({"--no-display-prompt"}, kCli, "do not print the prompt before the generated text",
              &Options::display_prompt, false),
      setting({"-i", "--interactive"}, kCli,
              "then read lines from stdin; each is appended to the text so far and generation continues (only the "
              "new tokens are computed)",
              &Options::interactive),
      setting({"-cnv", "--conversation"}, kCli,
              "chat: each line of stdin is a user turn, rendered with the model's chat template (-p, if given, is "
              "the first turn); replies end at the model's end-of-turn token, and each turn computes only its new "
              "tokens",
              &Options::conversation),
      text({"-sys", "--system-prompt"}, "TEXT", kCli, "the conversation's system message (with -cnv)",
           &Options::system_prompt),
      text({"--grammar"}, "GBNF", kCli,
           "the generated text must follow this grammar (llama.cpp's GBNF); generation stops where it ends",
           &Options::grammar),
      text({"--grammar-file"}, "FILE", kCli, "--grammar, read from FILE", &Options::grammar_file),
      text({"-j", "--json-schema"}, "SCHEMA", kCli,
           "the generated text must be JSON that this JSON schema allows, e.g. '{\"type\": \"object\"}' or '{}'",
           &Options::json_schema),
      text({"-jf", "--json-schema-file"}, "FILE", kCli, "--json-schema, read from FILE", &Options::json_schema_file),
      text({"--chat-template-file"}, "FILE", kCli | kServer,
           "a Jinja chat template for conversations instead of the GGUF's (ChatML where the GGUF has none)",
           &Options::chat_template_file),

      // <model>-server
      stored({"--host"}, "HOST", kServer, "address to listen on", &Options::host, [](const FlagValue& v) {
        if (v.text.empty()) throw Error(v.flag + ": empty");
        return v.text;
      }),
      integer({"--port"}, "N", kServer, "port to listen on; 0: any free one", &Options::port, 0, 65535),
      integer({"-np", "--parallel"}, "N", kServer,
              "slots: requests served at once, each with a KV cache of its own, their next tokens computed in one "
              "batched pass",
              &Options::parallel, 1, 256),
      text({"--api-key"}, "KEY", kServer, "answer 401 to requests without 'Authorization: Bearer KEY'",
           &Options::api_key),
      {{"-a", "--alias"}, "NAME", kServer, "the model's id in responses",
       [](Options& o, const FlagValue& v) {
         if (v.text.find_first_of("\r\n") != std::string::npos) throw Error(v.flag + ": one line only");
         o.alias = v.text;
       },
       [](const ModelEntry& model) { return std::string(model.name); }},
      integer({"-cram", "--cache-ram"}, "N", kServer,
              "MiB for the prefix cache: the KV state of prompts a slot gave up, seeding later requests that start "
              "the same way; -1: no limit, 0: none",
              &Options::cache_ram_mib, -1, 1LL << 40),
      setting({"--metrics"}, kServer,
              "answer GET /metrics in Prometheus' text format (tokens, times, slots, KV cells, prefix-cache hits)",
              &Options::metrics),
      stored({"--reasoning-format"}, "MODE", kServer,
             "a chat's reasoning (<think>, gpt-oss's analysis, Gemma 4's thought): none leaves it in the content; "
             "deepseek and auto return it as reasoning_content; deepseek-legacy does both",
             &Options::reasoning_format,
             [](const FlagValue& v) { return v.one_of({"none", "auto", "deepseek", "deepseek-legacy"}); }),
      integer({"--reasoning-budget"}, "BUDGET", kServer,
              "-1: the model thinks as it likes; 0: it does not (the template gets enable_thinking false); N: "
              "after N tokens of reasoning the server ends it (writes the template's close marker) and the answer "
              "follows",
              &Options::reasoning_budget, -1, INT_MAX),
      text({"--reasoning-budget-message"}, "TEXT", kServer,
           "text written before the close marker when the reasoning budget ends the reasoning",
           &Options::reasoning_budget_message),
      text({"--chat-template-kwargs"}, "JSON", kServer,
           "more variables for every chat's template, e.g. '{\"enable_thinking\": false}' (a request's "
           "chat_template_kwargs go over them)",
           &Options::chat_template_kwargs),
      stored({"--request-timeout"}, "SECONDS", kServer,
             "time a client has to send a request's head and body, from its first byte (then 408)",
             &Options::request_timeout, [](const FlagValue& v) {
               const float seconds = v.number();
               if (!(seconds >= 0.01f && seconds <= 86400)) throw Error(v.flag + ": from 0.01 to 86400 seconds");
               return seconds;
             }),
      // At most 400: with as many more told 503, every descriptor stays
      // under FD_SETSIZE (1024), above which cpp-httplib answers 500.
      integer({"--max-connections"}, "N", kServer, "connections open at once; those beyond get 503",
              &Options::max_connections, 1, 400),
      integer({"--max-waiting"}, "N", kServer,
              "completions waiting for a free slot; those beyond get 503 with Retry-After", &Options::max_waiting, 0,
              100000),
      {{"-c", "--ctx-size"}, "N", kServer, "refused: the context size is fixed when the model is compiled",
       [](Options&, const FlagValue& v) {
         throw Error(v.flag + ": the context size is fixed when the model is compiled (kiln_add_model CTX)");
       },
       nullptr},

      // <model>-bench
      stored({"-p", "--n-prompt"}, "LIST", kBench, "prompt sizes to ingest, e.g. 128,512; 0 skips",
             &Options::prompt_sizes, [](const FlagValue& v) { return v.list(0); }),
      stored({"-n", "--n-gen"}, "LIST", kBench, "tokens to generate, e.g. 128; 0 skips", &Options::gen_sizes,
             [](const FlagValue& v) { return v.list(0); }),
      stored({"-d", "--n-depth"}, "LIST", kBench,
             "positions already in the KV cache before each test (`ppN @ dD`), e.g. 0,4096", &Options::depths,
             [](const FlagValue& v) { return v.list(0); }),
      integer({"-r", "--repetitions"}, "N", kBench, "runs per test", &Options::repetitions, 1, 1 << 24),
      {{"-t", "--threads"}, "LIST", kBench, "thread counts, e.g. 1,2",
       [](Options& o, const FlagValue& v) { o.thread_counts = v.list(1); },
       [](const ModelEntry&) { return std::string("all hardware threads"); }},
      {{"-o", "--output"}, "FORMAT", kBench, "md or json",
       [](Options& o, const FlagValue& v) { o.json = v.one_of({"md", "json"}) == "json"; },
       [](const ModelEntry&) { return std::string(Options{}.json ? "json" : "md"); }},
      setting({"--probe"}, kBench, "measure this machine's limits first and cache them", &Options::probe),
      {{"--machine"}, "FILE", kBench, "machine limits to compare with",
       [](Options& o, const FlagValue& v) { o.limits_path = v.text; },
       [](const ModelEntry&) { return default_limits_path(); }},
      {{"--prefix"}, "N", kBench,
       "time to first token for an N-token prompt, cold and with 50/90/100 % of it cached (in memory and in a state "
       "file), instead of pp/tg",
       [](Options& o, const FlagValue& v) { o.prefix_tokens = v.integer(2, 1 << 24); }, nullptr},
      setting({"--load"}, kBench,
              "load time: from starting a process of this program to its first token of an empty prompt, median of "
              "-r processes (threads: the first of -t), with their peak resident memory, instead of pp/tg",
              &Options::load),
      setting({"--drop-caches"}, kBench, "with --load: drop the page cache before each process (cold; root only)",
              &Options::drop_caches),
      setting({kLoadChildFlag}, kBench, "", &Options::load_child),

      // <model>-perplexity
      text({"-f", "--file"}, "FILE", kPerplexity, "the text to score (required)", &Options::text_path),
      {{"-c", "--ctx-size"}, "N", kPerplexity, "tokens per chunk, at least 3",
       [](Options& o, const FlagValue& v) { o.n_ctx = v.integer(1, 1 << 30); },
       [](const ModelEntry&) { return std::string("the context it was compiled for"); }},
      stored({"--chunks"}, "N", kPerplexity, "score at most N chunks; -1: all the text holds", &Options::chunks,
             [](const FlagValue& v) {
               const int chunks = v.integer(-1, 1 << 30);
               if (chunks == 0) throw Error(v.flag + ": expected -1 (all) or a positive count, got 0");
               return chunks;
             }),
  };
}

}  // namespace

const std::vector<Option>& option_table() {
  static const std::vector<Option> table = make_table();
  return table;
}

}  // namespace kiln
