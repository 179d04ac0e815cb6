// BM_Echo and BM_EchoTsgo: back-to-back echoes through the client shim, at 8 B,
// 1 KiB, 64 KiB and 1 MiB (docs/BENCHMARKING.md#the-workloads, BM_Echo: the
// round-trip floor and bandwidth). BM_Echo runs spinrpc-server with the variant
// on both ends; BM_EchoTsgo runs the real tsgo, which has no spin: only the
// shim varies (the `shim:` key says so).
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

enum class Peer { spinrpc, tsgo };

void run_echo(benchmark::State& state, const BenchPlan& plan, const std::string& name, Peer peer, Variant v,
              std::size_t bytes) {
  // Fixture, untimed: spawn, warm up, build payloads.
  SyncRpcChannel channel =
      peer == Peer::spinrpc ? start_spinrpc_server(plan, v, name) : start_tsgo(plan, v, name);
  warm_up(channel, plan.size_warmup(bytes), bytes, name);
  const std::vector<std::vector<std::byte>> payloads = make_payloads(bytes, bytes >= (std::size_t{64} << 10) ? 4 : 16);
  std::vector<std::byte> corrupted = payloads[0];
  if (plan.inject_mismatch) corrupted[0] ^= std::byte{1};

  const SpinBaseline spin0(channel, peer == Peer::spinrpc);
  Measurement m(name, channel.pid(), true, static_cast<std::size_t>(state.max_iterations));
  std::size_t i = 0;
  m.start();
  for (auto _ : state) {
    const std::vector<std::byte>& p = payloads[i % payloads.size()];
    const ByteView expected = i == 0 && plan.inject_mismatch ? corrupted : p;
    record_iteration(state, m, timed_request(channel, "echo", p, expected, name, i).latency());
    ++i;
  }
  stop_timed_loop(m, channel, spin0);
  publish_and_close(m, state, plan, channel);
}

void register_echo(const BenchPlan& plan, int round, Peer peer) {
  // Against tsgo the figures are medians of per-round paired ratios (shim
  // at defaults against the shim blocking: docs/PLACEMENT.md, figure 4), so
  // each round holds enough rounds of it for 9 in all, the echoes split
  // among them. Against spinrpc-server the figures are ratios to the
  // floors, which run once a round.
  const bool paired = peer == Peer::tsgo;
  for (const int index : paired ? plan.paired_rounds(round) : std::vector<int>{round}) {
    for (const std::size_t bytes : kEchoSizes) {
      for (const Variant v : variants_in_round(index)) {
        const std::size_t count = paired ? plan.paired_count(plan.echo_count(bytes)) : plan.echo_count(bytes);
        const std::string name = BenchName(peer == Peer::spinrpc ? "BM_Echo" : "BM_EchoTsgo")
                                     .add("bytes", bytes)
                                     .add("count", count)
                                     .add(peer == Peer::spinrpc ? "variant" : "shim", variant_name(v))
                                     .add("round", static_cast<std::size_t>(index))
                                     .str();
        register_run(name, count, [&plan, name, peer, v, bytes](benchmark::State& state) {
          run_echo(state, plan, name, peer, v, bytes);
        });
      }
    }
  }
}

}  // namespace

void register_echo_benchmarks(const BenchPlan& plan, int round) { register_echo(plan, round, Peer::spinrpc); }

void register_tsgo_echo_benchmarks(const BenchPlan& plan, int round) {
  if (plan.tsgo_path) register_echo(plan, round, Peer::tsgo);
}

}  // namespace spinrpc::bench
