// Writes seed inputs the fuzzers could not easily find on their own: valid
// state files (their checksum guards every byte) of a few layouts and
// lengths. Usage: fuzz_seeds DIR
#include <cstdio>
#include <string>

#include "engine/session/state_file.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  int written = 0;
  for (const int n_tokens : {0, 1, 3})
    for (const auto& [type, bytes] : {std::pair<const char*, int>{"f32", 4}, {"f16", 2}}) {
      kiln::SessionState s;
      s.fingerprint = 0x0123456789abcdefull + written;
      s.kv = {2, 4, type, bytes};
      for (int t = 0; t < n_tokens; ++t) s.tokens.push_back(t * 7 + 1);
      s.kv_bytes.resize(s.tokens.size() * s.kv.bytes_per_position());
      for (size_t i = 0; i < s.kv_bytes.size(); ++i) s.kv_bytes[i] = static_cast<uint8_t>(i * 13);
      kiln::write_state_file(dir + "/state-" + std::to_string(written++), s);
    }
  return 0;
}
