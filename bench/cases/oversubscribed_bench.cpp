// BM_Oversubscribed: N client/server pairs echoing 8 bytes at once, for a
// fixed time, N = 1..4 (docs/BENCHMARKING.md#the-workloads: whether spinning inverts
// when pairs outnumber cores). Each pair is its own processes: the client
// side is fork(2)ed from this process and spawns its own spinrpc-server.
// Every pair warms up, then all start together (one pipe closed = one EOF
// for all), echo until their own deadline, and send back their latencies
// and CPU times through a pipe. Reported: all pairs' latencies pooled;
// client_cpu_s and server_cpu_s summed over the pairs; pairs_echoes_per_s.
// BM_OversubscribedBusy: one pair while two busy-loop processes keep both
// CPUs busy for the same time.
#include <sys/wait.h>  // ::waitpid, WIFEXITED, WEXITSTATUS
#include <unistd.h>    // ::fork, ::read, ::write, ::_exit

#include <cerrno>     // errno, EINTR
#include <chrono>     // std::chrono::milliseconds
#include <cstddef>    // std::byte, std::size_t
#include <cstdint>    // std::int64_t
#include <cstdio>     // std::fprintf
#include <stdexcept>  // std::runtime_error
#include <string>     // std::string
#include <system_error>  // std::system_error
#include <type_traits>   // std::is_trivially_copyable_v
#include <vector>     // std::vector

#include "bench/harness/integrity.h"
#include "bench/harness/measurement.h"
#include "bench/harness/payloads.h"
#include "bench/peers/peers.h"
#include "bench/harness/process_cpu.h"
#include "bench/harness/registration.h"
#include "bench/harness/timed_loop.h"
#include "bench/harness/spin_counters.h"
#include "bench/cases/workloads.h"
#include "descriptor/pipe.h"

namespace spinrpc::bench {

namespace {

// What a pair's client process sends back after its timed loop, followed by
// `count` latencies (int64 ns). Raw bytes: both ends are this binary.
struct PairResult {
  std::int64_t count = 0;
  std::int64_t client_cpu_ns = 0;
  std::int64_t server_cpu_ns = 0;
  SpinCounters client_spin;
  SpinCounters server_spin;
};
static_assert(std::is_trivially_copyable_v<PairResult>);

constexpr char kReady = 'R';

bool write_all(int fd, const void* data, std::size_t len) {
  const auto* p = static_cast<const char*>(data);
  while (len > 0) {
    const ssize_t n = ::write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly `len` bytes; false at EOF or on an error before that.
bool read_all(int fd, void* data, std::size_t len) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    const ssize_t n = ::read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

// The client side of one pair, in a forked child. Never returns: 0 after
// sending its result, kIntegrityExitStatus on a wrong reply (check_reply),
// 1 on any other failure.
[[noreturn]] void run_pair_client(const BenchPlan& plan, const std::string& name, Variant v, int go_fd,
                                  int result_fd) {
  int status = 0;
  try {
    SyncRpcChannel channel = start_spinrpc_server(plan, v, name);
    const std::vector<std::vector<std::byte>> payloads = make_payloads(kSmallBytes, 16);
    std::vector<std::int64_t> latencies;
    latencies.reserve(std::size_t{1} << 18);
    const SpinBaseline spin0(channel);
    if (!write_all(result_fd, &kReady, 1)) throw std::runtime_error("cannot report ready");
    // Start signal: EOF on the go pipe, for every pair at once.
    char ignored = 0;
    while (::read(go_fd, &ignored, 1) < 0 && errno == EINTR) {
    }

    PairResult result;
    const std::int64_t server_cpu0 = process_cpu_ns(channel.pid());
    const std::int64_t self_cpu0 = self_cpu_ns();
    const auto deadline = Measurement::Clock::now() + plan.pairs_duration;
    std::size_t i = 0;
    for (;; ++i) {
      const std::vector<std::byte>& p = payloads[i % payloads.size()];
      const RoundTrip rt = timed_request(channel, "echo", p, p, name, i);
      latencies.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(rt.latency()).count());
      if (rt.replied >= deadline) break;
    }
    result.client_cpu_ns = self_cpu_ns() - self_cpu0;
    result.server_cpu_ns = process_cpu_ns(channel.pid()) - server_cpu0;
    result.client_spin = spin0.client_since(channel);
    result.server_spin = spin0.server_since(channel);
    result.count = static_cast<std::int64_t>(latencies.size());
    if (!write_all(result_fd, &result, sizeof result) ||
        !write_all(result_fd, latencies.data(), latencies.size() * sizeof(std::int64_t))) {
      throw std::runtime_error("cannot send the results to the parent");
    }
    channel.close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spinrpc-bench: %s: %s\n", name.c_str(), e.what());
    status = 1;
  }
  ::_exit(status);
}

// A busy loop in a forked child: from the start signal (EOF on the go
// pipe) until `duration` and a little more have passed, it only keeps its
// CPU busy, as unrelated work would.
[[noreturn]] void run_busy_loop(int go_fd, std::chrono::milliseconds duration) {
  char ignored = 0;
  while (::read(go_fd, &ignored, 1) < 0 && errno == EINTR) {
  }
  const auto until = Measurement::Clock::now() + duration + std::chrono::milliseconds(50);
  while (Measurement::Clock::now() < until) {
  }
  ::_exit(0);
}

void run_pairs(benchmark::State& state, const BenchPlan& plan, const std::string& name, int pairs, Variant v,
               int busy_loops) {
  PipePair go = make_pipe();
  std::vector<UniqueFd> results;
  std::vector<pid_t> pids;
  std::vector<pid_t> busy_pids;
  for (int k = 0; k < busy_loops; ++k) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), "cannot fork busy loop " + std::to_string(k));
    if (pid == 0) {
      go.write_end.reset();
      run_busy_loop(go.read_end.get(), plan.pairs_duration);
    }
    busy_pids.push_back(pid);
  }
  for (int k = 0; k < pairs; ++k) {
    PipePair result = make_pipe();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), "cannot fork pair " + std::to_string(k));
    if (pid == 0) {
      // Child: keep only the go pipe's read end and its own result write end.
      go.write_end.reset();
      result.read_end.reset();
      for (UniqueFd& other : results) other.reset();
      run_pair_client(plan, name + " pair " + std::to_string(k), v, go.read_end.get(), result.write_end.get());
    }
    pids.push_back(pid);
    results.push_back(std::move(result.read_end));
  }
  go.read_end.reset();
  for (int k = 0; k < pairs; ++k) {
    char ready = 0;
    if (!read_all(results[static_cast<std::size_t>(k)].get(), &ready, 1) || ready != kReady) {
      throw std::runtime_error("pair " + std::to_string(k) + " did not start (see above)");
    }
  }

  Measurement m(name, -1, false, 0);
  SpinCounters client_spin;
  SpinCounters server_spin;
  for (auto _ : state) {
    m.start();
    go.write_end.reset();  // all pairs start now
    for (int k = 0; k < pairs; ++k) {
      const int fd = results[static_cast<std::size_t>(k)].get();
      PairResult r;
      std::vector<std::int64_t> latencies;
      // A pair that fails here has exited: its status below says why.
      if (read_all(fd, &r, sizeof r)) {
        latencies.resize(static_cast<std::size_t>(r.count));
        if (!read_all(fd, latencies.data(), latencies.size() * sizeof(std::int64_t))) latencies.clear();
      }
      m.add_samples(latencies);
      m.add_cpu(r.client_cpu_ns, r.server_cpu_ns);
      client_spin += r.client_spin;
      server_spin += r.server_spin;
    }
    m.stop();
    state.SetIterationTime(static_cast<double>(plan.pairs_duration.count()) / 1e3);
  }
  for (int k = 0; k < pairs; ++k) {
    int status = 0;
    while (::waitpid(pids[static_cast<std::size_t>(k)], &status, 0) < 0) {
      if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "cannot reap pair " + std::to_string(k));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == kIntegrityExitStatus) {
      integrity_failure(name + ": pair " + std::to_string(k) + " saw a wrong reply (see above)");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      throw std::runtime_error("pair " + std::to_string(k) + " failed with wait status " + std::to_string(status));
    }
  }
  for (const pid_t pid : busy_pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  m.set_client_spin(client_spin);
  m.set_server_spin(server_spin);
  m.set_counter("echoes_per_s",
                static_cast<double>(m.samples_ns().size()) / (static_cast<double>(plan.pairs_duration.count()) / 1e3));
  m.publish(state, plan);
}

}  // namespace

void register_oversubscribed_benchmarks(const BenchPlan& plan, int round) {
  // The figures are medians of per-round ratios to spin off
  // (docs/PLACEMENT.md, figure 5): each round holds enough rounds of every
  // case for 9 in all, because which CPUs the scheduler gives a pair differs
  // from one 500 ms round to the next and 5 rounds leave the median at the
  // mercy of that draw (docs/BENCHMARKING.md#alternation).
  for (const int index : plan.paired_rounds(round)) {
    for (int pairs = 1; pairs <= plan.max_pairs; ++pairs) {
      for (const Variant v : variants_in_round(index)) {
        const std::string name = BenchName("BM_Oversubscribed")
                                     .add("pairs", static_cast<std::size_t>(pairs))
                                     .add("bytes", kSmallBytes)
                                     .add("ms", static_cast<std::size_t>(plan.pairs_duration.count()))
                                     .add("variant", variant_name(v))
                                     .add("round", static_cast<std::size_t>(index))
                                     .str();
        register_run(name, 1, [&plan, name, pairs, v](benchmark::State& state) {
          run_pairs(state, plan, name, pairs, v, 0);
        });
      }
    }
    // One pair while two busy loops take both CPUs (unrelated work on a
    // loaded machine): spinning must not lose to spin-off there either.
    for (const Variant v : variants_in_round(index)) {
      const std::string name = BenchName("BM_OversubscribedBusy")
                                   .add("pairs", std::size_t{1})
                                   .add("busy_loops", std::size_t{2})
                                   .add("bytes", kSmallBytes)
                                   .add("ms", static_cast<std::size_t>(plan.pairs_duration.count()))
                                   .add("variant", variant_name(v))
                                   .add("round", static_cast<std::size_t>(index))
                                   .str();
      register_run(name, 1, [&plan, name, v](benchmark::State& state) { run_pairs(state, plan, name, 1, v, 2); });
    }
  }
}

}  // namespace spinrpc::bench
