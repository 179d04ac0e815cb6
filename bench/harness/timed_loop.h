#pragma once
// The pieces of a benchmark's timed loop over a SyncRpcChannel that the
// workloads share: one timed request with its reply checked, recording it as
// the iteration, and both ends' spin counters around the loop.

#include <cstddef>      // std::size_t
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <benchmark/benchmark.h>

#include "bench/harness/bench_plan.h"
#include "bench/harness/measurement.h"
#include "bench/harness/spin_counters.h"
#include "client-shim/sync_rpc_channel.h"
#include "protocol/frame.h"

namespace spinrpc::bench {

/// When one request went out and when its reply had come back.
struct RoundTrip {
  Measurement::Clock::time_point sent;
  Measurement::Clock::time_point replied;
  Measurement::Clock::duration latency() const noexcept { return replied - sent; }
};

/// Sends `payload` as `method` on `channel`, timing request_bytes alone,
/// then checks the reply against `expected` (check_reply, untimed, naming
/// `benchmark` and the `request` index; a mismatch ends the process).
RoundTrip timed_request(SyncRpcChannel& channel, std::string_view method, ByteView payload, ByteView expected,
                        std::string_view benchmark, std::size_t request);

/// Records `latency` as one request's latency in `m` and as the manual
/// time of the current iteration of `state`.
void record_iteration(benchmark::State& state, Measurement& m, Measurement::Clock::duration latency);

/// The timed loop of an echo workload: m.start(), then one timed echo per
/// iteration of `state`, cycling through `payloads`, each recorded with
/// record_iteration. The caller stops `m`.
void timed_echoes(benchmark::State& state, Measurement& m, SyncRpcChannel& channel,
                  const std::vector<std::vector<std::byte>>& payloads, std::string_view benchmark);

/// Both ends' spin counters at the start of a timed loop, so that the
/// loop's own counts can be reported after it.
class SpinBaseline {
 public:
  /// Reads the server's counters first (one round trip, so it stays out of
  /// the client's counts), if `with_server` (false: a peer without
  /// getChannelStats, such as tsgo), then the client's.
  explicit SpinBaseline(SyncRpcChannel& channel, bool with_server = true);

  /// The client's counters since the baseline.
  SpinCounters client_since(const SyncRpcChannel& channel) const;
  /// The server's counters since the baseline (one round trip).
  SpinCounters server_since(SyncRpcChannel& channel) const;

  /// Sets the client's, then (if read) the server's counters since the
  /// baseline on `m`.
  void set_deltas(Measurement& m, SyncRpcChannel& channel) const;

 private:
  SpinCounters server0_;
  SpinCounters client0_;
  bool with_server_;
};

/// Ends a timed loop: m.stop(), then the spin counters since `base` on `m`.
void stop_timed_loop(Measurement& m, SyncRpcChannel& channel, const SpinBaseline& base);

/// Publishes `m`'s counters on `state`, then closes `channel` (its server
/// sees EOF and exits; the exit status is not checked).
void publish_and_close(const Measurement& m, benchmark::State& state, const BenchPlan& plan,
                       SyncRpcChannel& channel);

}  // namespace spinrpc::bench
