#include "engine/session/state_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <span>

#include "engine/files/atomic_file.hpp"
#include "engine/files/content_hash.hpp"
#include "engine/error/error.hpp"

namespace kiln {

namespace {

static_assert(std::endian::native == std::endian::little, "state files are written in host byte order");

constexpr std::array<uint8_t, 8> kMagic = {'K', 'I', 'L', 'N', 'K', 'V', 'S', 'T'};
constexpr size_t kHeaderBytes = 52;
constexpr size_t kTypeNameOffset = 36;
constexpr size_t kTypeNameBytes = 12;
constexpr size_t kHeldFromOffset = kTypeNameOffset + kTypeNameBytes;
constexpr size_t kChecksumBytes = 8;
// Far beyond any model; keeps the size arithmetic of a corrupt header from overflowing.
constexpr uint32_t kMaxLayoutField = 1u << 20;

using HeaderBytes = std::array<uint8_t, kHeaderBytes>;

template <class T>
void put(uint8_t* at, T value) {
  std::memcpy(at, &value, sizeof value);
}

template <class T>
T get(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

uint64_t checksum(std::span<const uint8_t> header, std::span<const uint8_t> tokens, std::span<const uint8_t> kv) {
  return ContentHasher().add(header).add(tokens).add(kv).digest();
}

std::span<const uint8_t> bytes_of(const std::vector<int32_t>& tokens) {
  return {reinterpret_cast<const uint8_t*>(tokens.data()), tokens.size() * sizeof(int32_t)};
}

HeaderBytes encode_header(const SessionState& s) {
  if (s.kv.type.size() >= kTypeNameBytes) throw Error("KV element type name '" + s.kv.type + "' is too long");
  HeaderBytes h{};
  std::memcpy(h.data(), kMagic.data(), kMagic.size());
  put<uint32_t>(&h[8], kStateFileVersion);
  put<uint32_t>(&h[12], static_cast<uint32_t>(s.tokens.size()));
  put<uint64_t>(&h[16], s.fingerprint);
  put<uint32_t>(&h[24], static_cast<uint32_t>(s.kv.n_layer));
  put<uint32_t>(&h[28], static_cast<uint32_t>(s.kv.kv_dim));
  put<uint32_t>(&h[32], static_cast<uint32_t>(s.kv.bytes_per_value));
  std::memcpy(&h[kTypeNameOffset], s.kv.type.data(), s.kv.type.size());
  put<uint32_t>(&h[kHeldFromOffset], static_cast<uint32_t>(s.held_from));
  return h;
}

// Checks everything the header can say about itself and returns the state it
// announces, with tokens and KV bytes still empty.
SessionState decode_header(const HeaderBytes& h, uint32_t& n_tokens) {
  if (!std::equal(kMagic.begin(), kMagic.end(), h.begin())) throw Error("not a kiln state file (bad magic)");
  const uint32_t version = get<uint32_t>(&h[8]);
  if (version != kStateFileVersion)
    throw Error("format version " + std::to_string(version) + ", this binary reads version " +
                std::to_string(kStateFileVersion));
  const uint32_t n_layer = get<uint32_t>(&h[24]), kv_dim = get<uint32_t>(&h[28]),
                 bytes_per_value = get<uint32_t>(&h[32]);
  const auto* name = reinterpret_cast<const char*>(&h[kTypeNameOffset]);
  const size_t name_length = strnlen(name, kTypeNameBytes);
  if (n_layer == 0 || kv_dim == 0 || bytes_per_value == 0 || n_layer > kMaxLayoutField || kv_dim > kMaxLayoutField ||
      bytes_per_value > kMaxLayoutField || name_length == 0 || name_length == kTypeNameBytes)
    throw Error("corrupt header: impossible KV layout");
  n_tokens = get<uint32_t>(&h[12]);
  const uint32_t held_from = get<uint32_t>(&h[kHeldFromOffset]);
  if (held_from > n_tokens)
    throw Error("corrupt header: the sliding-window layers' positions start past the last token");
  SessionState s;
  s.held_from = static_cast<int>(held_from);
  s.fingerprint = get<uint64_t>(&h[16]);
  s.kv = {static_cast<int>(n_layer), static_cast<int>(kv_dim), std::string(name, name_length),
          static_cast<int>(bytes_per_value)};
  return s;
}

// A descriptor that is closed when it goes out of scope.
struct ReadOnlyFile {
  int fd;
  size_t size = 0;
  // Opened without blocking (a FIFO would wait for a writer), then checked
  // to be a regular file, whose reads never block anyway.
  explicit ReadOnlyFile(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {
    if (fd < 0) fail("cannot open");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      errno = err;
      fail("cannot stat");
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      throw Error("not a regular file");
    }
    size = static_cast<size_t>(st.st_size);
  }
  ~ReadOnlyFile() { ::close(fd); }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  [[noreturn]] static void fail(const char* what) {
    const int err = errno;
    throw Error(std::string(what) + " (" + std::strerror(err) + ")");
  }

  void read_exactly(void* out, size_t n) const {
    auto* at = static_cast<uint8_t*>(out);
    while (n > 0) {
      const ssize_t got = ::read(fd, at, n);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("cannot read");
      if (got == 0) throw Error("the file shrank while it was read");
      at += got;
      n -= static_cast<size_t>(got);
    }
  }
};

}  // namespace

void write_state_file(const std::string& path, const SessionState& state) {
  const HeaderBytes header = encode_header(state);
  const std::span<const uint8_t> tokens = bytes_of(state.tokens);
  std::vector<uint8_t> bytes;
  bytes.reserve(header.size() + tokens.size() + state.kv_bytes.size() + kChecksumBytes);
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), tokens.begin(), tokens.end());
  bytes.insert(bytes.end(), state.kv_bytes.begin(), state.kv_bytes.end());
  bytes.resize(bytes.size() + kChecksumBytes);
  put<uint64_t>(bytes.data() + bytes.size() - kChecksumBytes, checksum(header, tokens, state.kv_bytes));
  write_file_atomically(path, bytes);
}

SessionState read_state_file(const std::string& path) {
  const ReadOnlyFile file(path);
  const size_t size = file.size;
  if (size == 0) throw Error("the file is empty");
  if (size < kHeaderBytes + kChecksumBytes)
    throw Error("truncated: " + std::to_string(size) + " bytes, less than a header and a checksum");
  HeaderBytes header;
  file.read_exactly(header.data(), header.size());
  uint32_t n_tokens = 0;
  SessionState s = decode_header(header, n_tokens);

  const size_t body = size - kHeaderBytes - kChecksumBytes;
  const size_t per_token = sizeof(int32_t) + s.kv.bytes_per_position();
  if (n_tokens > body / per_token || body != n_tokens * per_token)
    throw Error("the file is " + std::to_string(size) + " bytes, which does not fit the " + std::to_string(n_tokens) +
                " tokens its header announces (truncated or corrupt)");
  s.tokens.resize(n_tokens);
  s.kv_bytes.resize(n_tokens * s.kv.bytes_per_position());
  file.read_exactly(s.tokens.data(), s.tokens.size() * sizeof(int32_t));
  file.read_exactly(s.kv_bytes.data(), s.kv_bytes.size());
  uint64_t stored = 0;
  file.read_exactly(&stored, sizeof stored);
  if (stored != checksum(header, bytes_of(s.tokens), s.kv_bytes)) throw Error("checksum mismatch: the file is corrupt");
  return s;
}

}  // namespace kiln
