// The body of <name>-pack, the build-time tool of a model compiled with its
// weights built in (kiln_add_model ... EMBED): it reads the GGUF and writes
// the weight image (models/weight_image.hpp) that the program carries, each
// weight in the form the forward pass reads it, packed by the same calls
// loading a GGUF makes (models/weight_sources.hpp).
//
//   <name>-pack MODEL.gguf OUT.weights
#pragma once

#include <string>

#include "apps/cli_support.hpp"
#include "engine/gguf/gguf.hpp"
#include "engine/model/model_fingerprint.hpp"
#include "models/decoder/bind_weights.hpp"
#include "models/describe.hpp"
#include "models/weight_image.hpp"
#include "models/weight_sources.hpp"

namespace kiln::decoder {

template <class C>
int pack_main(int argc, char** argv, const std::string& program) {
  return run_reporting_errors(program, [&] {
    if (argc != 3) throw Error("usage: " + program + " MODEL.gguf OUT.weights");
    const GgufFile file = GgufFile::open(argv[1]);
    WeightImageWriter out(argv[2], file.header_bytes(), file_content_hash(file));
    WeightPacker packer(file, out);
    Weights<C> unused{};
    bind_weights<C>(unused, packer, describe_model(file));
    out.finish();
    return 0;
  });
}

}  // namespace kiln::decoder
