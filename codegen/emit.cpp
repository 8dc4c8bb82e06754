#include "codegen/emit.hpp"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "engine/error/error.hpp"
#include "models/decoder/block_tensors.hpp"
#include "models/describe.hpp"

namespace kiln::codegen {

namespace {

std::string float_literal(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const char* bool_literal(bool b) { return b ? "true" : "false"; }

std::string type_literal(TensorType t) { return "kiln::TensorType::" + std::string(traits_of(t).enum_name); }

std::string literal(int v) { return std::to_string(v); }
std::string literal(float v) { return float_literal(v); }
std::string literal(bool v) { return bool_literal(v); }
const char* cpp_type(int) { return "int"; }
const char* cpp_type(float) { return "float"; }
const char* cpp_type(bool) { return "bool"; }

std::string kind_literal(const LayerKind& k) {
  return std::string("kiln::LayerKind{.sliding = ") + bool_literal(k.sliding) + ", .rope = " + bool_literal(k.rope) + "}";
}

// The weight type of each matrix of block `layer`, by role (a fused
// tensor's parts each take its type: block_matrices).
std::vector<std::pair<std::string_view, TensorType>> block_matrix_types(const ModelDesc& d, const Architecture& arch,
                                                                         int layer) {
  std::vector<std::pair<std::string_view, TensorType>> types;
  for (const decoder::MatrixSource& m : decoder::block_matrices(d, arch, layer))
    types.emplace_back(decoder::matrix_role(*m.matrix), d.tensor(m.tensor).type);
  return types;
}

void emit_config(std::ostringstream& o, const ModelDesc& d, const BuildOptions& opt, const Architecture& arch) {
  const Hyperparams& h = d.hp;
  const TensorType embd = d.tensor("token_embd.weight").type;
  const TensorType out = h.tied_output ? embd : d.tensor("output.weight").type;
  o << "struct Config {\n  using Arch = " << arch.type << ";\n";
  visit_hparams(h, [&](const char* id, const char*, const auto& v) {
    o << "  static constexpr " << cpp_type(v) << " " << id << " = " << literal(v) << ";\n";
  });
  o << "  static constexpr kiln::TensorType token_embd_type = " << type_literal(embd) << ";\n"
    << "  static constexpr kiln::TensorType output_type = " << type_literal(out) << ";\n"
    << "  // Chosen at build time (kiln_add_model CTX / BATCH / KV / SWA_FULL).\n"
    << "  static constexpr int n_ctx = " << opt.n_ctx << ";\n"
    << "  static constexpr int max_batch = " << opt.max_batch << ";\n"
    << "  static constexpr kiln::TensorType kv_type = " << type_literal(opt.kv_type) << ";\n"
    << "  static constexpr bool swa_full = " << (opt.swa_full ? "true" : "false") << ";\n"
    << "};\n\n";
}

void emit_desc(std::ostringstream& o, const ModelDesc& d) {
  o << "// What this code was generated for; a GGUF given at run time must match it.\n"
    << "// Made on first use, not at start-up: loading a model's shared library runs\n"
    << "// none of its code before kiln_model_load has checked the CPU (capi/cpu_gate.cpp).\n"
    << "const kiln::ModelDesc& compiled_desc() {\n"
    << "  static const kiln::ModelDesc desc{\n"
    << "    " << quoted(d.arch) << ",\n    kiln::Hyperparams{";
  const char* sep = "";
  visit_hparams(d.hp, [&](const char* id, const char*, const auto& v) {
    o << sep << "." << id << " = " << literal(v);
    sep = ", ";
  });
  o << "},\n    {";
  for (size_t l = 0; l < d.layers.size(); ++l) o << (l ? ", " : "") << kind_literal(d.layers[l]);
  o << "},\n    {\n";
  for (const auto& t : d.tensors) {
    o << "        {" << quoted(t.name) << ", " << type_literal(t.type) << ", {";
    for (size_t i = 0; i < t.dims.size(); ++i) o << (i ? ", " : "") << t.dims[i];
    o << "}},\n";
  }
  o << "    }};\n  return desc;\n}\n\n";
}

// <name>.forward.hpp: the model as data, in namespace `ns`: its configuration,
// the weight types of its blocks and the list of its layers, which name the
// shared forward pass (models/decoder/forward_pass.hpp) for this model.
std::string emit_forward(const ModelDesc& d, const BuildOptions& opt, const std::string& banner, const std::string& ns) {
  const Architecture& arch = architecture(d.arch, opt.gguf_path);
  std::ostringstream f;
  f << banner << "// This model's configuration and layers, for " << opt.name << ".gen.cpp (inference) and\n"
    << "// " << opt.name << ".timed.cpp (the same pass with its kernels timed, in a file of its own: its\n"
    << "// extra calls of every kernel would change the compiler's inlining choices for inference).\n"
    << "#pragma once\n\n#include \"" << arch.header << "\"\n#include \"models/decoder/forward_pass.hpp\"\n\n"
    << "namespace " << ns << " {\n\n";
  emit_config(f, d, opt, arch);

  // One struct per distinct set of block weight types (usually one for all layers).
  std::map<std::vector<std::pair<std::string_view, TensorType>>, int> block_type_ids;
  std::vector<int> layer_types;
  for (int l = 0; l < d.hp.n_layer; ++l) {
    const auto types = block_matrix_types(d, arch, l);
    auto [it, added] = block_type_ids.emplace(types, int(block_type_ids.size()));
    layer_types.push_back(it->second);
    if (!added) continue;
    f << "struct BlockTypes" << it->second << " {\n";
    for (const auto& [role, type] : types) f << "  static constexpr kiln::TensorType " << role << " = " << type_literal(type) << ";\n";
    f << "};\n\n";
  }
  f << "// Every layer: its index, its weight types, what it is.\nusing Layers = kiln::decoder::LayerList<\n";
  for (int l = 0; l < d.hp.n_layer; ++l)
    f << "    kiln::decoder::Layer<" << l << ", BlockTypes" << layer_types[l] << ", " << kind_literal(d.layers[l]) << ">"
      << (l + 1 < d.hp.n_layer ? ",\n" : ">;\n\n");
  f << "using Forward = kiln::decoder::Forward<Config, Layers>;\n\n"
    << "}  // namespace " << ns << "\n";
  return f.str();
}

// <name>.weights.cpp: the weight image as the program's read-only data,
// assembled from the file by .incbin (the compiler never sees its bytes, so
// gigabytes cost the assembler a copy and nothing else). It starts on a 2 MB
// boundary, so that it can be mapped with 2 MB pages (models/weight_image.hpp).
// On x86-64 it goes to .lrodata, which the linker places after everything
// else: the rest of the program stays within reach of the 32-bit offsets the
// default code model uses, however large the image is. The code refers to
// its first byte, which is near, and to its size, a word in .rodata that the
// assembler computes, never to its end, which may be gigabytes away.
std::string emit_weights(const std::string& image_path, const std::string& symbol, const std::string& banner) {
  if (image_path.find_first_of("\"\\\n") != std::string::npos)
    throw Error("the weight image path '" + image_path + "' holds a quote, backslash or newline, which .incbin cannot take");
  auto global = [](const std::string& name) { return "\".globl " + name + "\\n.hidden " + name + "\\n" + name + ":\\n\"\n"; };
  return banner +
         "// The weight image (models/weight_image.hpp), built into the read-only data.\n"
         "#if defined(__x86_64__)\n#define KILN_WEIGHTS_SECTION \".lrodata,\\\"a\\\"\"\n"
         "#else\n#define KILN_WEIGHTS_SECTION \".rodata\"\n#endif\n\n"
         "__asm__(\".pushsection \" KILN_WEIGHTS_SECTION \"\\n\"\n"
         "        \".balign 2097152\\n\"\n        " + global(symbol) +
         "        \".incbin \\\"" + image_path + "\\\"\\n\"\n"
         "        \"" + symbol + "_end:\\n\"\n"
         "        \".popsection\\n\"\n"
         "        \".pushsection .rodata\\n\"\n"
         "        \".balign 8\\n\"\n        " + global(symbol + "_size") +
         "        \".quad " + symbol + "_end - " + symbol + "\\n\"\n"
         "        \".popsection\\n\");\n";
}

}  // namespace

std::string identifier(const std::string& name) {
  std::string id;
  for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "m_" + id;
  return id;
}

GeneratedSources emit_model(const ModelDesc& d, const BuildOptions& opt) {
  const std::string ns = "kiln::models::" + identifier(opt.name);
  const std::string internal_ns = ns + "::generated";  // what the two source files share
  const std::string banner = "// Generated by kiln-codegen from " + opt.gguf_path + ". Do not edit.\n";
  const std::string forward_include = "#include \"" + opt.name + ".forward.hpp\"\n";
  GeneratedSources out;

  const std::string gguf_file = std::filesystem::path(opt.gguf_path).filename().string();
  const bool embed = !opt.embed_image.empty();
  out.header = banner +
               "#pragma once\n\n#include <cstdint>\n#include <memory>\n#include <string>\n\n"
               "#include \"engine/timing/kernel_times.hpp\"\n#include \"engine/model/model.hpp\"\n\n"
               "namespace " + ns + " {\n\n"
               "// The GGUF this model was compiled from, where it was at build time.\n"
               "inline constexpr const char* kDefaultGguf = " + quoted(opt.gguf_path) + ";\n"
               "// Whether its weights are built into this code (kiln_add_model ... EMBED).\n"
               "inline constexpr bool kBuiltIn = " + bool_literal(embed) + ";\n\n"
               "// The model: " + (embed ? "the weights built into the program, read in place.\n"
                                         : "the GGUF kiln::default_model_path finds ($KILN_MODEL_PATH, else\n"
                                           "// " + gguf_file + " next to the program, else kDefaultGguf).\n") +
               "std::unique_ptr<kiln::Model> load();\n"
               "// Maps a GGUF holding this model's weights. Throws kiln::Error if the file is\n"
               "// unreadable or is not the model this code was generated for.\n"
               "std::unique_ptr<kiln::Model> load(const std::string& gguf_path);\n\n"
               "// Sequence::forward of one of this model's sequences, with every kernel\n"
               "// call timed (same results). In " + opt.name + ".timed.cpp, the library " + opt.name + "_timed.\n"
               "kiln::KernelTimes time_kernels(kiln::Sequence& seq, const int32_t* tokens, int n, int pos, kiln::Logits which,\n"
               "                               float* logits);\n\n"
               "}  // namespace " + ns + "\n";

  out.forward = emit_forward(d, opt, banner, internal_ns);
  out.timed = banner + "#include \"" + opt.name + ".hpp\"\n" + forward_include +
              "#include \"models/decoder/compiled_model.hpp\"\n\n" +
              "kiln::KernelTimes " + ns + "::time_kernels(kiln::Sequence& seq, const int32_t* tokens, int n, int pos,\n" +
              "                                        kiln::Logits which, float* logits) {\n" +
              "  return kiln::decoder::time_kernels<generated::Config, generated::Forward>(seq, tokens, n, pos, which, logits);\n" +
              "}\n";

  // The weight image's bounds, defined in <name>.weights.cpp.
  const std::string image_symbol = "kiln_weights_" + identifier(opt.name);
  std::ostringstream m;
  m << banner << "#include \"" << opt.name << ".hpp\"\n" << forward_include
    << "\n#include \"engine/model/model_path.hpp\"\n#include \"models/decoder/compiled_model.hpp\"\n\n";
  if (embed)
    m << "// The weight image, in the program's read-only data (" << opt.name << ".weights.cpp).\n"
      << "extern \"C\" __attribute__((visibility(\"hidden\"))) const unsigned char " << image_symbol << "[];\n"
      << "extern \"C\" __attribute__((visibility(\"hidden\"))) const uint64_t " << image_symbol << "_size;\n\n";
  m << "namespace " << ns << " {\n\nnamespace {\n\n";
  emit_desc(m, d);
  m << "using Compiled = kiln::decoder::CompiledModel<generated::Config, generated::Forward>;\n\n"
    << "}  // namespace\n\n"
    << "std::unique_ptr<kiln::Model> load(const std::string& gguf_path) {\n"
    << "  return std::make_unique<Compiled>(compiled_desc(), gguf_path);\n"
    << "}\n\n"
    << "std::unique_ptr<kiln::Model> load() {\n";
  if (embed)
    m << "  const std::span<const uint8_t> image(" << image_symbol << ", size_t(" << image_symbol << "_size));\n"
      << "  return std::make_unique<Compiled>(compiled_desc(), image, " << quoted(opt.name + " (built in)") << ");\n";
  else
    m << "  return load(kiln::default_model_path(" << quoted(gguf_file) << ", kDefaultGguf));\n";
  m << "}\n\n}  // namespace " << ns << "\n";
  out.model = m.str();

  if (embed) {
    out.pack = banner + forward_include + "#include \"models/decoder/pack_weights.hpp\"\n\n" +
               "int main(int argc, char** argv) {\n  return kiln::decoder::pack_main<" + internal_ns +
               "::Config>(argc, argv, " + quoted(opt.name + "-pack") + ");\n}\n";
    out.weights = emit_weights(opt.embed_image, image_symbol, banner);
  }

  auto program = [&](const std::string& header, const std::string& entry, const std::string& more_args = "") {
    return banner + "#include \"" + opt.name + ".hpp\"\n#include \"" + header + "\"\n\n" +
           "int main(int argc, char** argv) {\n  return kiln::" + entry + "(argc, argv, {" + quoted(opt.name) + ", " +
           ns + "::kDefaultGguf, " + ns + "::kBuiltIn, " + ns + "::load, " + ns + "::load}" + more_args + ");\n}\n";
  };
  out.main = program("apps/cli.hpp", "cli_main");
  out.bench = program("apps/bench.hpp", "bench_main", ", " + ns + "::time_kernels");
  out.capi = banner + "#include \"" + opt.name + ".hpp\"\n#include \"capi/compiled_model.hpp\"\n\n" +
             "std::unique_ptr<kiln::Model> kiln::capi::load_compiled_model(const std::string& gguf_path) {\n" +
             "  return gguf_path.empty() ? " + ns + "::load() : " + ns + "::load(gguf_path);\n}\n";
  out.perplexity = program("apps/perplexity.hpp", "perplexity_main");
  out.server = program("apps/server/server.hpp", "server_main");
  return out;
}

}  // namespace kiln::codegen
