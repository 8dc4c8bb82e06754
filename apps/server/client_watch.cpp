#include "apps/server/client_watch.hpp"

namespace kiln {

namespace {

// Set by the layer around a handler's run: httplib's handlers have no place
// for data of the connection layer's own.
thread_local ClientWatch* current = nullptr;

}  // namespace

void ClientWatch::on_gone(std::function<void()> on_gone) {
  std::unique_lock lock(mutex_);
  if (!gone_) {
    on_gone_ = std::move(on_gone);
    return;
  }
  lock.unlock();
  on_gone();
}

void ClientWatch::gone() {
  std::function<void()> run;
  {
    std::lock_guard lock(mutex_);
    gone_ = true;
    run.swap(on_gone_);
  }
  if (run) run();
}

ClientWatch* current_client() { return current; }

WatchedClient::WatchedClient(ClientWatch& watch) { current = &watch; }
WatchedClient::~WatchedClient() { current = nullptr; }

}  // namespace kiln
