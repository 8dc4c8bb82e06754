#include "tests/support/server_process.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>

extern char** environ;

namespace kiln::test {

ServerProcess::ServerProcess(std::string binary, std::vector<std::string> args)
    : log_("server-" + std::to_string(++count_)) {
  std::vector<std::string> argv = {std::move(binary), "--port", "0", "-t", "1"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_args;
  for (auto& a : argv) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log_.file("stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(posix_spawn(&pid_, c_args[0], &actions, nullptr, c_args.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  // The port it took is in its first line: "...: listening on http://127.0.0.1:PORT (...".
  const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
  for (int i = 0; i < 600 && port_ == 0; ++i) {
    std::smatch m;
    const std::string err = stderr_text();
    if (std::regex_search(err, m, listening)) port_ = std::stoi(m[1]);
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE_MESSAGE(port_ != 0, "the server did not start: " << stderr_text());
}

ServerProcess::~ServerProcess() {
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "the server did not stop cleanly: " << stderr_text());
}

httplib::Client ServerProcess::client() const {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(60, 0);
  return c;
}

std::string ServerProcess::stderr_text() const {
  std::ifstream in(log_.file("stderr"));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Reply post(const ServerProcess& server, const std::string& path, const std::string& body,
           const httplib::Headers& headers) {
  auto res = server.client().Post(path, headers, body, "application/json");
  REQUIRE(res);
  return {res->status, nlohmann::json::parse(res->body)};
}

Reply get(const ServerProcess& server, const std::string& path, const httplib::Headers& headers) {
  auto res = server.client().Get(path, headers);
  REQUIRE(res);
  return {res->status, nlohmann::json::parse(res->body)};
}

std::vector<nlohmann::json> stream_events(const ServerProcess& server, const std::string& path, nlohmann::json body) {
  body["stream"] = true;
  auto res = server.client().Post(path, body.dump(), "application/json");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  CHECK(res->get_header_value("Content-Type").starts_with("text/event-stream"));
  std::vector<nlohmann::json> events;
  std::istringstream lines(res->body);
  bool done = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    REQUIRE(line.starts_with("data: "));
    REQUIRE_FALSE(done);
    if (line == "data: [DONE]") done = true;
    else events.push_back(nlohmann::json::parse(line.substr(6)));
  }
  CHECK(done);
  REQUIRE(!events.empty());
  return events;
}

}  // namespace kiln::test
