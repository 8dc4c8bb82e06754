// Weights built into the program (kiln_add_model ... EMBED), on stories260K:
// the program copied to an empty folder runs with no GGUF and writes the same
// text as the GGUF-backed one; the built-in model computes the same logits
// and has the same fingerprint, so saved states move between the two; -m
// still takes a GGUF, checked as ever. And where a GGUF-backed program looks
// for its file when given no -m: next to it, $KILN_MODEL_PATH, and one line
// when the variable names nothing. A damaged copy (bytes flipped in its
// weights, or cut short inside them) stops with one line.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/session/session.hpp"
#include "kiln_test_stories260K.hpp"
#include "kiln_test_stories260K_embed.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/temp_folder.hpp"

namespace fs = std::filesystem;
using kiln::test::run_process;
using kiln::test::TempFolder;

namespace {

const std::vector<std::string> kGreedy = {"-p", "Once upon a time", "-n", "48", "--temp", "0", "-t", "1"};

std::vector<std::string> command(const std::string& program, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {program};
  argv.insert(argv.end(), kGreedy.begin(), kGreedy.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// `program` copied into `folder`, alone: it cannot find anything next to where it was built.
std::string copy_program(const std::string& program, const TempFolder& folder) {
  const std::string copy = folder.file(fs::path(program).filename().string());
  fs::copy_file(program, copy);
  return copy;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a built-in program copied to an empty folder writes the GGUF-backed program's text" *
          kiln::test::needs_fixtures) {
  const auto reference = run_process(command(STORIES_BIN));
  REQUIRE(reference.exit_code == 0);
  REQUIRE(reference.out.size() > 40);

  TempFolder folder("embed-alone");
  const auto alone = run_process(command(copy_program(EMBED_BIN, folder)));
  CHECK(alone.exit_code == 0);
  CHECK(alone.out == reference.out);
  CHECK(contains(alone.err, "weights           = kiln_test_stories260K_embed (built in)"));

  // -m still reads a GGUF, checked against the model as ever.
  const std::string gguf = kiln::test::fixture("models/stories260K/stories260K.gguf");
  const auto from_file = run_process(command(EMBED_BIN, {"-m", gguf}));
  CHECK(from_file.exit_code == 0);
  CHECK(from_file.out == reference.out);
  const auto other = run_process(command(EMBED_BIN, {"-m", kiln::test::fixture("models/synthetic/llama-f32.gguf")}));
  CHECK(other.exit_code == 1);
  CHECK(contains(other.err, "does not match this binary"));
}

TEST_CASE("built-in weights: the same logits and fingerprint as the GGUF, so states move between them" *
          kiln::test::needs_fixtures) {
  auto built_in = kiln::models::kiln_test_stories260K_embed::load();
  auto from_file = kiln::models::kiln_test_stories260K::load(kiln::test::fixture("models/stories260K/stories260K.gguf"));
  CHECK(built_in->fingerprint() == from_file->fingerprint());
  CHECK(built_in->gguf().tensors().size() == from_file->gguf().tensors().size());
  CHECK(built_in->gguf().find_tensor("token_embd.weight")->data == nullptr);

  const std::vector<int32_t> prompt = built_in->tokenizer().encode("Lily saw a big dog", true, false);
  REQUIRE(prompt == from_file->tokenizer().encode("Lily saw a big dog", true, false));
  kiln::Session a(*built_in), b(*from_file);
  a.sequence().set_threads(2, kiln::ThreadFit::Exact);
  b.sequence().set_threads(2, kiln::ThreadFit::Exact);
  const auto logits_a = a.ingest(prompt);
  const std::vector<float> copy_a(logits_a.begin(), logits_a.end());
  const auto logits_b = b.ingest(prompt);
  CHECK(std::vector<float>(logits_b.begin(), logits_b.end()) == copy_a);

  TempFolder folder("embed-state");
  a.save_state(folder.file("state"));
  kiln::Session restored(*from_file);
  restored.load_state(folder.file("state"));
  CHECK(restored.tokens() == prompt);
}

TEST_CASE("a GGUF-backed program finds its file next to it or through KILN_MODEL_PATH" * kiln::test::needs_fixtures) {
  const std::string gguf = kiln::test::fixture("models/stories260K/stories260K.gguf");
  const auto reference = run_process(command(STORIES_BIN));
  REQUIRE(reference.exit_code == 0);

  TempFolder folder("embed-beside");
  const std::string program = copy_program(STORIES_BIN, folder);
  fs::copy_file(gguf, folder.file("stories260K.gguf"));
  const auto beside = run_process(command(program));
  CHECK(beside.exit_code == 0);
  CHECK(beside.out == reference.out);
  CHECK(contains(beside.err, "weights           = " + folder.file("stories260K.gguf")));

  TempFolder other("embed-variable");
  const std::string lone = copy_program(STORIES_BIN, other);
  std::vector<std::string> with_variable = {"/usr/bin/env", "KILN_MODEL_PATH=" + folder.file("stories260K.gguf")};
  const auto args = command(lone);
  with_variable.insert(with_variable.end(), args.begin(), args.end());
  const auto through_variable = run_process(with_variable);
  CHECK(through_variable.exit_code == 0);
  CHECK(through_variable.out == reference.out);
  CHECK(contains(through_variable.err, "weights           = " + folder.file("stories260K.gguf")));

  with_variable[1] = "KILN_MODEL_PATH=" + other.file("missing.gguf");
  const auto missing = run_process(with_variable);
  CHECK(missing.exit_code == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err == "kiln_test_stories260K: error: KILN_MODEL_PATH names '" + other.file("missing.gguf") +
                           "', which is not a file\n");
}

namespace {

// Where the weight image starts in a program's file: on a 2 MB boundary
// (kiln_add_model links EMBED programs so), with its header's magic.
size_t image_offset(const std::vector<uint8_t>& program) {
  const std::string magic = "KILNWIMG";
  for (size_t at = 0; at + magic.size() <= program.size(); at += size_t{2} << 20)
    if (std::equal(magic.begin(), magic.end(), program.begin() + static_cast<std::ptrdiff_t>(at))) return at;
  FAIL("no weight image on a 2 MB boundary of " EMBED_BIN);
  return 0;
}

uint64_t image_bytes(const std::vector<uint8_t>& program, size_t image) {
  uint64_t total = 0;
  std::memcpy(&total, program.data() + image + 48, sizeof total);  // the header's total_bytes
  return total;
}

// `program` copied into `folder`, made executable.
std::string write_program(const TempFolder& folder, const std::vector<uint8_t>& bytes) {
  const std::string path = folder.file("program");
  kiln::test::write_bytes(path, bytes);
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

}  // namespace

TEST_CASE("damaged built-in weights are one line and exit status 1: flipped bytes, a copy cut short" *
          kiln::test::needs_fixtures) {
  const std::vector<uint8_t> program = kiln::test::read_bytes(EMBED_BIN);
  const size_t image = image_offset(program);
  const uint64_t total = image_bytes(program, image);
  REQUIRE(image + total <= program.size());

  TempFolder folder("embed-damaged");
  std::vector<uint8_t> flipped = program;
  for (size_t at = image + total / 2; at < image + total / 2 + 4096; ++at) flipped[at] ^= 0x5a;
  const auto from_flipped = run_process(command(write_program(folder, flipped)));
  CHECK(from_flipped.exit_code == 1);
  CHECK(from_flipped.out.empty());
  CHECK(from_flipped.err == "kiln_test_stories260K_embed: error: kiln_test_stories260K_embed (built in): the built-in "
                            "weights are damaged: their checksum does not match the one recorded when they were built "
                            "(build or copy the program again)\n");

  const std::vector<uint8_t> cut(program.begin(), program.begin() + static_cast<std::ptrdiff_t>(image + total / 2));
  const std::string cut_path = write_program(folder, cut);
  const auto from_cut = run_process(command(cut_path));
  CHECK(from_cut.exit_code == 1);  // not a signal
  CHECK(from_cut.out.empty());
  CHECK(from_cut.err == "kiln_test_stories260K_embed: error: kiln_test_stories260K_embed (built in): " + cut_path +
                            " is cut short: it has " + std::to_string(cut.size()) + " bytes, " +
                            std::to_string(image + total) + " are needed (copy it again)\n");
}
