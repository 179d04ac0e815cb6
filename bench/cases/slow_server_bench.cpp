// BM_SlowServer: every request keeps the server busy for 5 ms (benchWork
// busyUs 5000, 8-byte reply) (docs/BENCHMARKING.md#the-workloads). The client's waits
// are all long, so a client that spins its full budget on each burns CPU for
// nothing: the client's CPU over the loop (client_cpu_s) is the result.
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t
#include <string>   // std::string

#include "bench/peers/bench_work.h"
#include "bench/harness/measurement.h"
#include "bench/peers/peers.h"
#include "bench/harness/registration.h"
#include "bench/harness/timed_loop.h"
#include "bench/cases/workloads.h"

namespace spinrpc::bench {

namespace {

constexpr std::uint64_t kBusyUs = 5000;
constexpr std::uint64_t kReplyBytes = 8;

void run_slow_server(benchmark::State& state, const BenchPlan& plan, const std::string& name, Variant v) {
  SyncRpcChannel channel = start_spinrpc_server(plan, v, name);
  const std::string request = bench_work_request(kBusyUs, kReplyBytes);
  const std::string expected = bench_work_reply(kReplyBytes);

  const SpinBaseline spin0(channel);
  Measurement m(name, channel.pid(), true, static_cast<std::size_t>(state.max_iterations));
  std::size_t i = 0;
  m.start();
  for (auto _ : state) {
    const RoundTrip rt = timed_request(channel, "benchWork", as_bytes(request), as_bytes(expected), name, i);
    record_iteration(state, m, rt.latency());
    ++i;
  }
  stop_timed_loop(m, channel, spin0);
  publish_and_close(m, state, plan, channel);
}

}  // namespace

void register_slow_server_benchmarks(const BenchPlan& plan, int round) {
  for (const Variant v : variants_in_round(round)) {
    const std::string name = BenchName("BM_SlowServer")
                                 .add("busy_us", kBusyUs)
                                 .add("reply_bytes", kReplyBytes)
                                 .add("count", plan.slow_requests)
                                 .add("variant", variant_name(v))
                                 .add("round", static_cast<std::size_t>(round))
                                 .str();
    register_run(name, plan.slow_requests,
                 [&plan, name, v](benchmark::State& state) { run_slow_server(state, plan, name, v); });
  }
}

}  // namespace spinrpc::bench
