// BM_WorstCase: 50 fast requests (8-byte echoes), then one slow one
// (benchWork busyUs 5000), repeated (docs/BENCHMARKING.md#the-workloads; the proposal
// used 40 cycles: fixed budget 0.03 -> 0.46 s server CPU, adaptive 0.04 s).
// The CPU of both sides over the loop is the result. Latencies are the fast
// echoes'; the slow requests' mean is slow_mean_us. The benchmark's time is
// the whole cycle.
#include <cstddef>  // std::byte, std::size_t
#include <cstdint>  // std::uint64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include "bench/peers/bench_work.h"
#include "bench/harness/measurement.h"
#include "bench/harness/payloads.h"
#include "bench/peers/peers.h"
#include "bench/harness/registration.h"
#include "bench/harness/timed_loop.h"
#include "bench/cases/workloads.h"

namespace spinrpc::bench {

namespace {

constexpr std::size_t kFastPerCycle = 50;
constexpr std::uint64_t kSlowBusyUs = 5000;

void run_worst_case(benchmark::State& state, const BenchPlan& plan, const std::string& name, Variant v) {
  SyncRpcChannel channel = start_spinrpc_server(plan, v, name);
  const std::vector<std::vector<std::byte>> payloads = make_payloads(kSmallBytes, 16);
  const std::string slow = bench_work_request(kSlowBusyUs, 0);

  const SpinBaseline spin0(channel);
  Measurement m(name, channel.pid(), true, static_cast<std::size_t>(state.max_iterations) * kFastPerCycle);
  double slow_total_s = 0;
  std::size_t request = 0;
  m.start();
  for (auto _ : state) {
    const auto cycle_start = Measurement::Clock::now();
    for (std::size_t k = 0; k < kFastPerCycle; ++k, ++request) {
      const std::vector<std::byte>& p = payloads[request % payloads.size()];
      m.add(timed_request(channel, "echo", p, p, name, request).latency());
    }
    const RoundTrip slow_rt = timed_request(channel, "benchWork", as_bytes(slow), ByteView(), name, request++);
    slow_total_s += seconds(slow_rt.latency());
    state.SetIterationTime(seconds(slow_rt.replied - cycle_start));
  }
  stop_timed_loop(m, channel, spin0);
  m.set_counter("slow_mean_us", slow_total_s * 1e6 / static_cast<double>(state.iterations()));
  publish_and_close(m, state, plan, channel);
}

}  // namespace

void register_worst_case_benchmarks(const BenchPlan& plan, int round) {
  for (const Variant v : variants_in_round(round)) {
    const std::string name = BenchName("BM_WorstCase")
                                 .add("fast", kFastPerCycle)
                                 .add("fast_bytes", kSmallBytes)
                                 .add("slow_busy_us", kSlowBusyUs)
                                 .add("cycles", plan.worst_cycles)
                                 .add("variant", variant_name(v))
                                 .add("round", static_cast<std::size_t>(round))
                                 .str();
    register_run(name, plan.worst_cycles,
                 [&plan, name, v](benchmark::State& state) { run_worst_case(state, plan, name, v); });
  }
}

}  // namespace spinrpc::bench
