#pragma once

#include <chrono>    // std::chrono::steady_clock, nanoseconds
#include <cstddef>   // std::size_t
#include <cstdint>   // std::int64_t
#include <optional>  // std::optional
#include <string>    // std::string
#include <vector>    // std::vector

#include <benchmark/benchmark.h>

#include "bench/harness/bench_plan.h"
#include "bench/harness/spin_counters.h"

namespace spinrpc::bench {

/// What one benchmark measured over its timed loop: every request's latency
/// (ns, kept individually), the wall time, and the CPU time of the client and
/// of the server (docs/BENCHMARKING.md#distributions, #cpu-is-a-result).
/// start() and stop() bracket the timed loop only; spawning, warm-up and
/// payload building stay outside (docs/BENCHMARKING.md#the-timed-region).
///
/// publish() turns it into Google Benchmark counters, all plain values:
///   samples, mean_us, p50_us, p75_us, p99_us, max_us  (the latencies)
///   wall_s, client_cpu_s, server_cpu_s                (the timed loop; -1: unknown)
///   cli_/srv_ + every counter of kChannelCounters, under its own name
///            (wait/channel_stats.h; when set). spin_time_us is wall
///            time, so a spinner that yielded its CPU away still counts.
/// and writes the raw latencies to plan.latency_dir.
class Measurement {
 public:
  using Clock = std::chrono::steady_clock;

  /// `name`: the benchmark's full name (also names the latency file).
  /// `server_pid`: the process whose CPU counts as the server's (-1: none;
  /// see add_cpu). `count_self`: whether this process's CPU counts as the
  /// client's. Reserves room for `expected_samples` latencies.
  Measurement(std::string name, int server_pid, bool count_self, std::size_t expected_samples);

  /// Reads the clocks at the start of the timed loop.
  void start() noexcept;
  /// Reads them at its end; the CPU and wall deltas are added to the totals.
  void stop() noexcept;

  /// Records one request's latency.
  void add(std::chrono::nanoseconds latency) { samples_ns_.push_back(latency.count()); }
  /// Records latencies measured elsewhere (a forked client), in ns.
  void add_samples(const std::vector<std::int64_t>& samples_ns);
  /// Adds CPU time measured elsewhere, in ns.
  void add_cpu(std::int64_t client_ns, std::int64_t server_ns) noexcept;

  /// Spin counters over the timed loop, per side (reported when set).
  void set_client_spin(const SpinCounters& delta) { client_spin_ = delta; }
  void set_server_spin(const SpinCounters& delta) { server_spin_ = delta; }
  /// An extra plain counter, e.g. the slow requests' mean latency.
  void set_counter(const std::string& key, double value) { extra_.emplace_back(key, value); }

  const std::vector<std::int64_t>& samples_ns() const noexcept { return samples_ns_; }

  /// Sets the counters on `state` and writes the latencies (int64 ns,
  /// native byte order, back to back) to
  /// plan.latency_dir/<latency_file_name(name)> if a directory is set.
  /// Throws std::system_error if the file cannot be written.
  void publish(benchmark::State& state, const BenchPlan& plan) const;

 private:
  std::string name_;
  int server_pid_;                      // -1: no server CPU read here
  bool count_self_;                     // this process is the client
  std::vector<std::int64_t> samples_ns_;
  Clock::time_point wall_start_{};
  std::int64_t self_start_ns_ = 0;
  std::int64_t server_start_ns_ = 0;
  std::int64_t wall_ns_ = 0;            // totals over start/stop pairs
  std::int64_t client_cpu_ns_ = 0;
  std::int64_t server_cpu_ns_ = 0;
  bool server_cpu_known_ = true;        // false: a schedstat reading failed (counter -1)
  std::optional<SpinCounters> client_spin_;
  std::optional<SpinCounters> server_spin_;
  std::vector<std::pair<std::string, double>> extra_;
};

/// The file a benchmark's latencies go to: `name` with every character but
/// [A-Za-z0-9_.-] replaced by '_', plus ".i64" (bench/report.mjs applies
/// the same rule).
std::string latency_file_name(const std::string& name);

}  // namespace spinrpc::bench
