// A model's weights as a program carries them (kiln_add_model ... EMBED):
// written once at build time by the model's packer, built into the program's
// read-only data, and read in place at run time, so that loading is mapping.
//
//   header    64 bytes: magic "KILNWIMG", format version, entry count, the
//             content hash of the GGUF (for the model's fingerprint), where
//             the GGUF header and the table are, the image's size, and the
//             checksum of all of it (engine/files/content_hash.hpp);
//   the GGUF's first data_offset() bytes: its metadata and tensor directory
//             (tokenizer, chat template, the model description);
//   entries   each weight in the form the forward pass reads it (matrices
//             already in the kernels' layout), each starting on a 64-byte
//             boundary of the image, which itself starts on a page;
//   table     per entry: offset, size, form, name.
//
// Entries are stored in the order the model binds its weights
// (models/decoder/bind_weights.hpp) and read back in that order, each checked
// against the name and form asked for. The image depends on the instruction
// set, like the layout of its matrices: it is built with the model's code.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/files/atomic_file.hpp"
#include "engine/files/content_hash.hpp"

namespace kiln {

// How the forward pass reads a weight (models/decoder/bind_weights.hpp).
enum class WeightForm : uint32_t {
  Raw = 0,     // the tensor's bytes as in the GGUF (embedding rows looked up by token)
  Vector = 1,  // an F32 vector (norms, biases, RoPE frequency factors)
  Matrix = 2,  // a matrix in the layout the matmul reads (LoadedWeights::matrix)
};

inline constexpr uint64_t kWeightImageAlignment = 64;  // every entry: the widest vector load

// Writes an image to `path`, atomically (engine/files/atomic_file.hpp): the
// file appears only when finish() completes.
class WeightImageWriter {
 public:
  WeightImageWriter(const std::string& path, std::span<const uint8_t> gguf_header, uint64_t file_hash);
  WeightImageWriter(const WeightImageWriter&) = delete;
  WeightImageWriter& operator=(const WeightImageWriter&) = delete;

  void add(WeightForm form, const std::string& name, std::span<const uint8_t> bytes);
  // Writes the table and the header, and puts the file in place.
  void finish();

 private:
  struct Entry {
    uint64_t offset, bytes;
    WeightForm form;
    std::string name;
  };
  void write(const void* data, size_t n);
  void pad_to(uint64_t alignment);

  AtomicFileWriter out_;
  uint64_t at_ = 0;
  uint64_t gguf_header_bytes_ = 0;
  uint64_t file_hash_ = 0;
  ContentHasher entries_hash_;  // the GGUF header and the entries so far (the checksum's start)
  std::vector<Entry> entries_;
};

// An image in memory (the program's own read-only data), read in place.
class WeightImage {
 public:
  // Checks, throwing kiln::Error naming `name` in one line otherwise: that a
  // program's file holds all of `bytes` (a copy cut short would raise
  // SIGBUS), the header, the table, that every entry lies inside `bytes`,
  // and the checksum over all of them, which reads every byte (at memory
  // speed: docs/benchmarks.md).
  WeightImage(std::span<const uint8_t> bytes, std::string name);

  const std::string& name() const { return name_; }
  std::span<const uint8_t> gguf_header() const { return gguf_header_; }
  uint64_t file_hash() const { return file_hash_; }

  // The next entry, which must be `form` of `tensor`: the image was packed
  // by the same binding code that asks for it, so anything else is a
  // mismatched build and throws kiln::Error.
  const uint8_t* next(WeightForm form, const std::string& tensor);

 private:
  // Asks the kernel to map the image with 2 MB pages where it can
  // (MADV_HUGEPAGE), before the checksum first reads it: the image starts on
  // a 2 MB boundary of both the program's address space and its file
  // (kiln_add_model links EMBED programs with -z max-page-size=2M), so
  // page-cache folios of that size are mapped whole, and the checksum and the
  // forward pass, which stream the matrices, take a TLB miss per 2 MB instead
  // of per 4 KB. Without it, the weights' pages are still read in place, only
  // more slowly.
  void advise_huge_pages() const;

  struct Entry {
    const uint8_t* data;
    WeightForm form;
    std::string name;
  };
  std::string name_;
  std::span<const uint8_t> bytes_;
  std::span<const uint8_t> gguf_header_;
  uint64_t file_hash_ = 0;
  std::vector<Entry> entries_;
  size_t next_ = 0;
};

}  // namespace kiln
