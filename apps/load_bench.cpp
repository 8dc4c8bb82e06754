#include "apps/load_bench.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/error/error.hpp"
#include "apps/bench_stats.hpp"
#include "apps/resident_memory.hpp"
#include "engine/model/load_threads.hpp"

extern char** environ;

namespace kiln {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct LoadRun {
  double start_to_token_ms = 0;  // measured by the parent
  double load_ms = 0;            // the child's load(), from main
  double token_ms = 0;           // the child's first forward pass and pick
  double peak_bytes = 0;         // the child's VmHWM after its first token
};

void drop_page_cache() {
  ::sync();
  std::ofstream out("/proc/sys/vm/drop_caches");
  if (!(out << "3" << std::flush))
    throw Error(std::string("--drop-caches: cannot write /proc/sys/vm/drop_caches (it needs root): ") +
                std::strerror(errno));
}

LoadRun spawn_run(const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("--load: pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const auto t0 = Clock::now();
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    throw Error(std::string("--load: cannot start /proc/self/exe: ") + std::strerror(spawned));
  }
  // The child writes its line right after its first token: the time it arrives ends the run.
  std::string line;
  char buf[256];
  Clock::time_point t1;
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (line.empty()) t1 = Clock::now();
    line.append(buf, size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  LoadRun r;
  std::istringstream in(line);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !(in >> r.load_ms >> r.token_ms >> r.peak_bytes))
    throw Error("--load: the measured process failed (its error is above)");
  r.start_to_token_ms = ms_between(t0, t1);
  return r;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

int run_load_child(const ModelEntry& entry, const std::string& model_path, int threads) {
  const auto t0 = Clock::now();
  std::unique_ptr<Model> model = [&] {
    const LoadThreads load_threads(threads);
    return load_model(entry, model_path);
  }();
  const auto t1 = Clock::now();
  const std::unique_ptr<Sequence> sequence = model->new_sequence();
  sequence->set_threads(threads);
  const std::vector<int32_t> prompt = model->tokenizer().encode("", /*add_special=*/true, /*parse_special=*/false);
  if (prompt.empty()) throw Error("--load: the model adds no BOS, so an empty prompt has no token to start from");
  std::vector<float> logits(size_t(model->n_vocab()));
  sequence->forward(prompt.data(), int(prompt.size()), 0, Logits::Last, logits.data());
  volatile auto first = std::max_element(logits.begin(), logits.end()) - logits.begin();
  (void)first;
  const auto t2 = Clock::now();
  std::printf("%.4f %.4f %lld\n", ms_between(t0, t1), ms_between(t1, t2),
              static_cast<long long>(own_status_bytes("VmHWM").value_or(0)));
  std::fflush(stdout);
  return 0;
}

void run_load_bench(const ModelEntry& entry, const LoadBenchOptions& o) {
  std::vector<std::string> args = {std::string(entry.name) + "-bench", kLoadChildFlag, "-t", std::to_string(o.threads)};
  if (!o.model_path.empty()) args.insert(args.end(), {"-m", o.model_path});
  std::vector<double> total, load, token, peak;
  if (!o.drop_caches) spawn_run(args);  // warm: the first run brings the files into the page cache
  for (int r = 0; r < o.runs; ++r) {
    if (o.drop_caches) drop_page_cache();
    const LoadRun run = spawn_run(args);
    total.push_back(run.start_to_token_ms);
    load.push_back(run.load_ms);
    token.push_back(run.token_ms);
    peak.push_back(run.peak_bytes);
  }
  const char* weights = entry.built_in && o.model_path.empty() ? "built in" : "GGUF file";
  std::printf("| model | weights | threads | page cache | start to 1st token ms | load ms | 1st token ms | peak RSS MB |\n");
  std::printf("|---|---|---:|---|---:|---:|---:|---:|\n");
  std::printf("| %s | %s | %d | %s | %s (min %s) | %s | %s | %s |\n\n", entry.name, weights, o.threads,
              o.drop_caches ? "dropped (cold)" : "warm", fixed(median(total), 1).c_str(),
              fixed(*std::min_element(total.begin(), total.end()), 1).c_str(), fixed(median(load), 1).c_str(),
              fixed(median(token), 1).c_str(), fixed(median(peak) / 1e6, 1).c_str());
  std::printf("Medians of %d processes%s; start to 1st token is measured by this process, from before it started each "
              "one to the moment that one reported its first token of an empty prompt (BOS only).\n", o.runs,
              o.drop_caches ? ", the page cache dropped before each" : " after one unmeasured run");
}

}  // namespace kiln
