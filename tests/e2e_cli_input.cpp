// The stories260K program against hostile input and output: FIFOs and
// devices where files are expected, a folder as the prompt file, a prompt or
// an interactive line too long for the context, a closed or full standard
// output, more threads than the build runs. Each ends in one clear line on
// stderr (and a non-zero exit where the run cannot go on), never a hang, a
// replaced device or text nobody asked for.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/temp_folder.hpp"

using kiln::test::run_process;
using kiln::test::TempFolder;

namespace {

// The program's stdout is `stdout_fd`, with SIGPIPE ignored when asked (as a
// shell with `trap '' PIPE` would start it). Returns the exit code (-1 for a
// signal or a run longer than 60 s) and what it wrote to stderr.
std::pair<int, std::string> run_writing_to(int stdout_fd, bool ignore_sigpipe, const std::vector<std::string>& args) {
  TempFolder tmp("cli-stderr");
  const std::string err_path = tmp.file("err");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (ignore_sigpipe) ::signal(SIGPIPE, SIG_IGN);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(stdout_fd, 1);
    ::dup2(err, 2);
    ::alarm(60);  // a hang becomes a failure, not a stuck test
    std::vector<std::string> argv = {STORIES_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    ::execv(raw[0], raw.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::vector<uint8_t> err = kiln::test::read_bytes(err_path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::string(err.begin(), err.end())};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `timeout` turns a hang into exit code 124 instead of a stuck test.
kiln::test::ProcessResult run_bounded(std::vector<std::string> args, const std::string& stdin_text = "") {
  args.insert(args.begin(), {"/usr/bin/timeout", "60", STORIES_BIN});
  return run_process(args, stdin_text);
}

}  // namespace

TEST_CASE("-m FIFO is refused at once instead of waiting for a writer") {
  TempFolder tmp("cli-fifo");
  const std::string fifo = tmp.file("model.gguf");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto r = run_bounded({"-m", fifo, "-p", "hi", "-n", "2"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, fifo + ": not a regular file"));
}

TEST_CASE("--prompt-cache FIFO is reported and left alone; the run goes on") {
  TempFolder tmp("cli-fifo");
  const std::string fifo = tmp.file("cache");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto r = run_bounded({"--prompt-cache", fifo, "-p", "Once", "-n", "4", "--temp", "0"});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "prompt cache " + fifo + ": not a regular file; ignoring it"));
  CHECK(contains(r.err, "prompt cache not saved: " + fifo + ": is a FIFO"));
  CHECK(std::filesystem::is_fifo(fifo));
}

TEST_CASE("--prompt-cache and --logits-out on a character device write to it, never replace it") {
  TempFolder tmp("cli-device");
  std::string device = tmp.file("null");
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) device = "/dev/null";  // needs root
  const auto r = run_bounded({"--prompt-cache", device, "--logits-out", device, "-p", "Once", "-n", "2"});
  CHECK(r.exit_code == 0);
  struct stat st {};
  REQUIRE(::stat(device.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(st.st_rdev == makedev(1, 3));
}

TEST_CASE("-f FOLDER names the flag and the folder") {
  TempFolder tmp("cli-folder");
  const auto r = run_bounded({"-f", tmp.path.string()});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "-f: '" + tmp.path.string() + "' is a folder, not a prompt file"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("a prompt longer than the context is refused before any of it is printed") {
  std::string prompt;
  for (int i = 0; i < 400; ++i) prompt += "Once upon a time there was a dog. ";
  const auto r = run_bounded({"-p", prompt, "-n", "1"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "but the context holds 512"));
}

TEST_CASE("a 100 MB prompt file is refused at once, having read only what the context could hold") {
  TempFolder tmp("cli-huge-prompt");
  const std::string file = tmp.file("prompt.txt");
  {
    std::ofstream out(file, std::ios::binary);
    const std::string story(1 << 20, 'a');
    for (int i = 0; i < 100; ++i) out << story;
  }
  const auto r = run_process({STORIES_BIN, "-f", file, "-n", "1", "-t", "1"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "the prompt is more than 512 tokens, but the context holds 512"));
  CHECK(r.seconds < 1.0);            // tokenizing all of it took half a minute
  CHECK(r.peak_rss_kb < 100 * 1024);  // and gigabytes
}

TEST_CASE("-i: a line too long for the context is refused, and the session goes on") {
  std::string too_long;
  for (int i = 0; i < 400; ++i) too_long += "Once upon a time there was a dog. ";
  const auto r = run_bounded({"-p", "Once", "-n", "3", "--temp", "0", "-i"}, too_long + "\nThe cat\n");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "this line is more than the 507 of 512 positions the context has left; it was not added"));
  // Both turns ran: the refused one and the next, which generated.
  CHECK(std::count(r.out.begin(), r.out.end(), '>') == 3);
  CHECK(contains(r.err, "turn: reused"));

  // A line of 20 MB is refused without being tokenized.
  const auto huge = run_process({STORIES_BIN, "-p", "Once", "-n", "3", "--temp", "0", "-t", "1", "-i"},
                                std::string(20 << 20, 'a') + "\nThe cat\n");
  CHECK(huge.exit_code == 0);
  CHECK(contains(huge.err, "it was not added"));
  CHECK(contains(huge.err, "turn: reused"));
  CHECK(huge.peak_rss_kb < 200 * 1024);  // the line and a copy of it; tokenizing it took a gigabyte
}

TEST_CASE("the first failed write to stdout ends the run with exit status 1") {
  SUBCASE("a pipe nobody reads, SIGPIPE ignored") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::close(fds[0]);
    const auto [code, err] = run_writing_to(fds[1], true, {"-p", "Once", "-n", "-1", "--temp", "0"});
    ::close(fds[1]);
    CHECK(code == 1);
    CHECK(contains(err, "cannot write to standard output (Broken pipe)"));
    CHECK(!contains(err, "generation"));  // stopped before the timing summary
  }
  SUBCASE("a full device") {
    const int full = ::open("/dev/full", O_WRONLY);
    REQUIRE(full >= 0);
    const auto [code, err] = run_writing_to(full, false, {"-p", "Once", "-n", "8", "--temp", "0"});
    ::close(full);
    CHECK(code == 1);
    CHECK(contains(err, "cannot write to standard output (No space left on device)"));
  }
}

TEST_CASE("-t beyond what the build runs is reported as the count used") {
  const auto r = run_bounded({"-t", "1000", "-p", "Once", "-n", "2"});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "-t 1000: more than this program can run (build and OpenMP limits); using 64\n"));
  CHECK(contains(r.err, ": 64 threads,"));
}

TEST_CASE("a copy with other weights in the middle of its tensors refuses the original's prompt cache") {
  TempFolder tmp("cli-fingerprint");
  ::setenv("XDG_CACHE_HOME", tmp.file("cache").c_str(), 1);  // the hashes the runs cache go here
  const std::string original = std::string(KILN_SHARED_DIR) + "/models/stories260K/stories260K.gguf";
  std::vector<uint8_t> bytes = kiln::test::read_bytes(original);
  {
    // Negate most values of four tensors, leaving their first, middle and
    // last 64 bytes (all an earlier fingerprint looked at) as they were.
    const kiln::GgufFile f = kiln::GgufFile::from_bytes(bytes);
    for (const char* name : {"blk.0.attn_q.weight", "blk.1.ffn_up.weight", "blk.2.attn_v.weight", "output.weight"}) {
      const kiln::GgufTensor* t = f.find_tensor(name);
      REQUIRE(t != nullptr);
      const size_t begin = size_t(f.data_offset() + t->offset);
      for (size_t at = 64; at + 64 < t->nbytes; at += 4)
        if (at + 4 <= (t->nbytes - 64) / 2 || at >= (t->nbytes + 64) / 2) bytes[begin + at + 3] ^= 0x80;  // f32 sign bit
    }
  }
  const std::string altered = tmp.file("altered.gguf");
  kiln::test::write_bytes(altered, bytes);
  const std::string state = tmp.file("prompt.state");
  const auto first = run_bounded({"-m", original, "-p", "Once upon a time", "-n", "4", "--prompt-cache", state});
  REQUIRE(first.exit_code == 0);
  REQUIRE(std::filesystem::exists(state));
  const auto second = run_bounded({"-m", altered, "-p", "Once upon a time", "-n", "4", "--prompt-cache", state,
                                   "--prompt-cache-ro"});
  CHECK(second.exit_code == 0);
  CHECK(contains(second.err, "prompt cache " + state + ": made by another model"));
  CHECK(std::filesystem::exists(tmp.file("cache") + "/kiln/file-hashes"));
  ::unsetenv("XDG_CACHE_HOME");
}
