#include "apps/server/server_options.hpp"

#include <cstdint>

#include "engine/cli_support.hpp"
#include "engine/error.hpp"

namespace kiln {

ServerOptions parse_server_options(int argc, char** argv) {
  ServerOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&] { return flag_value(argc, argv, i); };
    if (flag == "-h" || flag == "--help") o.help = true;
    else if (flag == "-m" || flag == "--model") o.model_path = value();
    else if (flag == "--host") o.host = value();
    else if (flag == "--port") o.port = static_cast<int>(parse_int(flag, value(), 0, 65535));
    else if (flag == "-np" || flag == "--parallel") o.parallel = static_cast<int>(parse_int(flag, value(), 1, 256));
    else if (flag == "-t" || flag == "--threads") o.threads = static_cast<int>(parse_int(flag, value(), 1, 1024));
    else if (flag == "--api-key") o.api_key = value();
    else if (flag == "-a" || flag == "--alias") o.alias = value();
    else if (flag == "--chat-template-file") o.chat_template_file = value();
    else if (flag == "-cram" || flag == "--cache-ram") o.cache_ram_mib = parse_int(flag, value(), -1, 1LL << 40);
    else if (flag == "-c" || flag == "--ctx-size")
      throw Error(flag + ": the context size is fixed when the model is compiled (kiln_add_model CTX)");
    else throw Error("unknown flag '" + flag + "' (see --help)");
  }
  if (o.host.empty()) throw Error("--host: empty");
  if (!o.alias.empty() && o.alias.find_first_of("\r\n") != std::string::npos) throw Error("--alias: one line only");
  return o;
}

size_t cache_ram_bytes(const ServerOptions& o) {
  return o.cache_ram_mib < 0 ? SIZE_MAX : static_cast<size_t>(o.cache_ram_mib) << 20;
}

std::string server_usage(const char* name, const char* default_model) {
  return std::string("usage: ") + name + "-server [options]\n" +
         "An OpenAI-compatible HTTP server for " + name +
         ": POST /v1/chat/completions, /v1/completions; GET /v1/models, /health, /props.\n"
         "  -m, --model FILE            GGUF with this model's weights (default: " + default_model + ")\n"
         "  --host HOST                 address to listen on (default: 127.0.0.1)\n"
         "  --port N                    port to listen on; 0: any free one (default: 8080)\n"
         "  -np, --parallel N           slots: requests served at once, each with a KV cache of its own,\n"
         "                              their next tokens computed in one batched pass (default: 1)\n"
         "  -t, --threads N             threads (default: all hardware threads)\n"
         "  --api-key KEY               answer 401 to requests without 'Authorization: Bearer KEY'\n"
         "  -a, --alias NAME            the model's id in responses (default: " + name + ")\n"
         "  --chat-template-file FILE   a Jinja chat template instead of the GGUF's (ChatML if it has none)\n"
         "  -cram, --cache-ram N        MiB for the prefix cache: the KV state of prompts a slot gave up,\n"
         "                              seeding later requests that start the same way; -1: no limit,\n"
         "                              0: none (default: 8192)\n"
         "  -h, --help                  this help\n";
}

}  // namespace kiln
