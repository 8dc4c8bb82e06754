// The weight image a program carries (models/weight_image.hpp): entries come
// back in order, aligned, each checked against what is asked for; a damaged
// image is refused in one line.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/error/error.hpp"
#include "models/weight_image.hpp"
#include "tests/support/temp_folder.hpp"

using kiln::WeightForm;
using kiln::test::TempFolder;

namespace {

// An image of two entries, with a 3-byte "GGUF header", as the bytes a program would carry.
std::vector<uint8_t> small_image(const TempFolder& tmp) {
  const std::vector<uint8_t> header = {'G', 'G', 'U'}, a = {1, 2, 3, 4, 5}, b(100, 7);
  kiln::WeightImageWriter out(tmp.file("w"), header, 0x1234);
  out.add(WeightForm::Vector, "a", a);
  out.add(WeightForm::Matrix, "b", b);
  out.finish();
  return kiln::test::read_bytes(tmp.file("w"));
}

// Aligned storage, as the program's read-only data is.
struct Aligned {
  std::vector<uint64_t> words;
  explicit Aligned(const std::vector<uint8_t>& bytes) : words((bytes.size() + 7) / 8) {
    std::memcpy(words.data(), bytes.data(), bytes.size());
  }
};

}  // namespace

TEST_CASE("entries come back in order, 64-byte aligned, with the GGUF header and hash") {
  TempFolder tmp("image");
  const std::vector<uint8_t> bytes = small_image(tmp);
  const Aligned storage(bytes);
  const auto* base = reinterpret_cast<const uint8_t*>(storage.words.data());
  kiln::WeightImage image({base, bytes.size()}, "m");
  CHECK(image.file_hash() == 0x1234);
  CHECK(std::string(image.gguf_header().begin(), image.gguf_header().end()) == "GGU");
  const uint8_t* a = image.next(WeightForm::Vector, "a");
  CHECK((a - base) % kiln::kWeightImageAlignment == 0);
  CHECK(a[4] == 5);
  CHECK_THROWS_WITH_AS(image.next(WeightForm::Vector, "b"),
                       "m: the built-in weights hold matrix 'b' where vector 'b' was expected (a mismatched build)",
                       kiln::Error);
}

TEST_CASE("asking past the end, or for another name, is a mismatched build") {
  TempFolder tmp("image-end");
  const std::vector<uint8_t> bytes = small_image(tmp);
  const Aligned storage(bytes);
  kiln::WeightImage image({reinterpret_cast<const uint8_t*>(storage.words.data()), bytes.size()}, "m");
  CHECK_THROWS_AS(image.next(WeightForm::Vector, "x"), kiln::Error);
  kiln::WeightImage again({reinterpret_cast<const uint8_t*>(storage.words.data()), bytes.size()}, "m");
  again.next(WeightForm::Vector, "a");
  again.next(WeightForm::Matrix, "b");
  CHECK_THROWS_WITH_AS(again.next(WeightForm::Raw, "c"),
                       "m: the built-in weights end before raw 'c' (a mismatched build)", kiln::Error);
}

TEST_CASE("a damaged image is refused") {
  TempFolder tmp("image-bad");
  const std::vector<uint8_t> bytes = small_image(tmp);
  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 1);
  CHECK_THROWS_AS(kiln::WeightImage(cut, "m"), kiln::Error);
  std::vector<uint8_t> bad_magic = bytes;
  bad_magic[0] = 'X';
  CHECK_THROWS_AS(kiln::WeightImage(bad_magic, "m"), kiln::Error);
  CHECK_THROWS_AS(kiln::WeightImage(std::vector<uint8_t>(10), "m"), kiln::Error);
  std::vector<uint8_t> bad_entry = bytes;
  bad_entry[bad_entry.size() - 24 - 8] = 0xff;  // the last table record's offset: far outside
  CHECK_THROWS_AS(kiln::WeightImage(bad_entry, "m"), kiln::Error);
}

TEST_CASE("an image of another format version (2: checksums of the earlier hash) is refused by its version") {
  TempFolder tmp("image-version");
  std::vector<uint8_t> bytes = small_image(tmp);
  bytes[8] = 2;  // the version, after the magic
  CHECK_THROWS_WITH_AS(kiln::WeightImage(bytes, "m"),
                       "m: the built-in weights are in format version 2, this binary reads version 3 (build the "
                       "program again)",
                       kiln::Error);
}

TEST_CASE("a checksum covers every byte anything reads: the GGUF header, each entry, the table, the header") {
  TempFolder tmp("image-checksum");
  const std::vector<uint8_t> bytes = small_image(tmp);
  const std::string damaged =
      "m: the built-in weights are damaged: their checksum does not match the one recorded when they were built "
      "(build or copy the program again)";
  const kiln::WeightImage intact(bytes, "m");
  // The header's file hash (byte 16), the GGUF header (64), an entry (128,
  // then 192 on), a table record's name (the last bytes).
  for (const size_t at : {size_t{16}, size_t{65}, size_t{130}, size_t{250}, bytes.size() - 8}) {
    CAPTURE(at);
    std::vector<uint8_t> flipped = bytes;
    flipped[at] ^= 0x10;
    CHECK_THROWS_WITH_AS(kiln::WeightImage(flipped, "m"), damaged.c_str(), kiln::Error);
  }
}
