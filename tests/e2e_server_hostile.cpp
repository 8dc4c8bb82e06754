// The server against hostile clients (issue 23), on stories260K over raw
// sockets: connections that trickle their heads get 408 at the request
// deadline while /health answers at once; chunked bodies far over the limit
// are refused at it, the server's memory bounded; connections over
// --max-connections and completions over --max-waiting get 503 (with
// Retry-After); the API key is checked before any body is read; pipelined
// requests are answered in order; clients that hang up cancel their
// generations. Deadlines are short (--request-timeout) so the test takes
// seconds; the one bound on time, /health within 1 s under attack, is the
// issue's requirement, and generous on a loaded machine (it answers in
// about a millisecond).
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/server_process.hpp"

using nlohmann::json;

namespace {

struct Server : kiln::test::ServerProcess {
  explicit Server(std::vector<std::string> args) : ServerProcess(SERVER_BIN, std::move(args)) {}
};

// A client connection that writes what the test says, when it says.
class Raw {
 public:
  explicit Raw(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~Raw() { close(); }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  bool send(const std::string& bytes) {
    for (size_t at = 0; at < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  }
  bool readable(int ms) const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, ms) > 0;
  }
  // One answer (status line, fields, a Content-Length body), waiting up to 20 s.
  struct Answer {
    int status = 0;
    std::string head;
    json body;
  };
  Answer answer() {
    Answer a;
    size_t end = 0;
    while ((end = in_.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return a;
    a.head = in_.substr(0, end + 4);
    a.status = std::stoi(a.head.substr(9, 3));
    const size_t length_at = a.head.find("Content-Length: ");
    const size_t length = length_at == std::string::npos ? 0 : std::stoul(a.head.substr(length_at + 16));
    while (in_.size() < end + 4 + length)
      if (!fill()) return a;
    a.body = json::parse(in_.substr(end + 4, length));
    in_.erase(0, end + 4 + length);
    return a;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  bool fill() {
    if (!readable(20000)) return false;
    char buffer[65536];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    in_.append(buffer, static_cast<size_t>(n));
    return true;
  }
  int fd_;
  std::string in_;
};

std::string completion_request(const json& body, const std::string& extra_fields = "") {
  const std::string text = body.dump();
  return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra_fields +
         "Content-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
}

// Milliseconds a GET /health takes on a fresh connection, which must answer 200.
double health_ms(const Server& server) {
  const auto start = std::chrono::steady_clock::now();
  Raw c(server.port());
  REQUIRE(c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(c.answer().status == 200);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

size_t resident_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmRSS:")) return std::stoul(line.substr(6)) << 10;
  return 0;
}

}  // namespace

TEST_CASE("connections that trickle their heads get 408 at the deadline, and /health answers meanwhile" *
          doctest::timeout(60)) {
  Server server({"--request-timeout", "2"});
  std::vector<std::unique_ptr<Raw>> slow;
  for (int i = 0; i < 24; ++i) slow.push_back(std::make_unique<Raw>(server.port()));
  const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(200, 'a');
  // A byte a connection every 100 ms for 3.5 s: past the 2 s deadline, and
  // far short of the head's end.
  std::thread trickle([&] {
    for (size_t at = 0; at < 35; ++at) {
      for (auto& c : slow) c->send(head.substr(at, 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  double slowest = 0;
  for (int i = 0; i < 15; ++i) {
    slowest = std::max(slowest, health_ms(server));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  trickle.join();
  CHECK(slowest < 1000);
  for (auto& c : slow) {
    const Raw::Answer a = c->answer();
    CHECK(a.status == 408);
    CHECK(a.body["error"]["message"].get<std::string>().find("did not arrive within 2000 ms") != std::string::npos);
  }
  Raw ok(server.port());
  REQUIRE(ok.send(completion_request({{"prompt", "Once"}, {"max_tokens", 3}})));
  CHECK(ok.answer().status == 200);
}

TEST_CASE("chunked bodies far over the limit are refused at it, and the server's memory stays bounded" *
          doctest::timeout(120)) {
  // Under AddressSanitizer (CI's second build), freed memory waits in its
  // quarantine, 256 MB by default: the bound is on the server's memory, not
  // on that, so the server gets a small one.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string saved = asan ? asan : "";
  setenv("ASAN_OPTIONS", (saved.empty() ? "" : saved + ":").append("quarantine_size_mb=16").c_str(), 1);
  Server server({"--parallel", "2", "--max-waiting", "8"});
  if (asan) setenv("ASAN_OPTIONS", saved.c_str(), 1);
  else unsetenv("ASAN_OPTIONS");
  const size_t before = resident_bytes(server.pid());
  // Eight clients each send 64 MB in chunks of 64 KiB, to a completion and
  // to /health (which reads no body), until the server answers.
  const std::string chunk = "10000\r\n" + std::string(0x10000, 'x') + "\r\n";
  std::vector<int> statuses(8);
  size_t most = 0;
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i)
    clients.emplace_back([&, i] {
      Raw c(server.port());
      const std::string path = i % 4 == 3 ? "/health" : "/v1/completions";
      c.send("POST " + path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
      for (size_t sent = 0; sent < (size_t{64} << 20) && !c.readable(0); sent += 0x10000)
        if (!c.send(chunk)) break;
      statuses[size_t(i)] = c.answer().status;
    });
  std::thread watch([&] {
    for (int i = 0; i < 40; ++i) {
      most = std::max(most, resident_bytes(server.pid()));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  for (auto& c : clients) c.join();
  watch.join();
  for (int i = 0; i < 8; ++i) CHECK(statuses[size_t(i)] == (i % 4 == 3 ? 404 : 413));
  MESSAGE("resident: " << (before >> 20) << " MiB before, at most " << (most >> 20) << " MiB during");
  CHECK(most < (size_t{256} << 20));
  CHECK(health_ms(server) < 1000);
}

TEST_CASE("connections over --max-connections get 503" * doctest::timeout(60)) {
  Server server({"--max-connections", "4"});
  std::vector<std::unique_ptr<Raw>> held;
  for (int i = 0; i < 4; ++i) held.push_back(std::make_unique<Raw>(server.port()));
  Raw extra(server.port());
  REQUIRE(extra.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  const Raw::Answer a = extra.answer();
  CHECK(a.status == 503);
  CHECK(a.body["error"]["message"].get<std::string>().find("4 connections open") != std::string::npos);
  held.clear();  // the server notices the closes; then a new connection is served
  bool served = false;
  for (int i = 0; i < 100 && !served; ++i) {
    Raw c(server.port());
    c.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    served = c.answer().status == 200;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(served);
  CHECK(health_ms(server) < 1000);
}

TEST_CASE("completions over the slots and --max-waiting get 503 with Retry-After, before their body is read" *
          doctest::timeout(60)) {
  Server server({"--parallel", "1", "--max-waiting", "1"});
  // Two completions whose bodies have not arrived hold the slot's and the
  // waiting request's places, once the server has read their heads: until
  // then a third is refused only for its body's size (413), so it is sent
  // again until the places are taken.
  Raw first(server.port()), second(server.port());
  for (Raw* c : {&first, &second}) REQUIRE(c->send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n"));
  const auto third = [&](const std::string& request) {
    Raw c(server.port());
    REQUIRE(c.send(request));
    return c.answer();
  };
  Raw::Answer busy;
  for (int i = 0; i < 100 && busy.status != 503; ++i) {
    busy = third("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n");
    if (busy.status != 503) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(busy.status == 503);
  CHECK(busy.head.find("Retry-After: 1\r\n") != std::string::npos);
  CHECK(health_ms(server) < 1000);
  first.close();  // a place is free again once the server sees it
  Raw::Answer served;
  for (int i = 0; i < 100 && served.status != 200; ++i) {
    served = third(completion_request({{"prompt", "Once"}, {"max_tokens", 2}}));
    if (served.status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(served.status == 200);
}

TEST_CASE("the API key is checked before a body is read; a bad Content-Length is refused at once" *
          doctest::timeout(60)) {
  Server server({"--api-key", "secret"});
  Raw unkeyed(server.port());
  REQUIRE(unkeyed.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n"));
  CHECK(unkeyed.answer().status == 401);
  Raw chunked(server.port());
  REQUIRE(chunked.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
  CHECK(chunked.answer().status == 401);
  Raw negative(server.port());
  REQUIRE(negative.send("POST /v1/completions HTTP/1.1\r\nAuthorization: Bearer secret\r\nContent-Length: -1\r\n\r\n"));
  const Raw::Answer bad = negative.answer();
  CHECK(bad.status == 400);
  CHECK(bad.body["error"]["message"].get<std::string>().find("Content-Length") != std::string::npos);
  Raw big(server.port());
  REQUIRE(big.send("POST /v1/completions HTTP/1.1\r\nAuthorization: Bearer secret\r\nContent-Length: 9000000\r\n\r\n"));
  CHECK(big.answer().status == 413);
  Raw huge_head(server.port());
  huge_head.send("GET /health HTTP/1.1\r\nX: " + std::string(100000, 'a'));
  CHECK(huge_head.answer().status == 431);
}

TEST_CASE("pipelined requests are all answered, in order" * doctest::timeout(60)) {
  Server server({});
  Raw c(server.port());
  std::string requests;
  for (int n = 1; n <= 3; ++n) requests += completion_request({{"prompt", "Once"}, {"max_tokens", n}, {"temperature", 0}});
  requests += "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  requests += "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chat = json{{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}}.dump();
  char size[16];
  std::snprintf(size, sizeof size, "%zx", chat.size());
  requests += std::string(size) + "\r\n" + chat + "\r\n0\r\n\r\n";
  REQUIRE(c.send(requests));
  for (int n = 1; n <= 3; ++n) {
    const Raw::Answer a = c.answer();
    REQUIRE(a.status == 200);
    CHECK(a.body["usage"]["completion_tokens"] == n);
  }
  const Raw::Answer health = c.answer();
  CHECK(health.status == 200);
  CHECK(health.body["status"] == "ok");
  const Raw::Answer reply = c.answer();
  CHECK(reply.status == 200);
  CHECK(reply.body["object"] == "chat.completion");
}

TEST_CASE("clients that hang up cancel their generations, waiting or running" * doctest::timeout(60)) {
  Server server({"--parallel", "1"});
  // Sixteen long generations, not streamed, from clients that close at
  // once: the one that runs stops at its next token once its client is
  // seen gone, those waiting never start.
  for (int i = 0; i < 16; ++i) {
    Raw c(server.port());
    REQUIRE(c.send(completion_request({{"prompt", "Once upon a time"}, {"max_tokens", 480}, {"temperature", 1}, {"seed", i}})));
  }
  std::string log;
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (server.client().Get("/health")->body.find("\"slots_processing\":0") != std::string::npos) break;
  }
  log = server.stderr_text();
  // Each generation that started logs a line, "(client gone)" at its end if cancelled.
  size_t finished = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find(": completion: ") != std::string::npos && !line.ends_with("(client gone)")) ++finished;
  CHECK_MESSAGE(finished <= 1, log);
  Raw after(server.port());
  REQUIRE(after.send(completion_request({{"prompt", "Once"}, {"max_tokens", 2}})));
  CHECK(after.answer().status == 200);
}
