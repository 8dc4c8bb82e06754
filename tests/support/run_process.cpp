#include "tests/support/run_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

extern char** environ;

namespace kiln::test {

namespace {

// A temporary file that is removed when it goes out of scope.
struct TempFile {
  std::string path;
  int fd;
  TempFile() {
    char name[] = "/tmp/kiln-test-XXXXXX";
    fd = mkstemp(name);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    path = name;
  }
  ~TempFile() {
    close(fd);
    unlink(path.c_str());
  }
  std::string contents() const {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& stdin_text) {
  // Input and output go through files, not pipes, so a chatty child can never block.
  TempFile in, out, err;
  if (write(in.fd, stdin_text.data(), stdin_text.size()) != static_cast<ssize_t>(stdin_text.size()) ||
      lseek(in.fd, 0, SEEK_SET) != 0)
    throw std::runtime_error("cannot write the child's input");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const auto start = std::chrono::steady_clock::now();
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  ProcessResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.peak_rss_kb = usage.ru_maxrss;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = out.contents();
  r.err = err.contents();
  return r;
}

}  // namespace kiln::test
