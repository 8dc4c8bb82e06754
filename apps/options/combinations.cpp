#include "apps/options/combinations.hpp"

#include "engine/error/error.hpp"

namespace kiln {

namespace {

void check_cli(const Options& o) {
  if (!o.prompt_ids.empty() && (!o.prompt.empty() || !o.prompt_file.empty()))
    throw Error("--prompt-ids: give either a text prompt (-p, -f) or token ids, not both");
  if (o.prompt_cache_ro && o.prompt_cache.empty()) throw Error("--prompt-cache-ro: needs --prompt-cache FILE");
  if (!o.conversation && !o.system_prompt.empty()) throw Error("-sys: a system prompt needs conversation mode (-cnv)");
  if (!o.conversation && !o.chat_template_file.empty()) throw Error("--chat-template-file: needs conversation mode (-cnv)");
  if (o.conversation && (!o.prompt_ids.empty() || !o.logits_out.empty() || !o.prompt_cache.empty()))
    throw Error("-cnv: cannot be combined with --prompt-ids, --logits-out or --prompt-cache");
  const int grammars =
      !o.grammar.empty() + !o.grammar_file.empty() + !o.json_schema.empty() + !o.json_schema_file.empty();
  if (grammars > 1) throw Error("--grammar, --grammar-file, -j and -jf: give at most one of them");
  if (grammars == 1 && o.interactive)
    throw Error("-i: cannot be combined with a grammar (it constrains one generation; -cnv constrains each reply)");
}

}  // namespace

void check_combinations(Program program, const Options& o) {
  switch (program) {
    case kCli: check_cli(o); break;
    case kServer: break;
    case kBench:
      if (o.drop_caches && !o.load) throw Error("--drop-caches: needs --load");
      break;
    case kPerplexity:
      if (o.text_path.empty()) throw Error("no text to score: give -f FILE");
      break;
  }
}

}  // namespace kiln
