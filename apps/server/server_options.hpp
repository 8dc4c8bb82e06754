// The flags of <name>-server, named as llama-server names them.
#pragma once

#include <cstddef>
#include <string>

namespace kiln {

struct ServerOptions {
  std::string model_path;          // -m: else the GGUF the program was compiled from
  std::string host = "127.0.0.1";  // --host
  int port = 8080;                 // --port; 0: any free port (the one taken is printed)
  int parallel = 1;                // -np, --parallel: slots (requests admitted at once)
  int threads = 0;                 // -t: 0 is every hardware thread
  std::string api_key;             // --api-key: requests must carry it (Authorization: Bearer ...)
  std::string alias;               // -a, --alias: the model's id in responses; else the program's model name
  std::string chat_template_file;  // --chat-template-file: instead of the GGUF's template
  long long cache_ram_mib = 8192;  // -cram, --cache-ram: the prefix cache's budget in MiB; -1 no limit, 0 none
  bool help = false;
};

// Throws kiln::Error naming the flag for anything it cannot use.
ServerOptions parse_server_options(int argc, char** argv);
// --cache-ram in bytes: SIZE_MAX for no limit, 0 for no prefix cache.
size_t cache_ram_bytes(const ServerOptions& o);
std::string server_usage(const char* name, const char* default_model);

}  // namespace kiln
