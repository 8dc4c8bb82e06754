#include "apps/options/usage.hpp"

#include <algorithm>
#include <sstream>

#include "apps/cli.hpp"
#include "apps/options/option_table.hpp"

namespace kiln {

namespace {

struct ProgramText {
  Program program;
  const char* suffix;     // after the model's name
  const char* arguments;  // of the usage line
  const char* about;
};

constexpr ProgramText kPrograms[] = {
    {kCli, "", "[options]", "Generates text with the model compiled into this binary."},
    {kServer, "-server", "[options]",
     "An OpenAI-compatible HTTP server for the model compiled into this binary: POST /v1/chat/completions, "
     "/v1/completions; GET /v1/models, /health, /props."},
    {kBench, "-bench", "[options]",
     "Measures prompt ingestion (pp) and generation (tg) speed of the model compiled into this binary, as medians "
     "of repeated runs after a warm-up."},
    {kPerplexity, "-perplexity", "-f FILE [options]",
     "Computes the perplexity of the model compiled into this binary on a text, as llama.cpp's llama-perplexity "
     "does: the text (with BOS) is cut into chunks of -c tokens, each chunk starts with BOS and is scored on its "
     "second half. Prints the running estimate after each chunk and the final value with its standard error."},
};

constexpr size_t kWidth = 100;        // columns of the help
constexpr size_t kMaxFlagWidth = 28;  // a longer flag has its help on the next line

const ProgramText& text_of(Program program) {
  return *std::ranges::find(kPrograms, program, &ProgramText::program);
}

// "-n, --n-predict N"
std::string flag_text(const Option& option) {
  std::string text;
  for (const std::string& name : option.names) text.append(text.empty() ? "" : ", ").append(name);
  return option.value_name.empty() ? text : text + " " + option.value_name;
}

// `text` broken at spaces into lines of at most kWidth columns, each but the
// first indented by `indent` (the first continues a line that is already that long).
std::string wrapped(const std::string& text, size_t indent) {
  std::istringstream words(text);
  std::string out;
  size_t column = indent;
  for (std::string word; words >> word;) {
    if (column > indent && column + 1 + word.size() > kWidth) {
      out.append("\n").append(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out + "\n";
}

}  // namespace

std::string program_name(Program program, const ModelEntry& model) {
  return std::string(model.name) + text_of(program).suffix;
}

std::string usage(Program program, const ModelEntry& model) {
  std::vector<const Option*> options;
  for (const Option& option : option_table())
    if ((option.programs & program) && !option.help.empty()) options.push_back(&option);
  size_t flag_width = 0;
  for (const Option* option : options)
    flag_width = std::max(flag_width, std::min(flag_text(*option).size(), kMaxFlagWidth));
  const size_t help_column = 2 + flag_width + 2;

  // Appended piece by piece: GCC 12's -Wrestrict misfires on "literal" + std::string&& (bug 105329).
  const ProgramText& about = text_of(program);
  std::string out = "usage: ";
  out.append(program_name(program, model)).append(" ").append(about.arguments).append("\n\n");
  out.append(wrapped(about.about, 0)).append("\n");
  for (const Option* option : options) {
    const std::string flag = flag_text(*option);
    out.append("  ").append(flag);
    if (2 + flag.size() + 2 <= help_column) out.append(help_column - 2 - flag.size(), ' ');
    else out.append("\n").append(help_column, ' ');
    std::string help = option->help;
    const std::string shown = option->shown_default ? option->shown_default(model) : "";
    if (!shown.empty()) help.append(" (default: ").append(shown).append(")");
    out.append(wrapped(help, help_column));
  }
  return out;
}

}  // namespace kiln
