// kiln-codegen: reads a GGUF's metadata and tensor directory (never the
// weight values) and writes the C++ source of that model's forward pass.
//
//   kiln-codegen MODEL.gguf --name NAME --out-dir DIR [--ctx N] [--batch N] [--kv f16|f32] [--swa-full]
//                [--embed IMAGE]
//
// --embed IMAGE: the program carries its weights, from the weight image
// IMAGE that <name>-pack writes (also generated: <name>.pack.cpp and
// <name>.weights.cpp).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "apps/cli_support.hpp"
#include "codegen/emit.hpp"
#include "engine/files/atomic_file.hpp"
#include "engine/gguf/gguf.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "models/describe.hpp"

namespace {

constexpr int kDefaultMaxCtx = 4096;  // default cache size when the model was trained for more
constexpr int kDefaultBatch = 512;

int parse_count(const std::string& flag, const std::string& value) {
  return static_cast<int>(kiln::parse_int(flag, value, 0, 1 << 24));
}

kiln::TensorType parse_kv_type(const std::string& value) {
  if (value == "f16") return kiln::TensorType::F16;
  if (value == "f32") return kiln::TensorType::F32;
  throw kiln::Error("--kv must be f16 or f32, not '" + value + "'");
}

// Rewrites a file only when its content changes, so a re-run of codegen
// does not force the model to recompile.
void write_if_changed(const std::filesystem::path& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  const std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in && old == text) return;
  kiln::write_file_atomically(path.string(), {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

int run(int argc, char** argv) {
  std::string gguf, out_dir;
  kiln::codegen::BuildOptions opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw kiln::Error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--name") opt.name = value();
    else if (a == "--out-dir") out_dir = value();
    else if (a == "--ctx") opt.n_ctx = parse_count(a, value());
    else if (a == "--batch") opt.max_batch = parse_count(a, value());
    else if (a == "--kv") opt.kv_type = parse_kv_type(value());
    else if (a == "--swa-full") opt.swa_full = true;
    else if (a == "--embed") opt.embed_image = std::filesystem::absolute(value()).string();
    else if (!a.empty() && a[0] != '-' && gguf.empty()) gguf = a;
    else throw kiln::Error("unknown argument '" + a + "'");
  }
  if (gguf.empty() || opt.name.empty() || out_dir.empty())
    throw kiln::Error("usage: kiln-codegen MODEL.gguf --name NAME --out-dir DIR [--ctx N] [--batch N] [--kv f16|f32] "
                      "[--swa-full] [--embed IMAGE]");

  const kiln::GgufFile file = kiln::GgufFile::open(gguf);
  const kiln::ModelDesc desc = kiln::describe_model(file);
  kiln::Tokenizer::from_gguf(file);  // a vocabulary the engine cannot read is refused now, not at run time
  opt.gguf_path = std::filesystem::weakly_canonical(std::filesystem::absolute(gguf)).string();
  if (opt.n_ctx == 0) opt.n_ctx = std::min(desc.hp.n_ctx_train, kDefaultMaxCtx);
  if (opt.max_batch == 0) opt.max_batch = std::min(kDefaultBatch, opt.n_ctx);
  if (opt.max_batch > opt.n_ctx)
    throw kiln::Error("--batch " + std::to_string(opt.max_batch) + " is larger than --ctx " + std::to_string(opt.n_ctx));

  const auto src = kiln::codegen::emit_model(desc, opt);
  std::filesystem::create_directories(out_dir);
  const std::filesystem::path dir(out_dir);
  write_if_changed(dir / (opt.name + ".hpp"), src.header);
  write_if_changed(dir / (opt.name + ".forward.hpp"), src.forward);
  write_if_changed(dir / (opt.name + ".gen.cpp"), src.model);
  write_if_changed(dir / (opt.name + ".timed.cpp"), src.timed);
  write_if_changed(dir / (opt.name + ".main.cpp"), src.main);
  write_if_changed(dir / (opt.name + ".bench.cpp"), src.bench);
  write_if_changed(dir / (opt.name + ".capi.cpp"), src.capi);
  write_if_changed(dir / (opt.name + ".perplexity.cpp"), src.perplexity);
  write_if_changed(dir / (opt.name + ".server.cpp"), src.server);
  if (!opt.embed_image.empty()) {
    write_if_changed(dir / (opt.name + ".pack.cpp"), src.pack);
    write_if_changed(dir / (opt.name + ".weights.cpp"), src.weights);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return kiln::run_reporting_errors("kiln-codegen", [&] { return run(argc, argv); });
}
