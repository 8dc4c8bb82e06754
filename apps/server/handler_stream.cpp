#include "apps/server/handler_stream.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kiln {

namespace {

void address_of(const sockaddr_storage& a, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    port = ntohs(v6.sin6_port);
  }
  ip = text;
}

bool wait_writable(int socket, std::chrono::milliseconds timeout) {
  pollfd p{socket, POLLOUT, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0 && (p.revents & POLLOUT);
}

}  // namespace

HandlerStream::HandlerStream(int socket, std::string request, std::string* out, std::chrono::milliseconds write_timeout)
    : socket_(socket), request_(std::move(request)), out_(out), write_timeout_(write_timeout) {}

bool HandlerStream::is_writable() const { return out_ || wait_writable(socket_, write_timeout_); }

ssize_t HandlerStream::read(char* ptr, size_t size) {
  const size_t n = std::min(size, request_.size() - read_);
  std::memcpy(ptr, request_.data() + read_, n);
  read_ += n;
  if (read_ == request_.size()) {  // httplib has the body now: a request waiting for a slot need not hold it twice
    std::string().swap(request_);
    read_ = 0;
  }
  return static_cast<ssize_t>(n);
}

ssize_t HandlerStream::write(const char* ptr, size_t size) {
  if (out_) {
    out_->append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(socket_, ptr + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) sent += static_cast<size_t>(n);
    else if (n < 0 && errno == EINTR) continue;
    else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_writable(socket_, write_timeout_)) continue;
    else return -1;  // gone, or not reading its answer
  }
  return static_cast<ssize_t>(size);
}

void HandlerStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t size = sizeof a;
  if (getpeername(socket_, reinterpret_cast<sockaddr*>(&a), &size) == 0) address_of(a, ip, port);
}

void HandlerStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t size = sizeof a;
  if (getsockname(socket_, reinterpret_cast<sockaddr*>(&a), &size) == 0) address_of(a, ip, port);
}

bool Router::answer(httplib::Stream& stream, bool close) {
  bool closed = false;
  return process_request(stream, close, closed, nullptr) && !closed && !close;
}

}  // namespace kiln
