// libFuzzer target: any bytes as a state file (--prompt-cache). Reading must
// succeed or throw kiln::Error, and what it accepts must be self-consistent.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/error/error.hpp"
#include "engine/session/state_file.hpp"

namespace {

// One in-memory file, rewritten for every input and read through its /proc path.
struct MemoryFile {
  int fd = ::memfd_create("kiln-fuzz-state", MFD_CLOEXEC);
  std::string path = "/proc/self/fd/" + std::to_string(fd);
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const MemoryFile file;
  if (file.fd < 0 || ::ftruncate(file.fd, 0) != 0 || ::pwrite(file.fd, data, size, 0) != ssize_t(size)) __builtin_trap();
  try {
    const kiln::SessionState s = kiln::read_state_file(file.path);
    if (s.kv_bytes.size() != s.tokens.size() * s.kv.bytes_per_position()) __builtin_trap();
    if (s.held_from < 0 || size_t(s.held_from) > s.tokens.size()) __builtin_trap();
  } catch (const kiln::Error&) {
  }
  return 0;
}
