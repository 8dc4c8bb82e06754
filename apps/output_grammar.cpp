#include "apps/output_grammar.hpp"

#include <string>
#include <utility>

#include "apps/cli_support.hpp"
#include "engine/error/error.hpp"
#include "engine/grammar/grammar_constraint.hpp"
#include "engine/grammar/json_schema.hpp"

namespace kiln {

namespace {

// As much as a server request may carry: a grammar or schema file longer
// than that is a mistake (a model file, a log), not a grammar.
constexpr size_t kMaxFileBytes = size_t(8) << 20;

std::string read_file(const std::string& flag, const std::string& path, const char* what) {
  std::string text = read_text_file(flag, path, what, kMaxFileBytes);
  if (text.size() > kMaxFileBytes)
    throw Error(flag + ": '" + path + "' is longer than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
  return text;
}

// The GBNF the options give ("" for none), and the flag that gave it.
std::pair<std::string, std::string> grammar_text(const Options& opt) {
  if (!opt.grammar.empty()) return {opt.grammar, "--grammar"};
  if (!opt.grammar_file.empty())
    return {read_file("--grammar-file", opt.grammar_file, "grammar file"), "--grammar-file"};
  const bool from_file = !opt.json_schema_file.empty();
  if (opt.json_schema.empty() && !from_file) return {};
  const std::string flag = from_file ? "--json-schema-file" : "--json-schema";
  const std::string schema = from_file ? read_file(flag, opt.json_schema_file, "JSON schema file") : opt.json_schema;
  try {
    return {grammar::json_schema_to_gbnf(schema), flag};
  } catch (const Error& e) {
    throw Error(flag + ": " + e.what());
  }
}

}  // namespace

OutputGrammar::OutputGrammar(const Options& opt, const Tokenizer& tok) {
  const auto [text, flag] = grammar_text(opt);
  if (text.empty()) return;
  try {
    grammar_ = grammar::parse_gbnf(text);
  } catch (const Error& e) {
    throw Error(flag + ": " + e.what());
  }
  vocab_ = std::make_shared<const grammar::TokenTrie>(grammar::TokenTrie::from_tokenizer(tok));
}

void OutputGrammar::constrain(Sampler& sampler) const {
  if (grammar_) sampler.constrain(std::make_unique<grammar::GrammarConstraint>(grammar_, vocab_));
}

}  // namespace kiln
