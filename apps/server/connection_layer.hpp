// The server's HTTP connections, held against slow, huge and many clients.
// One thread owns every connection through epoll and never blocks on one: it
// accepts, reads each request's head and body as bytes arrive, and enforces
// the limits below, answering with a JSON error and closing where a client
// exceeds one. A request is handed on only when it has arrived whole:
//
// - a request that takes a body (a completion: RouteRules::takes_body) goes,
//   once its API key is checked and its body read (whatever its framing),
//   to one of `handlers` threads, which run httplib's routing and the
//   handler (http_routes.cpp) and write the answer; at most that many such
//   requests are read or served at once (slots plus waiting requests), and
//   the next gets 503 with Retry-After before its body is read. While a
//   handler works, the connection is watched: a client that closes it
//   cancels its request (client_watch.hpp).
// - any other request (/health, /v1/models, /props, /metrics, errors) is
//   answered on the layer's thread into a buffer that is sent without
//   blocking, so these answer at once whatever the load; their bodies are
//   never read (the connection closes after the answer instead).
//
// Requests on one connection are answered one after the other, in order:
// pipelined requests wait in the connection's buffer until the answer
// before them is written.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "apps/server/handler_stream.hpp"
#include "apps/server/request_head.hpp"

namespace kiln {

struct ConnectionLimits {
  int max_connections = 256;  // open at once; those beyond get 503 and are closed
  int handlers = 8;           // requests with a body read or served at once; beyond: 503 with Retry-After
  // To receive a request's head and body, from its first byte: a total, not per read.
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds idle_timeout{5000};   // for a kept-alive connection's next request to begin
  std::chrono::milliseconds write_timeout{5000};  // for a client to take more of its answer
  size_t max_head_bytes = 64 << 10;
  size_t max_body_bytes = 8 << 20;  // decoded, whatever the framing
};

// What the layer asks of the routes about a request's head, before its body.
struct RouteRules {
  std::function<bool(const RequestHead&)> authorized;  // the API key, where the path asks for one
  std::function<bool(const RequestHead&)> takes_body;  // served on a handler thread, body read
};

class ConnectionLayer {
 public:
  // Serves the router's listening socket (bound, listening) until stop().
  ConnectionLayer(Router& router, RouteRules rules, ConnectionLimits limits);
  ~ConnectionLayer();
  ConnectionLayer(const ConnectionLayer&) = delete;
  ConnectionLayer& operator=(const ConnectionLayer&) = delete;

  // Serves until stop(); then cancels the requests in handlers, waits for
  // them and closes every connection.
  void run();
  void stop();  // from any thread

 private:
  struct Connection;
  using Clock = std::chrono::steady_clock;

  void accept_all();
  void on_ready(Connection& c, uint32_t events);
  void receive(Connection& c);
  // Moves the connection's state on as far as the bytes at hand allow.
  void advance(Connection& c);
  bool read_head(Connection& c);
  bool read_body(Connection& c);
  bool flush(Connection& c);
  void begin_request(Connection& c, RequestHead head);
  void answer_here(Connection& c);
  void dispatch(Connection& c);
  void handler_done(int fd, bool keep_open);
  // The connection waits for its next request (idle until its first byte).
  void await_request(Connection& c);
  // Sends the layer's own JSON error and closes the connection after it.
  void refuse(Connection& c, int status, const std::string& message, bool retry_later = false);
  void send_buffered(Connection& c, std::string answer, bool close);
  void expire(Clock::time_point now);
  int wait_ms(Clock::time_point now) const;
  void watch(Connection& c, uint32_t events);
  void close(int fd);

  Router& router_;
  RouteRules rules_;
  ConnectionLimits limits_;
  int listening_;
  int epoll_ = -1;
  int wake_ = -1;  // eventfd: handlers done, or stop
  std::atomic<bool> stopping_{false};
  std::unordered_map<int, std::unique_ptr<Connection>> connections_;
  int open_ = 0;      // connections served (not those only told 503)
  int refused_ = 0;   // connections beyond max_connections, being told 503
  int reserved_ = 0;  // requests with a body being read or served
  httplib::ThreadPool handlers_;
  bool handlers_joined_ = false;
  std::mutex done_mutex_;
  std::vector<std::pair<int, bool>> done_;  // handlers done: the socket, and whether it stays open
};

}  // namespace kiln
