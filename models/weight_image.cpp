#include "models/weight_image.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "engine/error/error.hpp"
#include "engine/files/content_hash.hpp"
#include "engine/files/mapped_file.hpp"

namespace kiln {

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'W', 'I', 'M', 'G'};
constexpr uint32_t kVersion = 3;  // 2: with the checksum; 3: XXH3-64 for it and the file hash

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t n_entries;
  uint64_t file_hash;
  uint64_t gguf_header_offset;
  uint64_t gguf_header_bytes;
  uint64_t table_offset;
  uint64_t total_bytes;
  uint64_t checksum;  // see image_checksum
};
static_assert(sizeof(Header) == 64);

// One table record; the name's bytes follow, padded to 8.
struct TableEntry {
  uint64_t offset;
  uint64_t bytes;
  uint32_t form;
  uint32_t name_bytes;
};
static_assert(sizeof(TableEntry) == 24);

constexpr uint64_t round_up(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// The content hash (engine/files/content_hash.hpp) of what an image holds, in
// this order: what `entries` was given (the GGUF header, then every entry in
// order, as the writer adds them and the reader binds them), then the table
// and the header with its checksum zeroed. Only the padding between entries,
// zeros nobody reads, is left out.
uint64_t image_checksum(ContentHasher entries, std::span<const uint8_t> table, Header h) {
  h.checksum = 0;
  return entries.add(table).add({reinterpret_cast<const uint8_t*>(&h), sizeof h}).digest();
}

const char* form_name(WeightForm form) {
  switch (form) {
    case WeightForm::Raw: return "raw";
    case WeightForm::Vector: return "vector";
    case WeightForm::Matrix: return "matrix";
  }
  return "unknown";
}

}  // namespace

WeightImageWriter::WeightImageWriter(const std::string& path, std::span<const uint8_t> gguf_header, uint64_t file_hash)
    : out_(path), gguf_header_bytes_(gguf_header.size()), file_hash_(file_hash) {
  const Header placeholder{};
  write(&placeholder, sizeof placeholder);
  write(gguf_header.data(), gguf_header.size());
  entries_hash_.add(gguf_header);
}

void WeightImageWriter::write(const void* data, size_t n) {
  out_.write({static_cast<const uint8_t*>(data), n});
  at_ += n;
}

void WeightImageWriter::pad_to(uint64_t alignment) {
  static constexpr uint8_t kZeros[kWeightImageAlignment] = {};
  while (at_ % alignment != 0) write(kZeros, std::min<uint64_t>(alignment - at_ % alignment, sizeof kZeros));
}

void WeightImageWriter::add(WeightForm form, const std::string& name, std::span<const uint8_t> bytes) {
  pad_to(kWeightImageAlignment);
  entries_.push_back({at_, bytes.size(), form, name});
  write(bytes.data(), bytes.size());
  entries_hash_.add(bytes);
}

void WeightImageWriter::finish() {
  pad_to(8);
  const uint64_t table_offset = at_;
  std::vector<uint8_t> table;
  for (const Entry& e : entries_) {
    const TableEntry t{e.offset, e.bytes, static_cast<uint32_t>(e.form), static_cast<uint32_t>(e.name.size())};
    const auto* record = reinterpret_cast<const uint8_t*>(&t);
    table.insert(table.end(), record, record + sizeof t);
    table.insert(table.end(), e.name.begin(), e.name.end());
    table.resize(round_up(table.size(), 8));
  }
  write(table.data(), table.size());
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.n_entries = static_cast<uint32_t>(entries_.size());
  h.file_hash = file_hash_;
  h.gguf_header_offset = sizeof(Header);
  h.gguf_header_bytes = gguf_header_bytes_;
  h.table_offset = table_offset;
  h.total_bytes = at_;
  h.checksum = image_checksum(std::move(entries_hash_), table, h);
  out_.write_at(0, {reinterpret_cast<const uint8_t*>(&h), sizeof h});
  out_.commit();
}

WeightImage::WeightImage(std::span<const uint8_t> bytes, std::string name) : name_(std::move(name)), bytes_(bytes) {
  check_mapped_file_holds(bytes, name_);  // before any byte is read: a copy cut short would raise SIGBUS
  advise_huge_pages();
  Header h;
  if (bytes.size() < sizeof h) throw Error(name_ + ": the weight image is shorter than its header");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw Error(name_ + ": not a kiln weight image");
  if (h.version != kVersion)
    throw Error(name_ + ": the built-in weights are in format version " + std::to_string(h.version) +
                ", this binary reads version " + std::to_string(kVersion) + " (build the program again)");
  if (h.total_bytes != bytes.size())
    throw Error(name_ + ": the weight image is " + std::to_string(bytes.size()) + " bytes, its header says " +
                std::to_string(h.total_bytes));
  auto inside = [&](uint64_t offset, uint64_t n) { return offset <= bytes.size() && n <= bytes.size() - offset; };
  if (!inside(h.gguf_header_offset, h.gguf_header_bytes) || !inside(h.table_offset, 0))
    throw Error(name_ + ": the weight image's header points outside it");
  gguf_header_ = bytes.subspan(h.gguf_header_offset, h.gguf_header_bytes);
  file_hash_ = h.file_hash;

  uint64_t at = h.table_offset;
  ContentHasher entries_hash;
  entries_hash.add(gguf_header_);
  entries_.reserve(h.n_entries);
  for (uint32_t i = 0; i < h.n_entries; ++i) {
    TableEntry t;
    if (!inside(at, sizeof t)) throw Error(name_ + ": the weight image's table is cut short");
    std::memcpy(&t, bytes.data() + at, sizeof t);
    at += sizeof t;
    if (!inside(at, t.name_bytes) || !inside(t.offset, t.bytes) || t.offset % kWeightImageAlignment != 0 ||
        t.form > static_cast<uint32_t>(WeightForm::Matrix))
      throw Error(name_ + ": entry " + std::to_string(i) + " of the weight image is malformed");
    entries_.push_back({bytes.data() + t.offset, static_cast<WeightForm>(t.form),
                        std::string(reinterpret_cast<const char*>(bytes.data() + at), t.name_bytes)});
    entries_hash.add(bytes.subspan(t.offset, t.bytes));
    at = round_up(at + t.name_bytes, 8);
  }
  if (at != h.total_bytes) throw Error(name_ + ": the weight image's table does not end where the image does");
  if (image_checksum(std::move(entries_hash), bytes.subspan(h.table_offset), h) != h.checksum)
    throw Error(name_ + ": the built-in weights are damaged: their checksum does not match the one recorded when "
                        "they were built (build or copy the program again)");
}

void WeightImage::advise_huge_pages() const {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<uintptr_t>(bytes_.data()) + kHuge - 1) / kHuge * kHuge;
  const auto end = reinterpret_cast<uintptr_t>(bytes_.data() + bytes_.size()) / kHuge * kHuge;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

const uint8_t* WeightImage::next(WeightForm form, const std::string& tensor) {
  if (next_ >= entries_.size())
    throw Error(name_ + ": the built-in weights end before " + form_name(form) + " '" + tensor + "' (a mismatched build)");
  const Entry& e = entries_[next_++];
  if (e.form != form || e.name != tensor)
    throw Error(name_ + ": the built-in weights hold " + form_name(e.form) + " '" + e.name + "' where " +
                form_name(form) + " '" + tensor + "' was expected (a mismatched build)");
  return e.data;
}

}  // namespace kiln
