// BM_Interleave: 30 small echoes, then one large request, repeated; only the
// small echoes are reported (docs/BENCHMARKING.md#the-workloads: how a long server turn
// makes the next small requests slower, +70% on a C6 host without
// spinning). The large request is either a 1 MiB echo (`large:echo1MiB`) or
// benchWork busyUs 200 with an empty reply (`large:busy200us`). Its own
// latency is reported as large_mean_us, and the first small echo after each
// large request, the one a long server turn hits hardest, as
// first_p50_us / first_p75_us.
#include <chrono>   // std::chrono::nanoseconds
#include <cstddef>  // std::byte, std::size_t
#include <cstdint>  // std::int64_t, std::uint64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include "bench/peers/bench_work.h"
#include "bench/harness/latency_stats.h"
#include "bench/harness/measurement.h"
#include "bench/harness/payloads.h"
#include "bench/peers/peers.h"
#include "bench/harness/registration.h"
#include "bench/harness/timed_loop.h"
#include "bench/cases/workloads.h"

namespace spinrpc::bench {

namespace {

constexpr std::size_t kSmallPerCycle = 30;
constexpr std::size_t kLargeEchoBytes = std::size_t{1} << 20;
constexpr std::uint64_t kLargeBusyUs = 200;

enum class Large { echo_1mib, busy_200us };

void run_interleave(benchmark::State& state, const BenchPlan& plan, const std::string& name, Large large,
                    Variant v) {
  SyncRpcChannel channel = start_spinrpc_server(plan, v, name);
  const std::vector<std::vector<std::byte>> small = make_payloads(kSmallBytes, 16);
  std::vector<std::byte> large_payload;
  std::string large_expected;
  const char* large_method = "echo";
  if (large == Large::echo_1mib) {
    large_payload = make_payloads(kLargeEchoBytes, 1)[0];
    warm_up(channel, plan.size_warmup(kLargeEchoBytes), kLargeEchoBytes, name);
  } else {
    large_method = "benchWork";
    const std::string request = bench_work_request(kLargeBusyUs, 0);
    const ByteView bytes = as_bytes(request);
    large_payload.assign(bytes.begin(), bytes.end());
    large_expected = bench_work_reply(0);
  }
  const ByteView large_reply_expected = large == Large::echo_1mib ? ByteView(large_payload) : as_bytes(large_expected);

  const SpinBaseline spin0(channel);
  Measurement m(name, channel.pid(), true, static_cast<std::size_t>(state.max_iterations) * kSmallPerCycle);
  double large_total_s = 0;
  std::vector<std::int64_t> first_after_large_ns;
  first_after_large_ns.reserve(static_cast<std::size_t>(state.max_iterations));
  std::size_t request = 0;
  m.start();
  for (auto _ : state) {
    Measurement::Clock::duration cycle{};
    for (std::size_t k = 0; k < kSmallPerCycle; ++k, ++request) {
      const std::vector<std::byte>& p = small[request % small.size()];
      const Measurement::Clock::duration latency = timed_request(channel, "echo", p, p, name, request).latency();
      m.add(latency);
      cycle += latency;
      // The first cycle has no large request before it.
      if (k == 0 && request > 0) {
        first_after_large_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(latency).count());
      }
    }
    const RoundTrip large_rt =
        timed_request(channel, large_method, large_payload, large_reply_expected, name, request++);
    large_total_s += seconds(large_rt.latency());
    // Only the small echoes count as the benchmark's time.
    state.SetIterationTime(seconds(cycle));
  }
  stop_timed_loop(m, channel, spin0);
  m.set_counter("large_mean_us", large_total_s * 1e6 / static_cast<double>(state.iterations()));
  const LatencySummary first = summarize(std::move(first_after_large_ns));
  m.set_counter("first_p50_us", static_cast<double>(first.p50_ns) / 1e3);
  m.set_counter("first_p75_us", static_cast<double>(first.p75_ns) / 1e3);
  publish_and_close(m, state, plan, channel);
}

}  // namespace

void register_interleave_benchmarks(const BenchPlan& plan, int round) {
  for (const Large large : {Large::echo_1mib, Large::busy_200us}) {
    for (const Variant v : variants_in_round(round)) {
      const std::string name = BenchName("BM_Interleave")
                                   .add("small_bytes", kSmallBytes)
                                   .add("smalls", kSmallPerCycle)
                                   .add("large", large == Large::echo_1mib ? "echo1MiB" : "busy200us")
                                   .add("cycles", plan.interleave_cycles)
                                   .add("variant", variant_name(v))
                                   .add("round", static_cast<std::size_t>(round))
                                   .str();
      register_run(name, plan.interleave_cycles, [&plan, name, large, v](benchmark::State& state) {
        run_interleave(state, plan, name, large, v);
      });
    }
  }
}

}  // namespace spinrpc::bench
