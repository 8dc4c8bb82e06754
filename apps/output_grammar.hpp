// The grammar the command-line program's output must follow, from
// --grammar, --grammar-file, -j/--json-schema or -jf/--json-schema-file
// (llama-cli's flags): applied to each generation, from the grammar's start.
#pragma once

#include <memory>

#include "apps/options/options.hpp"
#include "engine/grammar/grammar.hpp"
#include "engine/grammar/token_trie.hpp"
#include "engine/session/sampler.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace kiln {

class OutputGrammar {
 public:
  // Reads and compiles the grammar the options give, if any. Throws
  // kiln::Error naming the flag for an unreadable file, a GBNF fault or a
  // schema keyword that cannot be enforced.
  OutputGrammar(const Options& opt, const Tokenizer& tok);

  // The sampler's next generation follows the grammar from its start (none
  // given: the sampler is left as it is).
  void constrain(Sampler& sampler) const;

 private:
  std::shared_ptr<const grammar::Grammar> grammar_;
  std::shared_ptr<const grammar::TokenTrie> vocab_;
};

}  // namespace kiln
