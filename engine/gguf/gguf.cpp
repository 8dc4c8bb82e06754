// Opening and parsing GGUF files. The file is read through a bounds-checked
// cursor, so a truncated or corrupted file at any byte ends in kiln::Error,
// never in a read past the end.
#include "engine/gguf/gguf.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <set>

#include "engine/files/content_hash.hpp"

namespace kiln {

static_assert(std::endian::native == std::endian::little, "GGUF is read by copying little-endian bytes");

namespace {

// Limits that keep a corrupted header from making kiln allocate or loop for
// absurd sizes; real models are far below them.
constexpr uint64_t kMaxTensors = uint64_t{1} << 20;
constexpr uint64_t kMaxKeyValues = uint64_t{1} << 20;
constexpr int kMaxArrayNesting = 8;

// Smallest possible encodings, used to reject counts the remaining bytes
// cannot hold before anything is allocated for them.
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;        // key length, value type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // name length, n_dims, 1 dim, type, offset

std::string at(uint64_t offset) { return " at offset " + std::to_string(offset); }

[[noreturn]] void fail_with_errno(const std::string& path, const char* action) {
  const int err = errno;
  throw Error(path + ": cannot " + action + " (" + std::strerror(err) + ")");
}

// Closes the descriptor when open() returns; the mapping outlives it.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// A cursor over the file image. Every read checks that the bytes exist.
class Reader {
 public:
  Reader(const std::string& file, std::span<const uint8_t> bytes) : file_(file), bytes_(bytes) {}

  uint64_t offset() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  uint64_t size() const { return bytes_.size(); }
  const std::string& file() const { return file_; }
  std::span<const uint8_t> bytes() const { return bytes_; }

  // What is being read (e.g. "key 'general.name'"); prefixes fail() messages.
  void set_context(std::string context) { context_ = std::move(context); }

  template <typename T>
  T read(std::string_view what) {
    if (sizeof(T) > remaining())
      fail("file ends at offset " + std::to_string(size()) + " while reading " + std::string(what) + at(pos_));
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  // Moves past n bytes, which must exist; returns where they start.
  const uint8_t* skip(uint64_t n, std::string_view what) {
    if (n > remaining())
      fail("file ends at offset " + std::to_string(size()) + " while reading " + std::string(what) + at(pos_));
    const uint8_t* start = bytes_.data() + pos_;
    pos_ += n;
    return start;
  }

  // A string's bytes, viewed in place.
  std::string_view read_string_view(std::string_view what) {
    const uint64_t length_at = pos_;
    const auto length = read<uint64_t>(what);
    if (length > remaining())
      fail("string length " + std::to_string(length) + at(length_at) +
           " runs past the end of the file (size " + std::to_string(size()) + ")");
    const std::string_view s(reinterpret_cast<const char*>(bytes_.data() + pos_), length);
    pos_ += length;
    return s;
  }

  std::string read_string(std::string_view what) { return std::string(read_string_view(what)); }

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(file_ + ": " + (context_.empty() ? "" : context_ + ": ") + problem);
  }

 private:
  const std::string& file_;
  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  std::string context_;
};

// ---- metadata values ----

GgufValueType read_value_type(Reader& r) {
  const uint64_t type_at = r.offset();
  const auto id = r.read<uint32_t>("value type");
  if (id > static_cast<uint32_t>(GgufValueType::FLOAT64))
    r.fail("unknown value type " + std::to_string(id) + at(type_at));
  return static_cast<GgufValueType>(id);
}

uint64_t min_encoded_bytes(GgufValueType type) {
  switch (type) {
    case GgufValueType::UINT8: case GgufValueType::INT8: case GgufValueType::BOOL: return 1;
    case GgufValueType::UINT16: case GgufValueType::INT16: return 2;
    case GgufValueType::UINT32: case GgufValueType::INT32: case GgufValueType::FLOAT32: return 4;
    case GgufValueType::UINT64: case GgufValueType::INT64: case GgufValueType::FLOAT64: return 8;
    case GgufValueType::STRING: return 8;      // the length
    case GgufValueType::ARRAY: return 4 + 8;   // element type and count
  }
  return 1;  // not reached: read_value_type() lets only the ids above through
}

GgufValue read_value(Reader& r, GgufValueType type, int nesting);

// Checks and steps over `count` encoded elements of `type`: fixed-size ones
// at once, the others one by one (bools must be 0 or 1, strings must fit,
// nested arrays are checked the same way).
void skip_elements(Reader& r, GgufValueType type, uint64_t count, int nesting) {
  switch (type) {
    case GgufValueType::STRING:
      for (uint64_t i = 0; i < count; ++i) r.read_string_view("string length");
      return;
    case GgufValueType::BOOL: case GgufValueType::ARRAY:
      for (uint64_t i = 0; i < count; ++i) read_value(r, type, nesting);
      return;
    default:  // count * size fits: read_array checked count against the bytes left
      r.skip(count * min_encoded_bytes(type), gguf_type_name(type));
  }
}

// `nesting` counts the arrays enclosing the elements, this one included. The
// array keeps a view of its encoded elements, checked here.
GgufArray read_array(Reader& r, int nesting) {
  const uint64_t array_at = r.offset();
  if (nesting > kMaxArrayNesting)
    r.fail("arrays nested deeper than " + std::to_string(kMaxArrayNesting) + " levels" + at(array_at));
  GgufArray array;
  array.elem_type = read_value_type(r);
  const uint64_t count_at = r.offset();
  array.count = r.read<uint64_t>("array length");
  if (array.count > r.remaining() / min_encoded_bytes(array.elem_type))
    r.fail("array of " + std::to_string(array.count) + " " + std::string(gguf_type_name(array.elem_type)) +
           at(count_at) + " runs past the end of the file (size " + std::to_string(r.size()) + ")");
  const uint64_t begin = r.offset();
  skip_elements(r, array.elem_type, array.count, nesting);
  array.encoded = r.bytes().subspan(begin, r.offset() - begin);
  return array;
}

GgufValue read_value(Reader& r, GgufValueType type, int nesting) {
  switch (type) {
    case GgufValueType::UINT8: return {type, uint64_t{r.read<uint8_t>("uint8")}};
    case GgufValueType::INT8: return {type, int64_t{r.read<int8_t>("int8")}};
    case GgufValueType::UINT16: return {type, uint64_t{r.read<uint16_t>("uint16")}};
    case GgufValueType::INT16: return {type, int64_t{r.read<int16_t>("int16")}};
    case GgufValueType::UINT32: return {type, uint64_t{r.read<uint32_t>("uint32")}};
    case GgufValueType::INT32: return {type, int64_t{r.read<int32_t>("int32")}};
    case GgufValueType::UINT64: return {type, r.read<uint64_t>("uint64")};
    case GgufValueType::INT64: return {type, r.read<int64_t>("int64")};
    case GgufValueType::FLOAT32: return {type, double{r.read<float>("float32")}};
    case GgufValueType::FLOAT64: return {type, r.read<double>("float64")};
    case GgufValueType::STRING: return {type, r.read_string("string length")};
    case GgufValueType::ARRAY: return {type, read_array(r, nesting + 1)};
    case GgufValueType::BOOL: {
      const uint64_t bool_at = r.offset();
      const auto b = r.read<uint8_t>("bool");
      if (b > 1) r.fail("bool value " + std::to_string(b) + at(bool_at) + " is neither 0 nor 1");
      return {type, b == 1};
    }
  }
  r.fail("unknown value type " + std::to_string(static_cast<uint32_t>(type)));  // not reached, as above
}

// ---- header ----

uint32_t read_version(Reader& r) {
  const auto magic = r.read<std::array<char, 4>>("magic");
  if (!std::equal(magic.begin(), magic.end(), std::begin(kGgufMagic)))
    r.fail("not a GGUF file (bad magic" + at(0) + ")");
  const auto version = r.read<uint32_t>("version");
  if (version != 2 && version != 3)
    r.fail("GGUF version " + std::to_string(version) + at(4) + " is not supported (kiln reads versions 2 and 3)");
  return version;
}

uint64_t read_count(Reader& r, const std::string& what, uint64_t limit, uint64_t min_bytes_each) {
  const uint64_t count_at = r.offset();
  const auto count = r.read<uint64_t>(what);
  if (count > limit)
    r.fail(what + " " + std::to_string(count) + at(count_at) + " exceeds the limit of " + std::to_string(limit));
  if (count > r.remaining() / min_bytes_each)
    r.fail(what + " " + std::to_string(count) + at(count_at) + " needs more than the " +
           std::to_string(r.remaining()) + " bytes left in the file");
  return count;
}

std::map<std::string, GgufValue> read_metadata(Reader& r, uint64_t count) {
  std::map<std::string, GgufValue> kv;
  for (uint64_t i = 0; i < count; ++i) {
    r.set_context("key " + std::to_string(i));
    const uint64_t key_at = r.offset();
    std::string key = r.read_string("key length");
    r.set_context("key '" + key + "'");
    const GgufValueType type = read_value_type(r);
    GgufValue value = read_value(r, type, 0);
    if (!kv.emplace(key, std::move(value)).second)
      throw Error(r.file() + ": duplicate key '" + key + "'" + at(key_at));
  }
  return kv;
}

uint64_t alignment_from(const std::map<std::string, GgufValue>& kv, const std::string& file) {
  const auto it = kv.find("general.alignment");
  if (it == kv.end()) return kGgufDefaultAlignment;
  const GgufValue& v = it->second;
  if (v.type != GgufValueType::UINT32)
    throw Error(file + ": key 'general.alignment' has type " + std::string(gguf_type_name(v.type)) +
                ", expected uint32");
  const auto alignment = *v.as_integer<uint32_t>();
  if (!std::has_single_bit(alignment))
    throw Error(file + ": general.alignment " + std::to_string(alignment) + " is not a power of two");
  return alignment;
}

// ---- tensors ----

GgufTensor read_tensor_info(Reader& r, uint64_t index, uint64_t alignment, const std::string& file) {
  GgufTensor t;
  r.set_context("tensor " + std::to_string(index));
  t.name = r.read_string("tensor name length");
  const std::string what = "tensor '" + t.name + "'";
  r.set_context(what);  // for the messages of r.fail below

  const uint64_t dims_at = r.offset();
  const auto n_dims = r.read<uint32_t>("dimension count");
  if (n_dims == 0 || n_dims > kMaxTensorDims)
    r.fail(std::to_string(n_dims) + " dimensions" + at(dims_at) + " (kiln supports 1 to " +
           std::to_string(kMaxTensorDims) + ")");
  for (uint32_t i = 0; i < n_dims; ++i) t.dims.push_back(static_cast<int64_t>(r.read<uint64_t>("dimension")));

  t.ggml_type = r.read<uint32_t>("tensor type");
  const auto traits = type_traits(t.ggml_type);
  if (!traits)
    throw Error(file + ": " + what + " has unsupported type " + std::string(ggml_type_name(t.ggml_type)) +
                " (ggml type " + std::to_string(t.ggml_type) + ")");
  t.type = traits->type;

  const uint64_t offset_at = r.offset();
  t.offset = r.read<uint64_t>("tensor data offset");
  if (t.offset % alignment != 0)
    r.fail("data offset " + std::to_string(t.offset) + at(offset_at) +
           " is not a multiple of the alignment " + std::to_string(alignment));

  t.nbytes = tensor_nbytes(t.type, t.dims, file + ": " + what);
  return t;
}

std::string byte_range(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// Points each tensor at its data after checking it lies inside the file and
// overlaps no other tensor.
void place_tensors(std::vector<GgufTensor>& tensors, const uint8_t* base, uint64_t size, uint64_t data_offset,
                   const std::string& file) {
  for (GgufTensor& t : tensors) {
    if (t.offset > size)
      throw Error(file + ": tensor '" + t.name + "' data offset " + std::to_string(t.offset) +
                  " lies outside the file (size " + std::to_string(size) + ")");
    // nbytes fits in int64 and offset <= size, so these sums cannot overflow.
    const uint64_t begin = data_offset + t.offset;
    if (begin + t.nbytes > size)
      throw Error(file + ": tensor '" + t.name + "' data " + byte_range(begin, begin + t.nbytes) +
                  " lies outside the file (size " + std::to_string(size) + ")");
    t.data = base + begin;
  }
  std::vector<const GgufTensor*> by_offset;
  for (const GgufTensor& t : tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensor& prev = *by_offset[i - 1];
    const GgufTensor& next = *by_offset[i];
    if (next.offset < prev.offset + prev.nbytes)
      throw Error(file + ": tensors '" + prev.name + "' " + byte_range(prev.offset, prev.offset + prev.nbytes) +
                  " and '" + next.name + "' " + byte_range(next.offset, next.offset + next.nbytes) +
                  " overlap in the data section");
  }
}

}  // namespace

void GgufArray::for_each(const std::function<void(const GgufValue&)>& visit) const {
  const std::string name = "GGUF array of " + std::to_string(count) + " " + std::string(gguf_type_name(elem_type));
  Reader r(name, encoded);
  // Each element is checked as a value of its own, nested arrays in it up
  // to kMaxArrayNesting deep.
  for (uint64_t i = 0; i < count; ++i) visit(read_value(r, elem_type, 0));
  if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " bytes after the last element");
}

void GgufArray::for_each_string(const std::function<void(std::string_view)>& visit) const {
  const std::string name = "GGUF array of " + std::to_string(count) + " strings";  // outlives r, which refers to it
  Reader r(name, encoded);
  if (elem_type != GgufValueType::STRING)
    r.fail(std::string("its elements are ") + std::string(gguf_type_name(elem_type)) + ", not strings");
  for (uint64_t i = 0; i < count; ++i) visit(r.read_string_view("string length"));
  if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " bytes after the last element");
}

bool GgufArray::operator==(const GgufArray& other) const {
  return elem_type == other.elem_type && count == other.count && std::ranges::equal(encoded, other.encoded);
}

int64_t GgufTensor::n_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // cannot overflow: tensor_nbytes checked the shape
  return n;
}

GgufTensor GgufTensor::rows(RowRange r) const {
  if (dims.size() != 2 || r.first < 0 || r.count < 1 || r.first > dims[1] - r.count)
    throw Error("tensor '" + name + "' is not a matrix with rows " + std::to_string(r.first) + " to " +
                std::to_string(r.first + r.count - 1));
  const uint64_t row = nbytes / static_cast<uint64_t>(dims[1]);
  GgufTensor part = *this;
  part.dims[1] = r.count;
  part.offset += row * static_cast<uint64_t>(r.first);
  if (part.data) part.data += row * static_cast<uint64_t>(r.first);  // null: a file of metadata only
  part.nbytes = row * static_cast<uint64_t>(r.count);
  return part;
}

uint64_t tensor_nbytes(TensorType type, std::span<const int64_t> dims, const std::string& what) {
  if (dims.empty() || dims.size() > kMaxTensorDims)
    throw Error(what + " has " + std::to_string(dims.size()) + " dimensions (kiln supports 1 to " +
                std::to_string(kMaxTensorDims) + ")");
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 1)
      throw Error(what + " has dimension " + std::to_string(i) + " of size " + std::to_string(dims[i]) +
                  " (must be at least 1)");
  const TypeTraits traits = traits_of(type);
  if (dims[0] % traits.block_elems != 0)
    throw Error(what + " has ne0 = " + std::to_string(dims[0]) + ", not a multiple of the " +
                std::string(traits.name) + " block size " + std::to_string(traits.block_elems));
  int64_t elements = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(elements, d, &elements)) throw Error(what + " has too many elements");
  int64_t bytes = 0;
  if (__builtin_mul_overflow(elements / traits.block_elems, int64_t{traits.block_bytes}, &bytes))
    throw Error(what + " is too large");
  return static_cast<uint64_t>(bytes);
}

GgufFile GgufFile::open(const std::string& path) {
  GgufFile f;
  f.path_ = path;
  // Without blocking: opening a FIFO for reading would wait for a writer.
  const FileDescriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) fail_with_errno(path, "open");
  struct stat st {};
  if (fstat(file.fd, &st) != 0) fail_with_errno(path, "stat");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  f.size_ = static_cast<size_t>(st.st_size);
  f.identity_ = FileIdentity::of(st);
  if (f.size_ > 0) {  // mmap refuses length 0; parse() reports the empty file
    void* mapping = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (mapping == MAP_FAILED) fail_with_errno(path, "map");
    f.mapping_ = mapping;
    f.base_ = static_cast<const uint8_t*>(mapping);
  }
  f.parse();
  return f;
}

GgufFile GgufFile::from_bytes(std::span<const uint8_t> bytes, const std::string& name) {
  GgufFile f;
  f.path_ = name;
  f.owned_.assign(bytes.begin(), bytes.end());
  f.base_ = f.owned_.data();
  f.size_ = f.owned_.size();
  f.parse();
  return f;
}

GgufFile GgufFile::from_header(std::span<const uint8_t> bytes, const std::string& name) {
  GgufFile f;
  f.path_ = name;
  f.base_ = bytes.data();
  f.size_ = bytes.size();
  f.parse(/*with_data=*/false);
  return f;
}

GgufFile::GgufFile(GgufFile&& other) noexcept { *this = std::move(other); }

// Moving keeps every pointer valid: the mapping stays where it is, and a
// moved vector keeps its buffer.
GgufFile& GgufFile::operator=(GgufFile&& other) noexcept {
  if (this == &other) return *this;
  if (mapping_) munmap(mapping_, size_);
  path_ = std::move(other.path_);
  base_ = std::exchange(other.base_, nullptr);
  size_ = std::exchange(other.size_, 0);
  mapping_ = std::exchange(other.mapping_, nullptr);
  owned_ = std::move(other.owned_);
  identity_ = other.identity_;
  version_ = other.version_;
  alignment_ = other.alignment_;
  data_offset_ = other.data_offset_;
  kv_ = std::move(other.kv_);
  tensors_ = std::move(other.tensors_);
  return *this;
}

uint64_t GgufFile::hash_contents() const {
  constexpr size_t kPart = size_t{8} << 20;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  ContentHasher h;
  for (size_t at = 0; at < size_; at += kPart) {
    const size_t n = std::min(kPart, size_ - at);
    h.add({base_ + at, n});
    if (!mapping_) continue;
    // Whole pages only: the part's first and last page may hold bytes of its neighbours.
    const auto begin = (reinterpret_cast<uintptr_t>(base_ + at) + page - 1) / page * page;
    const auto end = reinterpret_cast<uintptr_t>(base_ + at + n) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
  return h.digest();
}

GgufFile::~GgufFile() {
  if (mapping_) munmap(mapping_, size_);
}

void GgufFile::parse(bool with_data) {
  if (size_ == 0) throw Error(path_ + ": file is empty");
  Reader r(path_, {base_, size_});
  version_ = read_version(r);
  const uint64_t tensor_count = read_count(r, "tensor count", kMaxTensors, kMinTensorInfoBytes);
  const uint64_t kv_count = read_count(r, "key/value count", kMaxKeyValues, kMinKeyValueBytes);
  kv_ = read_metadata(r, kv_count);
  alignment_ = alignment_from(kv_, path_);

  std::set<std::string> names;
  tensors_.reserve(tensor_count);
  for (uint64_t i = 0; i < tensor_count; ++i) {
    const uint64_t info_at = r.offset();
    GgufTensor t = read_tensor_info(r, i, alignment_, path_);
    if (!names.insert(t.name).second)
      throw Error(path_ + ": duplicate tensor name '" + t.name + "'" + at(info_at));
    tensors_.push_back(std::move(t));
  }
  // A file without tensors may end before this offset; nothing is read there.
  data_offset_ = gguf_align(r.offset(), alignment_);
  if (with_data) place_tensors(tensors_, base_, size_, data_offset_, path_);
}

}  // namespace kiln
