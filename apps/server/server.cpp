#include "apps/server/server.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "apps/cli_chat.hpp"
#include "apps/cli_support.hpp"
#include "apps/options/parse_options.hpp"
#include "apps/options/usage.hpp"
#include "apps/server/completion.hpp"
#include "apps/server/connection_layer.hpp"
#include "apps/server/http_routes.hpp"
#include "apps/server/slot_scheduler.hpp"
#include "apps/server/template_kwargs.hpp"
#include "engine/error/error.hpp"
#include "engine/model/load_threads.hpp"

namespace kiln {

namespace {

// SIGINT and SIGTERM: blocked in every thread (block_stop_signals runs
// before any other thread starts, and threads inherit the mask) and taken by
// one thread that stops the server, so no signal handler runs in the middle
// of the server's work.
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// --cache-ram in bytes: SIZE_MAX for no limit, 0 for no prefix cache.
size_t cache_ram_bytes(long long mib) { return mib < 0 ? SIZE_MAX : static_cast<size_t>(mib) << 20; }

// Every connection takes a descriptor, those told 503 beyond the limit too:
// the soft limit is raised to the hard one if that is needed.
void allow_connections(int max_connections) {
  const rlim_t needed = 2 * static_cast<rlim_t>(max_connections) + 64;
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur >= needed) return;
  limit.rlim_cur = std::min(needed, limit.rlim_max);
  setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < needed)
    throw Error("--max-connections " + std::to_string(max_connections) + " needs " + std::to_string(needed) +
                " file descriptors, but this process may open " + std::to_string(limit.rlim_max) + " (ulimit -n)");
}

class StopOnSignal {
 public:
  StopOnSignal(ConnectionLayer& layer, sigset_t signals) : signals_(signals) {
    waiter_ = std::thread([this, &layer] {
      int signal = 0;
      sigwait(&signals_, &signal);
      layer.stop();
    });
  }
  ~StopOnSignal() {
    pthread_kill(waiter_.native_handle(), SIGTERM);  // ends the wait if no signal came
    waiter_.join();
  }

 private:
  sigset_t signals_;
  std::thread waiter_;
};

int run(int argc, char** argv, const ModelEntry& entry) {
  const char* name = entry.name;
  std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not the end of the server
  const sigset_t stop_signals = block_stop_signals();
  const std::optional<Options> parsed = parse_options(kServer, argc, argv, entry);
  if (!parsed) return 0;
  const Options& opt = *parsed;
  const int threads = wanted_threads(opt);
  std::unique_ptr<Model> model = [&] {
    const LoadThreads load_threads(threads);
    return load_model(entry, opt.model_path);
  }();
  chat::ChatTemplate chat_template = load_chat_template(*model, opt.chat_template_file);
  const std::string template_name = chat_template.name();
  const size_t cache_bytes = cache_ram_bytes(opt.cache_ram_mib);
  ServerMetrics metrics(static_cast<size_t>(opt.parallel) * static_cast<size_t>(model->n_ctx()));
  const ToolCallFormat tool_format = detect_tool_call_format(chat_template.source());
  const ReasoningSyntax reasoning = detect_reasoning_syntax(chat_template.source());
  const std::string template_kwargs = server_template_kwargs(opt.chat_template_kwargs, opt.reasoning_budget);
  std::vector<std::string> kept_tokens = tool_call_tokens(tool_format);
  kept_tokens.insert(kept_tokens.end(), reasoning.tokens.begin(), reasoning.tokens.end());
  CompletionRunner runner(*model, threads, opt.parallel, cache_bytes, metrics, kept_tokens, reasoning);
  SlotScheduler scheduler(opt.parallel, runner);

  allow_connections(opt.max_connections);
  Router server;
  const ServerContext context{*model, scheduler, chat_template, opt.alias.empty() ? name : opt.alias, template_name,
                              opt.api_key, opt.metrics ? &metrics : nullptr, tool_format, reasoning,
                              *parse_reasoning_format(opt.reasoning_format), template_kwargs,
                              opt.reasoning_budget > 0 ? opt.reasoning_budget : -1, opt.reasoning_budget_message};
  add_routes(server, context);
  // The layer accepts on the socket cpp-httplib binds (its address lookup),
  // which listens with a backlog of 5 connections, so many clients
  // connecting at once overflow it and some lose their request; listening
  // again on the bound socket (which Linux allows) makes the queue longer.
  const int port = opt.port == 0 ? server.bind_to_any_port(opt.host) : (server.bind_to_port(opt.host, opt.port) ? opt.port : -1);
  if (port < 0) throw Error("cannot listen on " + opt.host + ":" + std::to_string(opt.port) + " (in use, or not an address of this machine)");
  if (::listen(server.listening_socket(), SOMAXCONN) != 0) throw Error("cannot listen on " + opt.host + ":" + std::to_string(port));
  const std::string cache = cache_bytes == 0        ? "no prefix cache"
                            : cache_bytes == SIZE_MAX ? "prefix cache without limit"
                                                      : "prefix cache " + std::to_string(opt.cache_ram_mib) + " MiB";
  std::fprintf(stderr, "%s-server: listening on http://%s:%d (%d slot%s, decoded together; context %d; %s; %d threads)\n",
               name, opt.host.c_str(), port, opt.parallel, opt.parallel == 1 ? "" : "s", model->n_ctx(), cache.c_str(),
               runner.threads());
  std::fflush(stderr);
  // Every completion read or served holds a handler thread: one per slot
  // and per waiting request.
  ConnectionLimits limits;
  limits.max_connections = opt.max_connections;
  limits.handlers = opt.parallel + opt.max_waiting;
  limits.request_timeout = std::chrono::milliseconds(static_cast<long>(opt.request_timeout * 1000));
  ConnectionLayer layer(server,
                        {[&context](const RequestHead& head) { return key_accepted(context, head); }, takes_body},
                        limits);
  StopOnSignal stop_on_signal(layer, stop_signals);
  layer.run();
  std::fprintf(stderr, "%s-server: stopped\n", name);
  return 0;
}

}  // namespace

int server_main(int argc, char** argv, const ModelEntry& model) {
  return run_reporting_errors(program_name(kServer, model), [&] { return run(argc, argv, model); });
}

}  // namespace kiln
