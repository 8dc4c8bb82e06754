// GGUF reading and writing: the shared reference files parse, the writer
// round-trips every value type, every kind of malformed file is refused with
// a message naming the problem, and files are replaced atomically.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/files/atomic_file.hpp"
#include "engine/gguf/gguf.hpp"
#include "engine/gguf/gguf_writer.hpp"
#include "apps/resident_memory.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/temp_folder.hpp"

namespace fs = std::filesystem;
using kiln::GgufFile;
using kiln::GgufValue;
using kiln::GgufValueType;
using kiln::GgufWriter;
using kiln::TensorType;
using kiln::test::TempFolder;
using Bytes = std::vector<uint8_t>;

namespace {

// ---- helpers ----

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7);
  return b;
}

GgufValue u16(uint16_t v) { return {GgufValueType::UINT16, uint64_t{v}}; }

GgufValue array_of(GgufValueType elem_type, std::vector<GgufValue> items) {
  return {GgufValueType::ARRAY, kiln::gguf_array(elem_type, items)};
}

// An array of uint16 wrapped in `levels` arrays in total.
GgufValue nested_array(int levels) {
  GgufValue v = array_of(GgufValueType::UINT16, {u16(7)});
  for (int i = 1; i < levels; ++i) v = array_of(GgufValueType::ARRAY, {v});
  return v;
}

// A small valid file: two keys of the same length (so one can be renamed
// into the other), an int32 array, and two tensors that end the file.
GgufWriter small_writer(uint64_t alignment = 32) {
  GgufWriter w(alignment);
  w.add_string("test.one", "llama");
  w.add_bool("test.two", true);
  w.add_i32_array("test.array", {1, -2, 3});
  w.add_tensor("tensor.a1", TensorType::F32, {16}, pattern(64, 1));
  w.add_tensor("tensor.a2", TensorType::Q8_0, {32, 2}, pattern(68, 2));
  return w;
}

// Offset of the first occurrence of `text` in `image`.
size_t find_text(const Bytes& image, std::string_view text) {
  const auto it = std::search(image.begin(), image.end(), text.begin(), text.end());
  REQUIRE(it != image.end());
  return static_cast<size_t>(it - image.begin());
}

template <typename T>
void patch(Bytes& image, size_t offset, T value) {
  std::memcpy(image.data() + offset, &value, sizeof value);
}

// Where the fields of a key/value pair and of a tensor info sit in an image.
struct KeyAt {
  size_t length, type, value;
};
KeyAt key_at(const Bytes& image, std::string_view key) {
  const size_t text = find_text(image, key);
  return {text - 8, text + key.size(), text + key.size() + 4};
}

struct TensorInfoAt {
  size_t n_dims, dims, type, offset;
};
TensorInfoAt tensor_at(const Bytes& image, std::string_view name, size_t n_dims) {
  const size_t after_name = find_text(image, name) + name.size();
  return {after_name, after_name + 4, after_name + 4 + 8 * n_dims, after_name + 8 + 8 * n_dims};
}

void check_rejected(const Bytes& image, const std::string& expected) {
  CHECK_THROWS_WITH_AS(GgufFile::from_bytes(image, "test.gguf"), doctest::Contains(expected.c_str()),
                       kiln::Error);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// ---- a model using every metadata value type and every supported tensor type ----

const std::vector<std::pair<std::string, GgufValue>>& every_value_type() {
  static const std::vector<std::pair<std::string, GgufValue>> values = {
      {"t.u8", {GgufValueType::UINT8, uint64_t{200}}},
      {"t.i8", {GgufValueType::INT8, int64_t{-100}}},
      {"t.u16", u16(60000)},
      {"t.i16", {GgufValueType::INT16, int64_t{-30000}}},
      {"t.u32", {GgufValueType::UINT32, uint64_t{4000000000}}},
      {"t.i32", {GgufValueType::INT32, int64_t{-2000000000}}},
      {"t.u64", {GgufValueType::UINT64, uint64_t{UINT64_MAX}}},
      {"t.i64", {GgufValueType::INT64, int64_t{INT64_MIN}}},
      {"t.f32", {GgufValueType::FLOAT32, 1.5}},
      {"t.f64", {GgufValueType::FLOAT64, -2.25e300}},
      {"t.bool", {GgufValueType::BOOL, true}},
      {"t.string", {GgufValueType::STRING, std::string("h\xC3\xA9llo w\xC3\xB6rld \xE2\x9C\x93 "
                                                       "\xE6\x97\xA5\xE6\x9C\xAC")}},  // héllo wörld ✓ 日本
      {"t.empty_string", {GgufValueType::STRING, std::string()}},
      {"t.nested", array_of(GgufValueType::ARRAY, {array_of(GgufValueType::UINT16, {u16(1), u16(2)}),
                                                   array_of(GgufValueType::UINT16, {u16(3)})})},
      {"t.empty_array", array_of(GgufValueType::INT64, {})},
      {"t.strings", array_of(GgufValueType::STRING, {{GgufValueType::STRING, std::string("a")},
                                                     {GgufValueType::STRING, std::string("\xC3\xBC")}})},
  };
  return values;
}

struct TensorSpec {
  std::string name;
  TensorType type;
  std::vector<int64_t> dims;
  Bytes data;
};

const std::vector<TensorSpec>& every_tensor_type() {
  static const std::vector<TensorSpec> tensors = {
      {"w.f32", TensorType::F32, {4, 2}, pattern(32, 1)},
      {"w.f16", TensorType::F16, {8}, pattern(16, 2)},
      {"w.q8_0", TensorType::Q8_0, {32, 2}, pattern(68, 3)},
      {"w.q4_0", TensorType::Q4_0, {64, 1, 1}, pattern(36, 4)},
      {"w.bf16", TensorType::BF16, {3}, pattern(6, 5)},
      {"w.q4_k", TensorType::Q4_K, {256}, pattern(144, 6)},
      {"w.q5_k", TensorType::Q5_K, {256}, pattern(176, 7)},
      {"w.q6_k", TensorType::Q6_K, {256, 2}, pattern(420, 8)},
  };
  return tensors;
}

GgufWriter every_type_writer(uint64_t alignment) {
  GgufWriter w(alignment);
  for (const auto& [key, value] : every_value_type()) w.add(key, value);
  w.add_f32("t.f32_helper", 0.25f);
  w.add_u32("t.u32_helper", 7);
  w.add_string_array("t.string_array", {"x", "yz"});
  w.add_f32_array("t.f32_array", {0.5f, -1.0f});
  w.add_i32_array("t.i32_array", {-1, 2});
  for (const TensorSpec& t : every_tensor_type()) w.add_tensor(t.name, t.type, t.dims, t.data);
  return w;
}

}  // namespace

// ---- the shared reference files ----

TEST_CASE("stories260K.gguf parses" * kiln::test::needs_fixtures) {
  const GgufFile f = GgufFile::open(KILN_SHARED_DIR "/models/stories260K/stories260K.gguf");
  CHECK(f.version() == 3);
  CHECK(f.tensors().size() == 48);
  CHECK(f.alignment() == 32);
  CHECK(f.data_offset() == 14176);
  CHECK(f.get_string("general.architecture") == "llama");
  CHECK(f.get_uint("llama.embedding_length") == 64);
  CHECK(f.get_string_array("tokenizer.ggml.tokens").size() == 512);
  const kiln::GgufTensor* embd = f.find_tensor("token_embd.weight");
  REQUIRE(embd != nullptr);
  CHECK(embd->dims == std::vector<int64_t>{64, 512});
  CHECK(embd->nbytes == kiln::row_bytes(embd->type, 64) * 512);
}

TEST_CASE("the synthetic llama models parse, whatever their weight types" * kiln::test::needs_fixtures) {
  struct Case {
    const char* file;       // llama-<file>.gguf
    const char* embd_type;  // the type of token_embd in it
  };
  for (const Case c : {Case{"f32", "f32"}, {"f16", "f16"}, {"bf16", "bf16"}, {"q8_0", "q8_0"}, {"q4_0", "q4_0"},
                       {"q4_k_m", "q4_k"}, {"q5_k_m", "q5_k"}, {"q6_k", "q6_k"}}) {
    CAPTURE(c.file);
    const GgufFile f = GgufFile::open(std::string(KILN_SHARED_DIR "/models/synthetic/llama-") + c.file + ".gguf");
    CHECK(f.tensors().size() == 21);
    CHECK(f.get_uint("llama.embedding_length") == 256);
    const kiln::GgufTensor* embd = f.find_tensor("token_embd.weight");
    REQUIRE(embd != nullptr);
    CHECK(kiln::traits_of(embd->type).name == c.embd_type);
    CHECK(embd->dims == std::vector<int64_t>{256, 1024});
    CHECK(f.find_tensor("output_norm.weight")->type == TensorType::F32);
  }
  // The _M mixes keep some matrices in Q6_K.
  const GgufFile q4_k_m = GgufFile::open(KILN_SHARED_DIR "/models/synthetic/llama-q4_k_m.gguf");
  CHECK(q4_k_m.find_tensor("output.weight")->type == TensorType::Q6_K);
  CHECK(q4_k_m.find_tensor("blk.1.ffn_down.weight")->type == TensorType::Q6_K);
  CHECK(q4_k_m.find_tensor("blk.1.ffn_up.weight")->type == TensorType::Q4_K);
}

TEST_CASE("the vocab-only files parse" * kiln::test::needs_fixtures) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(KILN_SHARED_DIR "/tokenizer-tests")) {
    if (entry.path().extension() != ".gguf") continue;
    CAPTURE(entry.path().string());
    const GgufFile f = GgufFile::open(entry.path().string());
    CHECK(f.tensors().empty());
    CHECK(f.get_string_array("tokenizer.ggml.tokens").size() > 30000);
    ++files;
  }
  CHECK(files == 7);
}

// ---- writer round trip ----

TEST_CASE("the writer's output reads back equal") {
  for (uint64_t alignment : {32, 64}) {
    CAPTURE(alignment);
    const GgufFile f = GgufFile::from_bytes(every_type_writer(alignment).bytes());
    CHECK(f.version() == 3);
    CHECK(f.alignment() == alignment);
    CHECK(f.data_offset() % alignment == 0);
    for (const auto& entry : every_value_type()) {
      // Not a structured binding: CAPTURE's lambda cannot capture one in Clang 14.
      const std::string& key = entry.first;
      CAPTURE(key);
      REQUIRE(f.find(key) != nullptr);
      CHECK(*f.find(key) == entry.second);
    }
    CHECK(f.get_float_or("t.f32_helper", 0) == 0.25);
    CHECK(f.get_uint("t.u32_helper") == 7);
    CHECK(f.get_string_array("t.string_array") == std::vector<std::string>{"x", "yz"});
    CHECK(f.get_float_array_or_empty("t.f32_array") == std::vector<float>{0.5f, -1.0f});
    CHECK(f.get_int_array_or_empty("t.i32_array") == std::vector<int32_t>{-1, 2});

    REQUIRE(f.tensors().size() == every_tensor_type().size());
    for (size_t i = 0; i < f.tensors().size(); ++i) {
      const kiln::GgufTensor& got = f.tensors()[i];
      const TensorSpec& want = every_tensor_type()[i];
      CAPTURE(want.name);
      CHECK(got.name == want.name);
      CHECK(got.type == want.type);
      CHECK(got.ggml_type == static_cast<uint32_t>(want.type));
      CHECK(got.dims == want.dims);
      CHECK(got.offset % alignment == 0);
      CHECK(got.nbytes == want.data.size());
      CHECK(Bytes(got.data, got.data + got.nbytes) == want.data);
    }
  }
}

TEST_CASE("rows of a matrix are a view of its bytes; rows outside it are refused") {
  const GgufFile f = GgufFile::from_bytes(small_writer().bytes());
  const kiln::GgufTensor& whole = *f.find_tensor("tensor.a2");  // Q8_0 [32, 2]: one 34-byte block per row
  const kiln::GgufTensor second = whole.rows({1, 1});
  CHECK(second.dims == std::vector<int64_t>{32, 1});
  CHECK(second.nbytes == 34);
  CHECK(second.data == whole.data + 34);
  CHECK(second.offset == whole.offset + 34);
  CHECK_THROWS_WITH_AS(whole.rows({1, 2}), "tensor 'tensor.a2' is not a matrix with rows 1 to 2", kiln::Error);
  CHECK_THROWS_AS(f.find_tensor("tensor.a1")->rows({0, 1}), kiln::Error);  // a vector
}

TEST_CASE("the writer refuses inconsistent input") {
  GgufWriter w;
  w.add_u32("k", 1);
  CHECK_THROWS_WITH_AS(w.add_u32("k", 2), doctest::Contains("key 'k' added twice"), kiln::Error);
  CHECK_THROWS_WITH_AS(w.add("small", {GgufValueType::UINT8, uint64_t{256}}),
                       doctest::Contains("does not fit its type uint8"), kiln::Error);
  CHECK_THROWS_WITH_AS(w.add("mixed", array_of(GgufValueType::UINT16, {{GgufValueType::BOOL, true}})),
                       doctest::Contains("does not fit its type bool"), kiln::Error);
  CHECK_THROWS_WITH_AS(w.add_u32("general.alignment", 64), doctest::Contains("constructor"), kiln::Error);
  CHECK_THROWS_WITH_AS(w.add_tensor("t", TensorType::Q8_0, {32}, Bytes(33)),
                       doctest::Contains("has 33 bytes of data; its type and shape need 34"), kiln::Error);
  CHECK_THROWS_WITH_AS(w.add_tensor("t", TensorType::Q4_0, {16}, Bytes(9)),
                       doctest::Contains("not a multiple of the q4_0 block size 32"), kiln::Error);
  w.add_tensor("t", TensorType::F32, {1}, Bytes(4));
  CHECK_THROWS_WITH_AS(w.add_tensor("t", TensorType::F32, {1}, Bytes(4)), doctest::Contains("added twice"),
                       kiln::Error);
  CHECK_THROWS_AS(GgufWriter(24), kiln::Error);
}

// ---- typed getters ----

TEST_CASE("typed getters convert what fits and name what does not") {
  const GgufFile f = GgufFile::from_bytes(every_type_writer(32).bytes(), "m.gguf");
  CHECK(f.get_uint("t.u8") == 200);
  CHECK(f.get_int_or("t.i64", 0) == INT64_MIN);
  CHECK(f.get_int_or("absent", 5) == 5);
  CHECK(f.get_uint_or("absent", 6) == 6);
  CHECK(f.get_float_or("t.i16", 0) == -30000.0);
  CHECK(f.get_bool_or("t.bool", false));
  CHECK(f.get_string_or("absent", "x") == "x");
  CHECK(f.get_int_array_or_empty("absent").empty());
  CHECK_THROWS_WITH_AS(f.get_uint("t.string"), "m.gguf: key 't.string' has type string, expected an integer",
                       kiln::Error);
  CHECK_THROWS_WITH_AS(f.get_uint("absent"), "m.gguf: missing key 'absent'", kiln::Error);
  CHECK_THROWS_WITH_AS(f.get_uint("t.i8"), doctest::Contains("holds -100, which does not fit in uint64"),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(f.get_int_or("t.u64", 0), doctest::Contains("does not fit in int64"), kiln::Error);
  CHECK_THROWS_WITH_AS(f.get_string_array("t.nested"),
                       doctest::Contains("has type array of array, expected an array of strings"), kiln::Error);
  CHECK_THROWS_WITH_AS(f.get_bool_or("t.u8", false), doctest::Contains("expected a bool"), kiln::Error);
}

TEST_CASE("for_each_string views each string of an array, and refuses arrays of other types") {
  const GgufFile f = GgufFile::from_bytes(every_type_writer(32).bytes(), "m.gguf");
  std::vector<std::string> seen;
  f.for_each_string("t.string_array", [&](std::string_view s) { seen.emplace_back(s); });
  CHECK(seen == std::vector<std::string>{"x", "yz"});
  CHECK_THROWS_WITH_AS(f.for_each_string("t.i32_array", [](std::string_view) {}),
                       doctest::Contains("expected an array of strings"), kiln::Error);
  const auto& ints = std::get<kiln::GgufArray>(f.find("t.i32_array")->value);
  CHECK_THROWS_WITH_AS(ints.for_each_string([](std::string_view) {}), doctest::Contains("int32, not strings"),
                       kiln::Error);
}

// ---- malformed files ----

TEST_CASE("a file cut short at any byte is refused cleanly") {
  const Bytes image = every_type_writer(32).bytes();
  for (size_t n = 0; n < image.size(); ++n) {
    CAPTURE(n);
    CHECK_THROWS_AS(GgufFile::from_bytes(std::span(image).first(n)), kiln::Error);
  }
  CHECK_NOTHROW(GgufFile::from_bytes(image));
}

TEST_CASE("malformed headers are refused") {
  const Bytes good = small_writer().bytes();
  REQUIRE_NOTHROW(GgufFile::from_bytes(good));
  Bytes b = good;

  SUBCASE("bad magic") {
    b[0] = 'X';
    check_rejected(b, "test.gguf: not a GGUF file (bad magic at offset 0)");
  }
  SUBCASE("version 1") {
    patch<uint32_t>(b, 4, 1);
    check_rejected(b, "GGUF version 1 at offset 4 is not supported");
  }
  SUBCASE("version 4") {
    patch<uint32_t>(b, 4, 4);
    check_rejected(b, "GGUF version 4 at offset 4 is not supported");
  }
  SUBCASE("huge tensor count") {
    patch<uint64_t>(b, 8, uint64_t{1} << 40);
    check_rejected(b, "tensor count 1099511627776 at offset 8 exceeds the limit");
  }
  SUBCASE("tensor count the file cannot hold") {
    patch<uint64_t>(b, 8, 1000);
    check_rejected(b, "tensor count 1000 at offset 8 needs more than the");
  }
  SUBCASE("huge key/value count") {
    patch<uint64_t>(b, 16, uint64_t{1} << 40);
    check_rejected(b, "key/value count 1099511627776 at offset 16 exceeds the limit");
  }
  SUBCASE("key/value count the file cannot hold") {
    patch<uint64_t>(b, 16, 100000);
    check_rejected(b, "key/value count 100000 at offset 16 needs more than the");
  }
}

TEST_CASE("malformed metadata is refused") {
  const Bytes good = small_writer().bytes();
  Bytes b = good;
  const KeyAt one = key_at(good, "test.one");
  const KeyAt array = key_at(good, "test.array");

  SUBCASE("string length past the end") {
    patch<uint64_t>(b, one.length, 9999999);
    check_rejected(b, "test.gguf: key 0: string length 9999999 at offset " + std::to_string(one.length) +
                          " runs past the end of the file (size " + std::to_string(b.size()) + ")");
  }
  SUBCASE("value string length past the end") {
    patch<uint64_t>(b, one.value, 9999999);
    check_rejected(b, "key 'test.one': string length 9999999");
  }
  SUBCASE("unknown value type") {
    patch<uint32_t>(b, one.type, 13);
    check_rejected(b, "key 'test.one': unknown value type 13 at offset " + std::to_string(one.type));
  }
  SUBCASE("unknown array element type") {
    patch<uint32_t>(b, array.value, 99);
    check_rejected(b, "key 'test.array': unknown value type 99");
  }
  SUBCASE("array longer than the file") {
    patch<uint64_t>(b, array.value + 4, uint64_t{1} << 40);
    check_rejected(b, "key 'test.array': array of 1099511627776 int32 at offset " +
                          std::to_string(array.value + 4) + " runs past the end of the file");
  }
  SUBCASE("bool that is neither 0 nor 1") {
    b[key_at(good, "test.two").value] = 2;
    check_rejected(b, "key 'test.two': bool value 2 at offset");
  }
  SUBCASE("duplicate key") {
    std::memcpy(&b[find_text(b, "test.two")], "test.one", 8);
    check_rejected(b, "test.gguf: duplicate key 'test.one' at offset");
  }
}

TEST_CASE("arrays nest up to 8 levels") {
  GgufWriter deep;
  deep.add("deep", nested_array(8));
  CHECK(GgufFile::from_bytes(deep.bytes()).find("deep")->type == GgufValueType::ARRAY);
  GgufWriter too_deep;
  too_deep.add("deep", nested_array(9));
  check_rejected(too_deep.bytes(), "key 'deep': arrays nested deeper than 8 levels");
}

TEST_CASE("a large metadata array costs its size in memory, not an object per element") {
  // One uint8 array of 8 MiB, laid out by hand.
  constexpr uint64_t n = uint64_t{8} << 20;
  Bytes image(std::begin(kiln::kGgufMagic), std::end(kiln::kGgufMagic));
  const auto put = [&]<typename T>(T v) {
    image.resize(image.size() + sizeof v);
    std::memcpy(image.data() + image.size() - sizeof v, &v, sizeof v);
  };
  put(uint32_t{3});  // version
  put(uint64_t{0});  // tensors
  put(uint64_t{1});  // keys
  put(uint64_t{7});
  image.insert(image.end(), {'t', '.', 'b', 'y', 't', 'e', 's'});
  put(static_cast<uint32_t>(GgufValueType::ARRAY));
  put(static_cast<uint32_t>(GgufValueType::UINT8));
  put(n);
  image.resize(image.size() + n, 5);
  if (!kiln::reset_peak_resident()) {
    MESSAGE("this system cannot reset the peak resident set; skipped");
    return;
  }
  const int64_t before = kiln::own_status_bytes("VmHWM").value();
  const GgufFile f = GgufFile::from_bytes(image);  // copies the n bytes of the image
  const int64_t peak = kiln::own_status_bytes("VmHWM").value();
  CHECK(peak - before < int64_t{4 * n});
  const auto& array = std::get<kiln::GgufArray>(f.find("t.bytes")->value);
  CHECK(array.count == n);
  CHECK(array.encoded.size() == n);
}

TEST_CASE("a bad general.alignment is refused") {
  const Bytes good = small_writer(64).bytes();
  REQUIRE(GgufFile::from_bytes(good).alignment() == 64);
  Bytes b = good;
  const KeyAt alignment = key_at(good, "general.alignment");
  SUBCASE("zero") {
    patch<uint32_t>(b, alignment.value, 0);
    check_rejected(b, "test.gguf: general.alignment 0 is not a power of two");
  }
  SUBCASE("three") {
    patch<uint32_t>(b, alignment.value, 3);
    check_rejected(b, "test.gguf: general.alignment 3 is not a power of two");
  }
  SUBCASE("not a uint32") {
    patch<uint32_t>(b, alignment.type, static_cast<uint32_t>(GgufValueType::INT32));
    check_rejected(b, "key 'general.alignment' has type int32, expected uint32");
  }
}

TEST_CASE("malformed tensor infos are refused") {
  const Bytes good = small_writer().bytes();
  Bytes b = good;
  const TensorInfoAt a2 = tensor_at(good, "tensor.a2", 2);

  SUBCASE("no dimensions") {
    patch<uint32_t>(b, a2.n_dims, 0);
    check_rejected(b, "test.gguf: tensor 'tensor.a2': 0 dimensions at offset " + std::to_string(a2.n_dims));
  }
  SUBCASE("five dimensions") {
    patch<uint32_t>(b, a2.n_dims, 5);
    check_rejected(b, "tensor 'tensor.a2': 5 dimensions");
  }
  SUBCASE("a zero dimension") {
    patch<uint64_t>(b, a2.dims + 8, 0);
    check_rejected(b, "tensor 'tensor.a2' has dimension 1 of size 0");
  }
  SUBCASE("ne0 not a multiple of the block") {
    patch<uint64_t>(b, a2.dims, 16);
    check_rejected(b, "tensor 'tensor.a2' has ne0 = 16, not a multiple of the q8_0 block size 32");
  }
  SUBCASE("element count overflows") {
    patch<uint64_t>(b, a2.dims + 8, uint64_t{1} << 62);
    check_rejected(b, "tensor 'tensor.a2' has too many elements");
  }
  SUBCASE("unknown type id") {
    patch<uint32_t>(b, a2.type, 99);
    check_rejected(b, "test.gguf: tensor 'tensor.a2' has unsupported type unknown (ggml type 99)");
  }
  SUBCASE("known but unsupported type") {
    patch<uint32_t>(b, a2.type, 3);
    check_rejected(b, "test.gguf: tensor 'tensor.a2' has unsupported type q4_1 (ggml type 3)");
  }
  SUBCASE("unaligned offset") {
    patch<uint64_t>(b, a2.offset, 68);
    check_rejected(b, "tensor 'tensor.a2': data offset 68 at offset " + std::to_string(a2.offset) +
                          " is not a multiple of the alignment 32");
  }
  SUBCASE("offset past the end") {
    patch<uint64_t>(b, a2.offset, uint64_t{1} << 60);
    check_rejected(b, "tensor 'tensor.a2' data offset 1152921504606846976 lies outside the file");
  }
  SUBCASE("data running past the end") {
    patch<uint64_t>(b, a2.dims + 8, 3);  // 3 rows of 34 bytes instead of 2
    const uint64_t begin = GgufFile::from_bytes(good).data_offset() + 64;
    check_rejected(b, "tensor 'tensor.a2' data [" + std::to_string(begin) + ", " + std::to_string(begin + 102) +
                          ") lies outside the file (size " + std::to_string(b.size()) + ")");
  }
  SUBCASE("duplicate tensor name") {
    std::memcpy(&b[find_text(b, "tensor.a2")], "tensor.a1", 9);
    check_rejected(b, "test.gguf: duplicate tensor name 'tensor.a1' at offset");
  }
  SUBCASE("overlapping tensors") {
    patch<uint64_t>(b, a2.offset, 32);
    check_rejected(b, "tensors 'tensor.a1' [0, 64) and 'tensor.a2' [32, 100) overlap");
  }
}

TEST_CASE("open() reports files it cannot read") {
  TempFolder tmp("gguf");
  const std::string empty = (tmp.path / "empty.gguf").string();
  std::ofstream(empty).close();
  CHECK_THROWS_WITH_AS(GgufFile::open(empty), (empty + ": file is empty").c_str(), kiln::Error);
  const std::string missing = (tmp.path / "missing.gguf").string();
  CHECK_THROWS_WITH_AS(GgufFile::open(missing), (missing + ": cannot open (No such file or directory)").c_str(),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(GgufFile::open(tmp.path.string()), doctest::Contains("not a regular file"), kiln::Error);
}

TEST_CASE("GgufWriter::write and GgufFile::open agree") {
  TempFolder tmp("gguf");
  const std::string path = (tmp.path / "model.gguf").string();
  small_writer().write(path);
  GgufFile f = GgufFile::open(path);
  const GgufFile moved = std::move(f);
  CHECK(moved.get_string("test.one") == "llama");
  const kiln::GgufTensor* a2 = moved.find_tensor("tensor.a2");
  REQUIRE(a2 != nullptr);
  CHECK(Bytes(a2->data, a2->data + a2->nbytes) == pattern(68, 2));
}

// ---- atomic file replacement ----

TEST_CASE("write_file_atomically writes, replaces and cleans up") {
  TempFolder tmp("gguf");
  const fs::path target = tmp.path / "state.bin";
  kiln::write_file_atomically(target.string(), as_bytes("first"));
  CHECK(read_text(target) == "first");
  kiln::write_file_atomically(target.string(), as_bytes("second, longer"));
  CHECK(read_text(target) == "second, longer");
  CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 1);

  const std::string in_missing_folder = (tmp.path / "missing" / "state.bin").string();
  CHECK_THROWS_WITH_AS(kiln::write_file_atomically(in_missing_folder, as_bytes("x")),
                       doctest::Contains((in_missing_folder + ": cannot create").c_str()), kiln::Error);

  // A folder is refused before anything is written: neither it nor the file
  // written above changes, and no temporary file is left behind.
  const fs::path folder = tmp.path / "folder";
  fs::create_directories(folder / "inside");
  CHECK_THROWS_WITH_AS(kiln::write_file_atomically(folder.string(), as_bytes("x")),
                       (folder.string() + ": is a folder; kiln writes only regular files and character devices").c_str(),
                       kiln::Error);
  CHECK(fs::is_directory(folder / "inside"));
  CHECK(read_text(target) == "second, longer");
  CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 2);
}
