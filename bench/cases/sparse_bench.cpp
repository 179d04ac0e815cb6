// BM_Sparse: one 8-byte echo every 10 ms (docs/BENCHMARKING.md#the-workloads). Nothing
// arrives for most of each gap, so a server that spins its full budget on
// every wait burns CPU for nothing: the server's CPU over the loop
// (server_cpu_s, gaps included) is the result; the proposal's point is that
// a fixed budget wastes it and the adaptive rule should not. The benchmark's
// time is the echoes' latency only; wall_s includes the gaps.
#include <time.h>  // ::clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME

#include <cerrno>   // EINTR
#include <chrono>   // std::chrono::milliseconds
#include <cstddef>  // std::byte, std::size_t
#include <string>   // std::string
#include <vector>   // std::vector

#include "bench/harness/measurement.h"
#include "bench/harness/payloads.h"
#include "bench/peers/peers.h"
#include "bench/harness/registration.h"
#include "bench/harness/timed_loop.h"
#include "bench/cases/workloads.h"

namespace spinrpc::bench {

namespace {

constexpr std::chrono::milliseconds kGap{10};

// Sleeps until `deadline` on CLOCK_MONOTONIC (steady_clock's clock on Linux),
// an absolute deadline so that the gaps do not drift by the echoes' time.
void sleep_until(const timespec& deadline) {
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
  }
}

timespec add_ms(timespec t, long long ms) {
  t.tv_sec += static_cast<time_t>(ms / 1000);
  t.tv_nsec += static_cast<long>((ms % 1000) * 1'000'000);
  if (t.tv_nsec >= 1'000'000'000) {
    t.tv_nsec -= 1'000'000'000;
    ++t.tv_sec;
  }
  return t;
}

void run_sparse(benchmark::State& state, const BenchPlan& plan, const std::string& name, Variant v) {
  SyncRpcChannel channel = start_spinrpc_server(plan, v, name);
  const std::vector<std::vector<std::byte>> payloads = make_payloads(kSmallBytes, 16);

  const SpinBaseline spin0(channel);
  Measurement m(name, channel.pid(), true, static_cast<std::size_t>(state.max_iterations));
  timespec next{};
  ::clock_gettime(CLOCK_MONOTONIC, &next);
  std::size_t i = 0;
  m.start();
  for (auto _ : state) {
    next = add_ms(next, kGap.count());
    sleep_until(next);
    const std::vector<std::byte>& p = payloads[i % payloads.size()];
    record_iteration(state, m, timed_request(channel, "echo", p, p, name, i).latency());
    ++i;
  }
  // One more gap, so the server's wait after the last echo is inside the
  // measured CPU too: every request is followed by exactly one idle gap.
  next = add_ms(next, kGap.count());
  sleep_until(next);
  stop_timed_loop(m, channel, spin0);
  publish_and_close(m, state, plan, channel);
}

}  // namespace

void register_sparse_benchmarks(const BenchPlan& plan, int round) {
  for (const Variant v : variants_in_round(round)) {
    const std::string name = BenchName("BM_Sparse")
                                 .add("gap_ms", static_cast<std::size_t>(kGap.count()))
                                 .add("bytes", kSmallBytes)
                                 .add("count", plan.sparse_requests)
                                 .add("variant", variant_name(v))
                                 .add("round", static_cast<std::size_t>(round))
                                 .str();
    register_run(name, plan.sparse_requests,
                 [&plan, name, v](benchmark::State& state) { run_sparse(state, plan, name, v); });
  }
}

}  // namespace spinrpc::bench
