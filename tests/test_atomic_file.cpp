// write_file_atomically on whatever a path can name: a symbolic link is
// followed, a device is written in place and never replaced, a FIFO or folder
// is refused, permissions survive, and a killed write leaves no temporary.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/files/atomic_file.hpp"
#include "engine/error/error.hpp"
#include "tests/support/temp_folder.hpp"

namespace fs = std::filesystem;
using kiln::test::TempFolder;

namespace {

std::span<const uint8_t> as_bytes(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::string read_text(const fs::path& p) {
  const std::vector<uint8_t> bytes = kiln::test::read_bytes(p);
  return {bytes.begin(), bytes.end()};
}

size_t entries(const fs::path& folder) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("a symbolic link is kept and the file it leads to is replaced") {
  TempFolder tmp("atomic");
  const fs::path file = tmp.path / "real.bin";
  const fs::path link = tmp.path / "link.bin";
  kiln::write_file_atomically(file.string(), as_bytes("old"));
  fs::create_symlink("real.bin", link);  // relative, as ln -s makes it
  kiln::write_file_atomically(link.string(), as_bytes("new"));
  CHECK(fs::is_symlink(link));
  CHECK(read_text(file) == "new");
  CHECK(entries(tmp.path) == 2);

  // A link to a file not there yet creates that file.
  const fs::path dangling = tmp.path / "dangling.bin";
  fs::create_symlink(tmp.path / "later.bin", dangling);
  kiln::write_file_atomically(dangling.string(), as_bytes("made"));
  CHECK(fs::is_symlink(dangling));
  CHECK(read_text(tmp.path / "later.bin") == "made");
}

TEST_CASE("a FIFO is refused, not replaced, and nothing blocks") {
  TempFolder tmp("atomic");
  const std::string fifo = tmp.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(kiln::write_file_atomically(fifo, as_bytes("x")),
                       (fifo + ": is a FIFO; kiln writes only regular files and character devices").c_str(),
                       kiln::Error);
  CHECK(fs::is_fifo(fifo));
  CHECK(entries(tmp.path) == 1);
}

TEST_CASE("a character device is written in place, never replaced") {
  TempFolder tmp("atomic");
  // A private copy of /dev/null (needs root); otherwise /dev/null itself,
  // which a non-root process could not have replaced anyway.
  std::string device = tmp.file("null");
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) device = "/dev/null";
  kiln::write_file_atomically(device, as_bytes("discarded"));
  struct stat st {};
  REQUIRE(::stat(device.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(st.st_rdev == makedev(1, 3));
  CHECK(entries(tmp.path) == (device == "/dev/null" ? 0u : 1u));
}

TEST_CASE("a replaced file keeps its permission bits") {
  TempFolder tmp("atomic");
  const fs::path file = tmp.path / "private.bin";
  kiln::write_file_atomically(file.string(), as_bytes("one"));
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  kiln::write_file_atomically(file.string(), as_bytes("two"));
  CHECK(fs::status(file).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(read_text(file) == "two");
}

TEST_CASE("a write killed by the file size limit leaves no temporary file") {
  TempFolder tmp("atomic");
  const std::string file = tmp.file("big.bin");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::vector<uint8_t> bytes(1 << 20, 'x');
    try {
      kiln::write_file_atomically(file, bytes);
    } catch (...) {
    }
    ::_exit(0);  // not reached: SIGXFSZ ends the process inside the write
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(entries(tmp.path) == 0);
}

TEST_CASE("a failed write removes its temporary file") {
  TempFolder tmp("atomic");
  const std::string file = tmp.file("big.bin");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::vector<uint8_t> bytes(1 << 20, 'x');
    try {
      kiln::write_file_atomically(file, bytes);
    } catch (const kiln::Error&) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  CHECK(entries(tmp.path) == 0);
}

TEST_CASE("a file written piece by piece appears only when committed, its header filled in last") {
  TempFolder tmp("atomic");
  const std::string file = tmp.file("image.bin");
  kiln::write_file_atomically(file, as_bytes("old"));
  {
    kiln::AtomicFileWriter out(file);
    out.write(as_bytes("....body"));
    out.write(as_bytes(" end"));
    out.write_at(0, as_bytes("HEAD"));
    CHECK(read_text(file) == "old");  // not yet in place
    out.commit();
  }
  CHECK(read_text(file) == "HEADbody end");
  CHECK(entries(tmp.path) == 1);
}

TEST_CASE("a piecewise write abandoned before commit leaves the old file and no temporary") {
  TempFolder tmp("atomic");
  const std::string file = tmp.file("image.bin");
  kiln::write_file_atomically(file, as_bytes("old"));
  {
    kiln::AtomicFileWriter out(file);
    out.write(as_bytes("half a"));
  }
  CHECK(read_text(file) == "old");
  CHECK(entries(tmp.path) == 1);
}

TEST_CASE("a piecewise write refuses a character device with one line") {
  try {
    kiln::AtomicFileWriter out("/dev/null");
    FAIL("a device was accepted");
  } catch (const kiln::Error& e) {
    CHECK(std::string(e.what()) == "/dev/null: is a character device; only a regular file can be written here");
  }
}
