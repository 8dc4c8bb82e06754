// Whether the client of a request is still there while its handler works.
// The connection layer (connection_layer.hpp) watches the socket of every
// request it has handed to a handler thread and calls what the handler asked
// for as soon as the client closes or resets its connection: a request that
// waits for a slot or generates without writing (not streamed) is cancelled
// then, not when it would next write.
#pragma once

#include <functional>
#include <mutex>

namespace kiln {

class ClientWatch {
 public:
  // Runs `on_gone` when the client goes: at once if it has gone already.
  // A later call replaces an earlier one's function.
  void on_gone(std::function<void()> on_gone);
  // The layer: the client has gone.
  void gone();

 private:
  std::mutex mutex_;
  bool gone_ = false;
  std::function<void()> on_gone_;
};

// The watch of the request this thread's handler runs for, or nullptr (a
// request answered on the layer's own thread needs none).
ClientWatch* current_client();

// Makes `watch` this thread's current_client() for its lifetime.
class WatchedClient {
 public:
  explicit WatchedClient(ClientWatch& watch);
  ~WatchedClient();
  WatchedClient(const WatchedClient&) = delete;
  WatchedClient& operator=(const WatchedClient&) = delete;
};

}  // namespace kiln
