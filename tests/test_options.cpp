// The option table of a model's programs (apps/options/): where values go,
// the one-line refusals, and the defaults --help shows.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "apps/options/option_table.hpp"
#include "apps/options/parse_options.hpp"
#include "apps/options/usage.hpp"
#include "engine/error/error.hpp"

namespace {

using kiln::Options;

const kiln::ModelEntry kModel{"story", "/models/story.gguf", false, nullptr, nullptr};

Options parse(kiln::Program program, std::vector<std::string> args) {
  args.insert(args.begin(), "story");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return parse_options(program, static_cast<int>(argv.size()), argv.data(), kModel).value();
}

}  // namespace

TEST_CASE("no program takes two options spelt alike, and every spelling is a flag") {
  for (const kiln::Program program : {kiln::kCli, kiln::kServer, kiln::kBench, kiln::kPerplexity}) {
    std::set<std::string> seen;
    for (const kiln::Option& option : kiln::option_table()) {
      if (!(option.programs & program)) continue;
      for (const std::string& name : option.names) {
        CAPTURE(name);
        CHECK(name.starts_with("-"));
        CHECK(seen.insert(name).second);
      }
    }
  }
}

TEST_CASE("values go where the program's own option says") {
  const Options cli = parse(kiln::kCli, {"-p", "hi", "-n", "-1", "--temp", "0", "-s", "42", "--no-display-prompt"});
  CHECK(cli.prompt == "hi");
  CHECK(cli.n_predict == -1);  // a value may start with '-'
  CHECK(cli.sampling.temperature == 0.0f);
  CHECK(cli.sampling.seed == 42);
  CHECK_FALSE(cli.display_prompt);
  CHECK(parse(kiln::kCli, {"-s", "-1"}).sampling.seed == kiln::kRandomSeed);
  // The later of -p and -f counts.
  const Options file_last = parse(kiln::kCli, {"-p", "hi", "-f", "prompt.txt"});
  CHECK(file_last.prompt.empty());
  CHECK(file_last.prompt_file == "prompt.txt");

  const Options bench = parse(kiln::kBench, {"-p", "128,512", "-t", "1,2", "-o", "json"});
  CHECK(bench.prompt_sizes == std::vector<int>{128, 512});
  CHECK(bench.thread_counts == std::vector<int>{1, 2});
  CHECK(bench.json);
  CHECK(parse(kiln::kPerplexity, {"-f", "text.txt", "--chunks", "-1"}).text_path == "text.txt");
  CHECK(parse(kiln::kServer, {"-cram", "-1", "--port", "0"}).cache_ram_mib == -1);
}

TEST_CASE("each refusal is one line naming the flag") {
  struct Case {
    kiln::Program program;
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {kiln::kCli, {"--bogus"}, "unknown argument '--bogus' (see --help)"},
      {kiln::kServer, {"--temp", "0.5"}, "unknown argument '--temp' (see --help)"},  // the CLI's, not the server's
      {kiln::kCli, {"words"}, "unknown argument 'words' (see --help)"},
      {kiln::kCli, {"-n"}, "-n: missing value"},
      {kiln::kCli, {"--n-predict", "ten"}, "--n-predict: expected an integer, got 'ten'"},
      {kiln::kCli, {"-n", "-2"}, "-n: expected an integer -1 or more, got '-2'"},
      {kiln::kServer, {"--port", "70000"}, "--port: expected an integer from 0 to 65535, got '70000'"},
      {kiln::kCli, {"--top-p", "nan"}, "--top-p: expected a number, got 'nan'"},
      {kiln::kBench, {"-o", "xml"}, "-o: expected md or json, got 'xml'"},
      {kiln::kBench, {"-t", "1,,2"}, "-t: expected an integer, got ''"},
      {kiln::kCli, {"--prompt-ids", "1 -2"}, "--prompt-ids: token ids are not negative, got -2"},
      {kiln::kCli, {"-sys", "Be kind."}, "-sys: a system prompt needs conversation mode (-cnv)"},
      {kiln::kBench, {"--drop-caches"}, "--drop-caches: needs --load"},
      {kiln::kPerplexity, {}, "no text to score: give -f FILE"},
      // Every flag is read before --help is acted on.
      {kiln::kCli, {"-n", "ten", "--help"}, "-n: expected an integer, got 'ten'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    CHECK_THROWS_WITH_AS(parse(c.program, c.args), c.message, kiln::Error);
  }
}

TEST_CASE("--help shows the defaults the code uses") {
  const kiln::SamplerParams sampling;
  const std::string cli = kiln::usage(kiln::kCli, kModel);
  CHECK(cli.starts_with("usage: story [options]\n"));
  CHECK(cli.find("--top-k N") != std::string::npos);
  CHECK(cli.find("(default: " + std::to_string(sampling.top_k) + ")") != std::string::npos);
  CHECK(cli.find("(default: 0.95)") != std::string::npos);  // top-p
  CHECK(kiln::usage(kiln::kServer, kModel).find("(default: " + std::to_string(Options{}.port) + ")") !=
        std::string::npos);
  CHECK(kiln::usage(kiln::kServer, kModel).find("the model's id in responses (default: story)") != std::string::npos);
  CHECK(kiln::usage(kiln::kBench, kModel).find("--load-child") == std::string::npos);  // kiln's own, not the user's
  CHECK(kiln::usage(kiln::kPerplexity, kModel).starts_with("usage: story-perplexity -f FILE [options]\n"));
  CHECK(kiln::program_name(kiln::kServer, kModel) == "story-server");
}
