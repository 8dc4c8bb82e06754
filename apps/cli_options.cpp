#include "apps/cli_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "engine/cli_support.hpp"
#include "engine/error.hpp"

namespace kiln {

namespace {

// Any int; range checks that need the model come later.
int parse_integer(const std::string& flag, const std::string& text) {
  return static_cast<int>(parse_int(flag, text, -(1ll << 31), (1ll << 31) - 1));
}

float parse_float(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || v != v) throw Error(flag + ": expected a number, got '" + text + "'");
  return v;
}

// "1 716 235" or "1,716,235".
std::vector<int32_t> parse_token_ids(const std::string& flag, std::string text) {
  std::replace(text.begin(), text.end(), ',', ' ');
  std::vector<int32_t> ids;
  std::istringstream in(text);
  for (std::string item; in >> item;) {
    const long long id = parse_integer(flag, item);
    if (id < 0) throw Error(flag + ": token ids are not negative, got " + item);
    ids.push_back(static_cast<int32_t>(id));
  }
  if (ids.empty()) throw Error(flag + ": no token ids given");
  return ids;
}

}  // namespace

CliOptions parse_cli(int argc, char** argv) {
  CliOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&] { return flag_value(argc, argv, i); };
    if (flag == "-h" || flag == "--help") o.help = true;
    else if (flag == "-m" || flag == "--model") o.model_path = value();
    else if (flag == "-p" || flag == "--prompt") o.prompt = value(), o.prompt_file.clear();
    else if (flag == "-f" || flag == "--file") o.prompt_file = value(), o.prompt.clear();
    else if (flag == "-n" || flag == "--n-predict") o.n_predict = parse_integer(flag, value());
    else if (flag == "-t" || flag == "--threads") o.threads = parse_integer(flag, value());
    else if (flag == "-s" || flag == "--seed") o.sampling.seed = static_cast<uint64_t>(static_cast<uint32_t>(parse_integer(flag, value())));
    else if (flag == "--temp") o.sampling.temperature = parse_float(flag, value());
    else if (flag == "--top-k") o.sampling.top_k = parse_integer(flag, value());
    else if (flag == "--top-p") o.sampling.top_p = parse_float(flag, value());
    else if (flag == "--min-p") o.sampling.min_p = parse_float(flag, value());
    else if (flag == "--repeat-penalty") o.sampling.repeat_penalty = parse_float(flag, value());
    else if (flag == "--repeat-last-n") o.sampling.repeat_last_n = parse_integer(flag, value());
    else if (flag == "--prompt-ids") o.prompt_ids = parse_token_ids(flag, value());
    else if (flag == "--logits-out") o.logits_out = value();
    else if (flag == "--prompt-cache") o.prompt_cache = value();
    else if (flag == "--prompt-cache-ro") o.prompt_cache_ro = true;
    else if (flag == "--no-display-prompt") o.display_prompt = false;
    else if (flag == "-i" || flag == "--interactive") o.interactive = true;
    else if (flag == "-cnv" || flag == "--conversation") o.conversation = true;
    else if (flag == "-sys" || flag == "--system-prompt") o.system_prompt = value();
    else if (flag == "--chat-template-file") o.chat_template_file = value();
    else throw Error("unknown argument '" + flag + "' (see --help)");
  }
  if (!o.prompt_ids.empty() && (!o.prompt.empty() || !o.prompt_file.empty())) throw Error("--prompt-ids: give either a text prompt (-p, -f) or token ids, not both");
  if (o.n_predict < -1) throw Error("-n: expected -1 (no limit) or a count, got " + std::to_string(o.n_predict));
  if (o.prompt_cache_ro && o.prompt_cache.empty()) throw Error("--prompt-cache-ro: needs --prompt-cache FILE");
  if (o.threads < 0) throw Error("-t: expected a positive thread count, got " + std::to_string(o.threads));
  if (!o.conversation && !o.system_prompt.empty()) throw Error("-sys: a system prompt needs conversation mode (-cnv)");
  if (!o.conversation && !o.chat_template_file.empty()) throw Error("--chat-template-file: needs conversation mode (-cnv)");
  if (o.conversation && (!o.prompt_ids.empty() || !o.logits_out.empty() || !o.prompt_cache.empty()))
    throw Error("-cnv: cannot be combined with --prompt-ids, --logits-out or --prompt-cache");
  return o;
}

std::string cli_usage(const std::string& program, const std::string& default_model) {
  std::ostringstream u;
  u << "usage: " << program << " [options]\n\n"
    << "Generates text with the model compiled into this binary.\n\n"
    << "  -m, --model FILE        GGUF with this model's weights (default: " << default_model << ")\n"
    << "  -p, --prompt TEXT       prompt to start from (default: empty, i.e. BOS only)\n"
    << "  -f, --file FILE         read the prompt from a file\n"
    << "      --prompt-ids IDS    the prompt as token ids, e.g. \"1 716 235\" (fed as given, no BOS added)\n"
    << "      --logits-out FILE   write the logits of every prompt position (a line each, all of the vocabulary)\n"
    << "  -n, --n-predict N       tokens to generate (default: -1 = until end of text or a full context)\n"
    << "  -t, --threads N         threads to use (default: all hardware threads)\n"
    << "  -s, --seed N            sampling seed (default: -1 = random)\n"
    << "      --temp T            temperature (default: 0.8; 0 = greedy)\n"
    << "      --top-k N           top-k sampling (default: 40, 0 = off)\n"
    << "      --top-p P           top-p sampling (default: 0.95, 1.0 = off)\n"
    << "      --min-p P           min-p sampling (default: 0.05, 0.0 = off)\n"
    << "      --repeat-penalty X  penalize repeated tokens (default: 1.0 = off)\n"
    << "      --repeat-last-n N   tokens the penalty looks back at (default: 64)\n"
    << "      --prompt-cache FILE keep the prompt's KV state in FILE: a later run whose prompt\n"
    << "                          starts the same way computes only the rest\n"
    << "      --prompt-cache-ro   use the --prompt-cache file but never write it\n"
    << "      --no-display-prompt do not print the prompt before the generated text\n"
    << "  -i, --interactive       then read lines from stdin; each is appended to the text so far and\n"
    << "                          generation continues (only the new tokens are computed)\n"
    << "  -cnv, --conversation    chat: each line of stdin is a user turn, rendered with the model's chat\n"
    << "                          template (-p, if given, is the first turn); replies end at the model's\n"
    << "                          end-of-turn token, and each turn computes only its new tokens\n"
    << "  -sys, --system-prompt TEXT  the conversation's system message (with -cnv)\n"
    << "      --chat-template-file FILE  a Jinja chat template instead of the GGUF's (with -cnv); a GGUF\n"
    << "                          without one uses ChatML\n"
    << "  -h, --help              show this help\n";
  return u.str();
}

}  // namespace kiln
