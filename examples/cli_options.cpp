#include "examples/cli_options.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "engine/error.hpp"

namespace kiln {

namespace {

long long parse_integer(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < -(1ll << 31) || v > (1ll << 31) - 1)
    throw Error(flag + ": expected an integer, got '" + text + "'");
  return v;
}

float parse_float(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || v != v) throw Error(flag + ": expected a number, got '" + text + "'");
  return v;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("-f: cannot read prompt file '" + path + "'");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error("-f: error while reading '" + path + "'");
  return text;
}

}  // namespace

CliOptions parse_cli(int argc, char** argv) {
  CliOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(flag + ": missing value");
      return argv[++i];
    };
    if (flag == "-h" || flag == "--help") o.help = true;
    else if (flag == "-m" || flag == "--model") o.model_path = value();
    else if (flag == "-p" || flag == "--prompt") o.prompt = value();
    else if (flag == "-f" || flag == "--file") o.prompt = read_text_file(value());
    else if (flag == "-n" || flag == "--n-predict") o.n_predict = static_cast<int>(parse_integer(flag, value()));
    else if (flag == "-t" || flag == "--threads") o.threads = static_cast<int>(parse_integer(flag, value()));
    else if (flag == "-s" || flag == "--seed") o.sampling.seed = static_cast<uint64_t>(static_cast<uint32_t>(parse_integer(flag, value())));
    else if (flag == "--temp") o.sampling.temperature = parse_float(flag, value());
    else if (flag == "--top-k") o.sampling.top_k = static_cast<int>(parse_integer(flag, value()));
    else if (flag == "--top-p") o.sampling.top_p = parse_float(flag, value());
    else if (flag == "--min-p") o.sampling.min_p = parse_float(flag, value());
    else if (flag == "--repeat-penalty") o.sampling.repeat_penalty = parse_float(flag, value());
    else if (flag == "--repeat-last-n") o.sampling.repeat_last_n = static_cast<int>(parse_integer(flag, value()));
    else if (flag == "--no-display-prompt") o.display_prompt = false;
    else throw Error("unknown argument '" + flag + "' (see --help)");
  }
  if (o.n_predict < -1) throw Error("-n: expected -1 (no limit) or a count, got " + std::to_string(o.n_predict));
  if (o.threads < 0) throw Error("-t: expected a positive thread count, got " + std::to_string(o.threads));
  return o;
}

std::string cli_usage(const std::string& program, const std::string& default_gguf) {
  std::ostringstream u;
  u << "usage: " << program << " [options]\n\n"
    << "Generates text with the model compiled into this binary.\n\n"
    << "  -m, --model FILE        GGUF with this model's weights (default: " << default_gguf << ")\n"
    << "  -p, --prompt TEXT       prompt to start from (default: empty, i.e. BOS only)\n"
    << "  -f, --file FILE         read the prompt from a file\n"
    << "  -n, --n-predict N       tokens to generate (default: -1 = until end of text or a full context)\n"
    << "  -t, --threads N         threads to use (default: all hardware threads)\n"
    << "  -s, --seed N            sampling seed (default: -1 = random)\n"
    << "      --temp T            temperature (default: 0.8; 0 = greedy)\n"
    << "      --top-k N           top-k sampling (default: 40, 0 = off)\n"
    << "      --top-p P           top-p sampling (default: 0.95, 1.0 = off)\n"
    << "      --min-p P           min-p sampling (default: 0.05, 0.0 = off)\n"
    << "      --repeat-penalty X  penalize repeated tokens (default: 1.0 = off)\n"
    << "      --repeat-last-n N   tokens the penalty looks back at (default: 64)\n"
    << "      --no-display-prompt do not print the prompt before the generated text\n"
    << "  -h, --help              show this help\n";
  return u.str();
}

}  // namespace kiln
