#pragma once

#include <chrono>    // std::chrono::milliseconds
#include <cstddef>   // std::size_t
#include <optional>  // std::optional
#include <string>    // std::string
#include <vector>    // std::vector

namespace spinrpc::bench {

/// What one spinrpc-bench run measures and how much of it: the peers, the
/// number of rounds, and every count that is not a fixed part of a workload's
/// definition. Each count also appears in the benchmark names
/// (docs/BENCHMARKING.md#named-workloads). A full run (the default) is sized so
/// that scripts/bench.sh takes well under 10 minutes on a 2-vCPU VM; --smoke
/// takes a few seconds and exists so that CI keeps the suite from rotting, not
/// to measure.
struct BenchPlan {
  bool smoke = false;
  /// Rounds; each round runs every workload under every variant once, in an
  /// order rotated from round to round (docs/BENCHMARKING.md#alternation).
  int rounds = 5;
  /// The server measured: $SPINRPC_BENCH_SERVER, else spinrpc-bench-server
  /// next to this executable (spinrpc-server's code plus benchWork:
  /// bench/peers/bench_server_main.cpp).
  std::string server_path;
  /// The real server ("tsgo" in the report): $SPINRPC_TSGO, else
  /// typescript@7.0.2's lib/tsc from the interop suite's npm install; unset if
  /// not executable there (the tsgo benchmarks are then not registered).
  std::optional<std::string> tsgo_path;
  /// Directory for each benchmark's raw latencies (one file per benchmark,
  /// ns, one per line; bench/report.mjs pools them across rounds and draws
  /// the CDF). Empty: not written.
  std::string latency_dir;
  /// Test hook for the integrity check: corrupt the expected bytes of the
  /// first echo so the run must exit with kIntegrityExitStatus.
  bool inject_mismatch = false;

  /// Untimed 8-byte echoes per spawned server, before anything is timed.
  std::size_t warmup_echoes = 1000;
  /// Timed echoes per (size, variant, round); larger messages get fewer.
  std::size_t echo_count(std::size_t bytes) const noexcept;
  /// Timed round trips per pipe floor; echo_count(bytes) except for polled
  /// floors with messages over a pipe's capacity (see bench_plan.cpp). The
  /// shared-memory floor, with no pipe to fill, asks with polled false.
  std::size_t floor_count(std::size_t bytes, bool polled) const noexcept;
  /// Untimed echoes of `bytes` bytes before timing at that size (after the
  /// 8-byte warm-up of a fresh server): enough for buffers to reach their size.
  std::size_t size_warmup(std::size_t bytes) const noexcept;
  /// transport: timed 8-byte echoes per (transport, variant, round).
  std::size_t transport_echoes = 20000;
  /// interleave: cycles of 30 small echoes + 1 large request.
  std::size_t interleave_cycles = 1000;
  /// sparse: requests, one every 10 ms.
  std::size_t sparse_requests = 200;
  /// slow server: benchWork busyUs 5000 requests.
  std::size_t slow_requests = 200;
  /// worst case: cycles of 50 fast requests + 1 slow one (40 in the proposal).
  std::size_t worst_cycles = 40;
  /// oversubscribed: how long every pair echoes, all at once.
  std::chrono::milliseconds pairs_duration{500};
  /// oversubscribed: pairs 1..max_pairs.
  int max_pairs = 4;

  /// Rounds, at least, of a workload whose figure is a median of per-round
  /// paired ratios (against tsgo, or against spin off): the placement
  /// figures are asked of 9 rounds or more (docs/BENCHMARKING.md#alternation).
  static constexpr int kMinPairedRounds = 9;
  /// How many rounds of such a workload each of the plan's rounds holds, so
  /// that the run has kMinPairedRounds of it in all (1 when `rounds` is
  /// already enough).
  int paired_rounds_per_round() const noexcept { return (kMinPairedRounds + rounds - 1) / rounds; }
  /// The round numbers such a workload registers in the plan's round
  /// `round`: round * n .. round * n + n - 1, n = paired_rounds_per_round().
  std::vector<int> paired_rounds(int round) const;
  /// `count` (a per-round count) split among those rounds; at least 10.
  std::size_t paired_count(std::size_t count) const noexcept;
};

/// Reads spinrpc-bench's own flags and removes them from argv (Google
/// Benchmark's --benchmark_* flags are left for benchmark::Initialize):
///   --smoke             tiny counts, 1 round
///   --rounds=N          rounds (N >= 1)
///   --latency_dir=DIR   write raw latencies there
///   --inject_mismatch   corrupt one expected echo (tests the exit path)
/// Resolves the peers' paths. Throws std::invalid_argument for a malformed value.
BenchPlan parse_plan(int& argc, char** argv);

}  // namespace spinrpc::bench
