#include "apps/server/connection_layer.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>

#include "apps/server/chunked_body.hpp"
#include "apps/server/client_watch.hpp"
#include "apps/server/openai_request.hpp"
#include "apps/server/openai_response.hpp"
#include "engine/error/error.hpp"

namespace kiln {

namespace {

// After the layer's own error, what the client still sends is read and
// dropped for this long before the socket closes: closing with unread bytes
// resets the connection, which can destroy the answer before it is read.
constexpr std::chrono::milliseconds kLinger{2000};
constexpr size_t kReadSize = 64 << 10;

const char* reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

// The request as httplib reads it: its head without the fields of the
// framing the layer has undone, and its body with a Content-Length.
std::string rebuilt(const RequestHead& head, const std::string& body) {
  std::string text = head.method + " " + head.target + " HTTP/1." + std::to_string(head.minor_version) + "\r\n";
  for (const HeaderField& f : head.fields)
    if (!same_field_name(f.name, "Content-Length") && !same_field_name(f.name, "Transfer-Encoding") &&
        !same_field_name(f.name, "Expect"))
      text += f.name + ": " + f.value + "\r\n";
  text += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  return text + body;
}

}  // namespace

struct ConnectionLayer::Connection {
  enum class State { Head, Body, Writing, Handling, Lingering, Closed };
  int fd;
  bool refused;  // beyond max_connections: told 503
  State state = State::Head;
  uint32_t events = 0;  // what epoll watches for
  Clock::time_point deadline;
  bool started = false;  // a byte of the current request has arrived
  bool eof = false;      // the client sent all it will
  std::string in;        // received, not yet read as a request
  size_t searched = 0;   // bytes of `in` searched for the head's end
  RequestHead head;
  std::optional<ChunkedDecoder> chunks;
  std::string body;
  bool reserved = false;  // holds one of the handlers
  std::string out;        // Writing: the answer
  size_t sent = 0;
  bool close_after = false;
  std::shared_ptr<ClientWatch> client;  // Handling
  bool gone = false;                    // Handling: the client closed its connection
};

ConnectionLayer::ConnectionLayer(Router& router, RouteRules rules, ConnectionLimits limits)
    : router_(router),
      rules_(std::move(rules)),
      limits_(limits),
      listening_(router.listening_socket()),
      handlers_(static_cast<size_t>(limits.handlers)) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_ < 0 || wake_ < 0) throw Error("cannot watch connections (epoll, eventfd)");
  fcntl(listening_, F_SETFL, fcntl(listening_, F_GETFL) | O_NONBLOCK);
  for (int fd : {listening_, wake_}) {
    epoll_event e{EPOLLIN, {.fd = fd}};
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e);
  }
}

ConnectionLayer::~ConnectionLayer() {
  if (!handlers_joined_) handlers_.shutdown();  // run() did not end normally
  ::close(wake_);
  ::close(epoll_);
}

void ConnectionLayer::stop() {
  stopping_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
}

void ConnectionLayer::run() {
  epoll_event ready[64];
  while (!stopping_) {
    const int n = epoll_wait(epoll_, ready, 64, wait_ms(Clock::now()));
    for (int i = 0; i < n; ++i) {
      const int fd = ready[i].data.fd;
      if (fd == listening_) {
        accept_all();
      } else if (fd == wake_) {
        uint64_t count;
        [[maybe_unused]] const ssize_t r = ::read(wake_, &count, sizeof count);
        std::vector<std::pair<int, bool>> done;
        {
          std::lock_guard lock(done_mutex_);
          done.swap(done_);
        }
        for (const auto& [socket, keep_open] : done) handler_done(socket, keep_open);
      } else if (const auto it = connections_.find(fd); it != connections_.end()) {
        on_ready(*it->second, ready[i].events);
        if (it->second->state == Connection::State::Closed) close(fd);
      }
    }
    expire(Clock::now());
  }
  // Requests in handlers are cancelled (a stream ends at its next token) and
  // waited for; no new one is taken.
  for (const auto& [fd, c] : connections_)
    if (c->client) c->client->gone();
  handlers_.shutdown();
  handlers_joined_ = true;
  for (const auto& [fd, c] : connections_) ::close(fd);
  connections_.clear();
}

void ConnectionLayer::accept_all() {
  for (;;) {
    const int fd = accept4(listening_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // none left (or an error that the next connection may not have)
    const bool refused = open_ >= limits_.max_connections;
    if (refused && refused_ >= limits_.max_connections) {  // not even the 503: too many are being told it
      ::close(fd);
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->refused = refused;
    ++(refused ? refused_ : open_);
    Connection& conn = *c;
    connections_.emplace(fd, std::move(c));
    if (refused) {
      refuse(conn, 503, "the server has " + std::to_string(limits_.max_connections) + " connections open, its limit",
             true);
    } else {
      await_request(conn);
    }
    advance(conn);
    if (conn.state == Connection::State::Closed) close(fd);
  }
}

void ConnectionLayer::await_request(Connection& c) {
  c.state = Connection::State::Head;
  c.started = false;
  c.deadline = Clock::now() + std::min(limits_.idle_timeout, limits_.request_timeout);
}

void ConnectionLayer::on_ready(Connection& c, uint32_t events) {
  using State = Connection::State;
  if (c.state == State::Handling) {
    // The client closed or reset its connection: its request is cancelled,
    // and the socket closes when the handler is done with it.
    if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
      c.gone = true;
      c.client->gone();
      epoll_ctl(epoll_, EPOLL_CTL_DEL, c.fd, nullptr);
      c.events = 0;
    }
    return;
  }
  if (c.state == State::Writing && (events & (EPOLLHUP | EPOLLERR))) {
    c.state = State::Closed;
    return;
  }
  if (c.state != State::Writing) receive(c);
  advance(c);
}

void ConnectionLayer::receive(Connection& c) {
  char buffer[kReadSize];
  const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
  if (n > 0 && c.state != Connection::State::Lingering) c.in.append(buffer, static_cast<size_t>(n));
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) c.eof = true;
}

void ConnectionLayer::advance(Connection& c) {
  using State = Connection::State;
  for (bool moved = true; moved;) {
    switch (c.state) {
      case State::Head: moved = read_head(c); break;
      case State::Body: moved = read_body(c); break;
      case State::Writing: moved = flush(c); break;
      case State::Lingering:
        if (c.eof) c.state = State::Closed;
        moved = false;
        break;
      case State::Handling:
      case State::Closed: moved = false; break;
    }
  }
  switch (c.state) {
    case State::Head:
    case State::Body:
    case State::Lingering: watch(c, EPOLLIN); break;
    case State::Writing: watch(c, EPOLLOUT); break;
    case State::Handling: watch(c, EPOLLRDHUP); break;
    case State::Closed: break;
  }
}

bool ConnectionLayer::read_head(Connection& c) {
  if (!c.in.empty() && !c.started) {
    c.started = true;
    c.deadline = Clock::now() + limits_.request_timeout;
  }
  const size_t end = find_head_end(c.in, c.searched);
  if (end == 0 || end > limits_.max_head_bytes) {
    c.searched = c.in.size();
    if (c.in.size() > limits_.max_head_bytes) {
      refuse(c, 431, "the request's head is over " + std::to_string(limits_.max_head_bytes) + " bytes");
      return true;
    }
    if (c.eof) c.state = Connection::State::Closed;
    return c.eof;
  }
  std::optional<RequestHead> head;
  try {
    head = parse_request_head(std::string_view(c.in).substr(0, end));
  } catch (const RequestError& e) {
    refuse(c, e.status, e.what());
    return true;
  }
  c.in.erase(0, end);
  c.searched = 0;
  begin_request(c, std::move(*head));
  return true;
}

void ConnectionLayer::begin_request(Connection& c, RequestHead head) {
  c.head = std::move(head);
  if (!rules_.authorized(c.head))
    return refuse(c, 401, "invalid or missing API key (send 'Authorization: Bearer <key>')");
  if (!rules_.takes_body(c.head)) return answer_here(c);
  if (reserved_ >= limits_.handlers)
    return refuse(c, 503,
                  "the server is busy: " + std::to_string(limits_.handlers) +
                      " requests are being served or waiting for a slot (try again shortly)",
                  true);
  if (c.head.content_length.value_or(0) > limits_.max_body_bytes)
    return refuse(c, 413, "the request body is over " + std::to_string(limits_.max_body_bytes) + " bytes");
  c.reserved = true;
  ++reserved_;
  c.body.clear();
  c.chunks.reset();
  if (c.head.chunked) c.chunks.emplace(limits_.max_body_bytes);
  if (c.head.expect_continue) {  // the client waits for this before it sends the body
    static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    [[maybe_unused]] const ssize_t n = ::send(c.fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  c.state = Connection::State::Body;
}

bool ConnectionLayer::read_body(Connection& c) {
  size_t used = 0;
  if (c.chunks) {
    try {
      used = c.chunks->feed(c.in, c.body);
    } catch (const RequestError& e) {
      refuse(c, e.status, e.what());
      return true;
    }
  } else {
    used = std::min(c.in.size(), c.head.content_length.value_or(0) - c.body.size());
    c.body.append(c.in, 0, used);
  }
  c.in.erase(0, used);
  if (c.chunks ? c.chunks->done() : c.body.size() == c.head.content_length.value_or(0)) {
    dispatch(c);
    return true;
  }
  if (c.eof) c.state = Connection::State::Closed;
  return c.eof;
}

void ConnectionLayer::answer_here(Connection& c) {
  // A body is never read here: the connection closes after the answer instead.
  const bool close = !c.head.keep_alive || c.head.has_body();
  std::string answer;
  HandlerStream stream(c.fd, rebuilt(c.head, ""), &answer, limits_.write_timeout);
  const bool keep_open = router_.answer(stream, close);
  send_buffered(c, std::move(answer), !keep_open);
}

void ConnectionLayer::dispatch(Connection& c) {
  c.state = Connection::State::Handling;
  c.client = std::make_shared<ClientWatch>();
  std::string request = rebuilt(c.head, c.body);
  std::string().swap(c.body);
  handlers_.enqueue([this, fd = c.fd, request = std::move(request), client = c.client, close = !c.head.keep_alive]() mutable {
    bool keep_open = false;
    {
      const WatchedClient watched(*client);
      HandlerStream stream(fd, std::move(request), nullptr, limits_.write_timeout);
      keep_open = router_.answer(stream, close);
    }
    {
      std::lock_guard lock(done_mutex_);
      done_.emplace_back(fd, keep_open);
    }
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
  });
}

void ConnectionLayer::handler_done(int fd, bool keep_open) {
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  c.reserved = false;
  --reserved_;
  c.client.reset();
  c.state = Connection::State::Closed;
  if (keep_open && !c.gone) {
    await_request(c);
    advance(c);
  }
  if (c.state == Connection::State::Closed) close(fd);
}

void ConnectionLayer::refuse(Connection& c, int status, const std::string& message, bool retry_later) {
  const std::string body = json_text(error_body(status, message));
  std::string answer = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) +
                       "\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\nConnection: close\r\n";
  if (retry_later) answer += "Retry-After: 1\r\n";
  if (c.reserved) {
    c.reserved = false;
    --reserved_;
  }
  send_buffered(c, answer + "\r\n" + body, true);
}

void ConnectionLayer::send_buffered(Connection& c, std::string answer, bool close) {
  c.out = std::move(answer);
  c.sent = 0;
  c.close_after = close;
  c.state = Connection::State::Writing;
  c.deadline = Clock::now() + limits_.write_timeout;
}

bool ConnectionLayer::flush(Connection& c) {
  while (c.sent < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      return false;  // the rest when the socket takes more
    } else {
      c.state = Connection::State::Closed;
      return false;
    }
  }
  std::string().swap(c.out);
  if (!c.close_after) {
    await_request(c);  // a pipelined request may be in `in` already
    return true;
  }
  // What the client still sends is dropped until it closes or kLinger passes.
  ::shutdown(c.fd, SHUT_WR);
  std::string().swap(c.in);
  c.state = Connection::State::Lingering;
  c.deadline = Clock::now() + kLinger;
  return true;
}

void ConnectionLayer::expire(Clock::time_point now) {
  using State = Connection::State;
  std::vector<int> closed;
  for (const auto& [fd, c] : connections_) {
    if (c->state == State::Handling || c->deadline > now) continue;
    if ((c->state == State::Head && c->started) || c->state == State::Body) {
      refuse(*c, 408,
             "the request did not arrive within " + std::to_string(limits_.request_timeout.count()) + " ms");
      advance(*c);
    } else {
      c->state = State::Closed;
    }
    if (c->state == State::Closed) closed.push_back(fd);
  }
  for (int fd : closed) close(fd);
}

int ConnectionLayer::wait_ms(Clock::time_point now) const {
  auto next = now + std::chrono::seconds(1);
  for (const auto& [fd, c] : connections_)
    if (c->state != Connection::State::Handling) next = std::min(next, c->deadline);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::max<decltype(ms)>(0, ms) + 1);
}

void ConnectionLayer::watch(Connection& c, uint32_t events) {
  if (c.events == events) return;
  epoll_event e{events, {.fd = c.fd}};
  epoll_ctl(epoll_, c.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c.fd, &e);
  c.events = events;
}

void ConnectionLayer::close(int fd) {
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  if (c.state == Connection::State::Handling) return;  // its handler still writes to it: closed when done
  if (c.reserved) --reserved_;
  --(c.refused ? refused_ : open_);
  ::close(fd);
  connections_.erase(it);
}

}  // namespace kiln
