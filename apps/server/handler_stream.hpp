// How a request the connection layer has read whole reaches httplib's
// routing and handlers (http_routes.cpp): httplib's request processing reads
// the request from memory (the layer rebuilds it with a Content-Length
// whatever its framing was) and writes the answer either into a buffer, for
// answers made on the layer's own thread and sent without blocking it, or to
// the socket, from a handler thread that waits at most `write_timeout` each
// time the client is slow to take the answer.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

namespace kiln {

class HandlerStream final : public httplib::Stream {
 public:
  // Answers go to *out if it is given, else to `socket` (non-blocking).
  HandlerStream(int socket, std::string request, std::string* out, std::chrono::milliseconds write_timeout);

  bool is_readable() const override { return read_ < request_.size(); }
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return socket_; }

 private:
  int socket_;
  std::string request_;
  size_t read_ = 0;
  std::string* out_;
  std::chrono::milliseconds write_timeout_;
};

// httplib's routes and answers (add_routes) for requests the layer has read.
class Router : public httplib::Server {
 public:
  // Answers the request in `stream`; `close`: the answer says the connection
  // closes. False when the connection must close (the request asked for it,
  // or the answer could not be written).
  bool answer(httplib::Stream& stream, bool close);
  // The socket bind_to_port or bind_to_any_port made.
  int listening_socket() const { return svr_sock_; }
};

}  // namespace kiln
