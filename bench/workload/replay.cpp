// spinrpc-replay: plays a workload trace (bench/workload/README.md, "The
// trace"; gzip-compressed or plain) through the C++ client shim against spinrpc-bench-server
// (spinrpc-server plus benchWork, bench/peers/bench_methods.h). Each recorded Request becomes a benchWork request of the
// recorded size (padded) asking the server to spend the recorded handling
// time and answer with the recorded reply size; between requests the
// client spends the recorded gap as busy work, as the walker did.
//
//   spinrpc-replay --trace FILE [--start I] [--limit N] [--rounds R] [--parallel LIST]
//                  [--variants default,off,pipes] [--server PATH] [--json FILE]
//   spinrpc-replay --check FILE
//
// --start I         skip the first I requests (default 0; 2 skips initialize
//                   and the seconds-long updateSnapshot that loads the program)
// --limit N         replay at most N requests from there (0: all)
// --rounds R        paired rounds (default 5); variants alternate their order
//                   from round to round
// --parallel LIST   comma-separated concurrency levels, e.g. 1,2,3,4: at each,
//                   that many replays run at once, each its own client
//                   process and server (default 1)
// --variants LIST   default (no spin setting anywhere: both ends' defaults,
//                   shared memory included), off (--spin-us 0 and shim
//                   budget 0) and/or pipes (the defaults over pipes:
//                   SyncRpcOptions::shared_memory false; docs/SHARED-MEMORY.md)
// --server PATH     the server (default: SPINRPC_BENCH_SERVER, else the
//                   spinrpc-bench-server next to this executable)
// --json FILE       one JSON object per replay (bench/workload/report.mjs)
// --check FILE      reads and checks FILE only: one line on stdout and status 0
//                   if it is a valid trace (bench/workload/README.md, "A valid
//                   trace"), else one line on stderr naming the file, the line
//                   and what is wrong, status 1; as replay.mjs --check
//
// The server's benchWork takes whole µs: the recorded ns are carried over
// from request to request (error diffusion), so the total is exact and each
// request is within 1 µs. A reply of the wrong size ends the run, status 3.
#include <sys/wait.h>  // waitpid
#include <unistd.h>    // fork, pipe, readlink

#include <algorithm>  // std::min
#include <chrono>     // std::chrono::steady_clock
#include <cstdio>     // std::fprintf
#include <cstdlib>    // std::getenv, setenv, unsetenv
#include <fstream>    // std::ofstream
#include <iostream>   // std::cout
#include <stdexcept>  // std::runtime_error
#include <string>     // std::string
#include <string_view>  // std::string_view
#include <vector>     // std::vector

#include "bench/harness/flag_parser.h"
#include "bench/harness/process_cpu.h"
#include "bench/peers/bench_work.h"
#include "bench/workload/trace_file.h"
#include "client-shim/sync_rpc_channel.h"

namespace {

using Clock = std::chrono::steady_clock;

using spinrpc::bench::TraceRequest;

// The requests to play: the whole trace is read and checked first
// (bench/workload/trace_file.h), then --start and --limit take their slice.
std::vector<TraceRequest> requests_to_play(const std::string& path, std::size_t start, std::size_t limit) {
  std::vector<TraceRequest> all = spinrpc::bench::read_trace(path).requests;
  const std::size_t count = all.size();
  const std::size_t first = std::min(start, count);
  const std::size_t last = limit == 0 ? count : std::min(count, first + limit);
  if (first == last) {
    throw std::runtime_error(path + ": no requests to replay from --start " + std::to_string(start) + " (the trace has " +
                             std::to_string(count) + ")");
  }
  return {all.begin() + static_cast<std::ptrdiff_t>(first), all.begin() + static_cast<std::ptrdiff_t>(last)};
}

void busy_for(std::int64_t ns) {
  if (ns <= 0) return;
  const auto until = Clock::now() + std::chrono::nanoseconds(ns);
  while (Clock::now() < until) {
  }
}

struct Result {
  double wall_ms, client_cpu_ms, server_cpu_ms;
};

// The time the trace itself asks for, in ms: every request's recorded
// handling time and every gap between requests. What the wall clock spends
// beyond it is the transport's: waits, wake-ups, framing, copies.
double recorded_ms(const std::vector<TraceRequest>& trace) {
  std::int64_t ns = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    ns += std::max<std::int64_t>(trace[i].server_ns, 0);
    if (i + 1 < trace.size()) ns += std::max<std::int64_t>(trace[i].gap_ns, 0);
  }
  return static_cast<double>(ns) / 1e6;
}

Result replay_once(const std::vector<TraceRequest>& trace, const std::string& server, const std::string& variant) {
  const bool spin_off = variant == "off";
  // Payloads first, outside the timed loop.
  std::vector<std::string> payloads;
  payloads.reserve(trace.size());
  std::int64_t carry_ns = 0;
  for (const TraceRequest& r : trace) {
    carry_ns += r.server_ns > 0 ? r.server_ns : 0;
    const std::int64_t busy_us = carry_ns / 1000;
    carry_ns -= busy_us * 1000;
    std::string p = spinrpc::bench::bench_work_request(static_cast<std::uint64_t>(busy_us), r.reply_bytes);
    if (p.size() + 10 < r.request_bytes) {  // benchWork ignores unknown keys
      p.pop_back();
      p += R"(,"pad":")" + std::string(r.request_bytes - p.size() - 9, 'p') + "\"}";
    }
    payloads.push_back(std::move(p));
  }
  spinrpc::SyncRpcOptions options;
  std::vector<std::string> args{"--api", "--cwd", "/"};
  if (spin_off) {
    options.spin.spin_us = 0;
    options.spin.adaptive = false;
    args.insert(args.end(), {"--spin-us", "0", "--adaptive=0"});
  }
  if (variant == "pipes") options.shared_memory = false;
  spinrpc::SyncRpcChannel channel(server, args, options);
  for (int i = 0; i < 200; ++i) channel.request("echo", "warm");

  const int pid = channel.pid();
  const auto t0 = Clock::now();
  const std::int64_t client0 = spinrpc::bench::self_cpu_ns();
  const std::int64_t server0 = spinrpc::bench::process_cpu_ns(pid);
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (i > 0) busy_for(trace[i - 1].gap_ns);
    const spinrpc::ByteView reply = channel.request_bytes("benchWork", spinrpc::as_bytes(payloads[i]));
    if (reply.size() != trace[i].reply_bytes) {
      std::fprintf(stderr, "spinrpc-replay: request %zu: reply of %zu bytes, recorded %llu\n", i, reply.size(),
                   static_cast<unsigned long long>(trace[i].reply_bytes));
      std::exit(3);
    }
  }
  const auto t1 = Clock::now();
  const Result result{std::chrono::duration<double, std::milli>(t1 - t0).count(),
                      static_cast<double>(spinrpc::bench::self_cpu_ns() - client0) / 1e6,
                      static_cast<double>(spinrpc::bench::process_cpu_ns(pid) - server0) / 1e6};
  channel.close();
  return result;
}

std::string default_server() {
  if (const char* env = std::getenv("SPINRPC_BENCH_SERVER"); env != nullptr && *env != '\0') return env;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "spinrpc-bench-server";
  std::string path(self, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "spinrpc-bench-server";
}

// Runs `parallel` replays at once, each in its own forked process; returns
// their results in replica order. Fork happens before any channel exists.
std::vector<Result> replay_parallel(const std::vector<TraceRequest>& trace, const std::string& server,
                                    const std::string& variant, int parallel) {
  std::vector<std::pair<pid_t, int>> children;
  for (int i = 0; i < parallel; ++i) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      close(fds[0]);
      int status = 0;
      try {
        const Result r = replay_once(trace, server, variant);
        if (write(fds[1], &r, sizeof r) != sizeof r) status = 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "spinrpc-replay: %s\n", e.what());
        status = 1;
      }
      _exit(status);
    }
    close(fds[1]);
    children.emplace_back(pid, fds[0]);
  }
  std::vector<Result> results;
  int failed = 0;
  for (auto [pid, fd] : children) {
    Result r{};
    const bool got = read(fd, &r, sizeof r) == sizeof r;
    close(fd);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failed = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
      continue;
    }
    results.push_back(r);
  }
  if (failed) std::exit(failed == 3 ? 3 : 1);
  return results;
}

constexpr char kUsage[] =
    "usage: spinrpc-replay --trace FILE [--start I] [--limit N] [--rounds R] [--parallel 1,2,3,4] "
    "[--variants default,off,pipes] [--server PATH] [--json FILE]\n"
    "       spinrpc-replay --check FILE\n";

int run(int argc, char** argv) {
  using spinrpc::bench::whole_number;
  std::string trace_path, check_path, server = default_server(), json_path;
  std::size_t start = 0, limit = 0;
  int rounds = 5;
  std::vector<std::string> parallel_list{"1"}, variants{"default", "off"};
  spinrpc::bench::FlagParser cli;
  const auto text = [](std::string& to) { return [&to](std::string_view v) { to = v; }; };
  cli.option("--trace", text(trace_path));
  cli.option("--check", text(check_path));
  cli.option("--start", [&](std::string_view v) { start = whole_number("--start", v); });
  cli.option("--limit", [&](std::string_view v) { limit = whole_number("--limit", v); });
  cli.option("--rounds", [&](std::string_view v) { rounds = static_cast<int>(whole_number("--rounds", v)); });
  cli.option("--parallel", [&](std::string_view v) { parallel_list = spinrpc::bench::split_list(v); });
  cli.option("--variants", [&](std::string_view v) { variants = spinrpc::bench::split_list(v); });
  cli.option("--server", text(server));
  cli.option("--json", text(json_path));
  if (!cli.parse(argc, argv)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!check_path.empty()) {
    const spinrpc::bench::Trace trace = spinrpc::bench::read_trace(check_path);
    std::printf("%s: a valid trace, version %d: %zu requests, %zu methods\n", check_path.c_str(),
                spinrpc::bench::kTraceVersion, trace.requests.size(), trace.methods.size());
    return 0;
  }
  if (trace_path.empty()) throw std::invalid_argument("--trace is required");
  for (const auto& v : variants) {
    if (v != "default" && v != "off" && v != "pipes") throw std::invalid_argument("unknown variant " + v);
  }
  for (const auto& level : parallel_list) {
    whole_number("--parallel", level, 1);
  }
  const auto trace = requests_to_play(trace_path, start, limit);
  // "default" must mean the defaults: no TSGO_SYNC_SPIN_* from our caller.
  unsetenv("TSGO_SYNC_SPIN_US");
  unsetenv("TSGO_SYNC_SPIN_ADAPTIVE");

  const double recorded = recorded_ms(trace);
  std::ofstream json;
  if (!json_path.empty()) json.open(json_path);
  for (const auto& level : parallel_list) {
    const int parallel = static_cast<int>(std::stoul(level));
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t k = 0; k < variants.size(); ++k) {
        const std::string& v = variants[(k + round) % variants.size()];
        const auto results = replay_parallel(trace, server, v, parallel);
        for (std::size_t replica = 0; replica < results.size(); ++replica) {
          const Result& r = results[replica];
          char line[512];
          std::snprintf(line, sizeof line,
                        R"({"client":"shim","variant":"%s","parallel":%d,"round":%d,"replica":%zu,"requests":%zu,)"
                        R"("wallMs":%.3f,"recordedMs":%.3f,"clientCpuMs":%.3f,"serverCpuMs":%.3f})",
                        v.c_str(), parallel, round, replica, trace.size(), r.wall_ms, recorded, r.client_cpu_ms,
                        r.server_cpu_ms);
          std::cout << line << '\n' << std::flush;
          if (json) json << line << '\n';
        }
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "spinrpc-replay: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spinrpc-replay: %s\n", e.what());
    return 1;
  }
}
