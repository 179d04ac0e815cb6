// BM_Echo and BM_EchoTsgo: back-to-back echoes through the client shim, at
// 8 B, 1 KiB, 64 KiB and 1 MiB (BENCH.md, "echo": the round-trip floor and
// bandwidth). BM_Echo runs spinrpc-server with the variant on both ends;
// BM_EchoTsgo runs the real tsgo, which has no spin: only the shim varies
// (the `shim:` key says so).
#include <cstddef>  // std::byte, std::size_t
#include <string>   // std::string
#include <vector>   // std::vector

#include "bench/integrity.h"
#include "bench/measurement.h"
#include "bench/payloads.h"
#include "bench/peers.h"
#include "bench/registration.h"
#include "bench/spin_counters.h"
#include "bench/workloads.h"

namespace spinrpc::bench {

namespace {

enum class Peer { Spinrpc, Tsgo };

void run_echo(benchmark::State& state, const BenchPlan& plan, const std::string& name, Peer peer, Variant v,
              std::size_t bytes) {
  // Fixture, untimed: spawn, warm up, build payloads.
  SyncRpcChannel channel =
      peer == Peer::Spinrpc ? start_spinrpc_server(plan, v, name) : start_tsgo(plan, v, name);
  warm_up(channel, plan.size_warmup(bytes), bytes, name);
  const std::vector<std::vector<std::byte>> payloads = make_payloads(bytes, bytes >= (std::size_t{64} << 10) ? 4 : 16);
  std::vector<std::byte> corrupted = payloads[0];
  if (plan.inject_mismatch) corrupted[0] ^= std::byte{1};

  const SpinCounters server0 = peer == Peer::Spinrpc ? server_spin_counters(channel) : SpinCounters{};
  const SpinCounters client0 = client_spin_counters(channel);
  Measurement m(name, channel.pid(), true, static_cast<std::size_t>(state.max_iterations));
  std::size_t i = 0;
  m.start();
  for (auto _ : state) {
    const std::vector<std::byte>& p = payloads[i % payloads.size()];
    const auto t0 = Measurement::Clock::now();
    const ByteView reply = channel.request_bytes("echo", p);
    const auto t1 = Measurement::Clock::now();
    check_reply(i == 0 && plan.inject_mismatch ? corrupted : p, reply, name, i);
    m.add(t1 - t0);
    state.SetIterationTime(seconds(t1 - t0));
    ++i;
  }
  m.stop();
  m.set_client_spin(client_spin_counters(channel) - client0);
  if (peer == Peer::Spinrpc) m.set_server_spin(server_spin_counters(channel) - server0);
  m.publish(state, plan);
  channel.close();
}

void register_echo(const BenchPlan& plan, int round, Peer peer) {
  for (const std::size_t bytes : kEchoSizes) {
    for (const Variant v : variants_in_round(round)) {
      const std::size_t count = plan.echo_count(bytes);
      const std::string name = BenchName(peer == Peer::Spinrpc ? "BM_Echo" : "BM_EchoTsgo")
                                   .add("bytes", bytes)
                                   .add("count", count)
                                   .add(peer == Peer::Spinrpc ? "variant" : "shim", variant_name(v))
                                   .add("round", static_cast<std::size_t>(round))
                                   .str();
      register_run(name, count, [&plan, name, peer, v, bytes](benchmark::State& state) {
        run_echo(state, plan, name, peer, v, bytes);
      });
    }
  }
}

}  // namespace

void register_echo_benchmarks(const BenchPlan& plan, int round) { register_echo(plan, round, Peer::Spinrpc); }

void register_tsgo_echo_benchmarks(const BenchPlan& plan, int round) {
  if (plan.tsgo_path) register_echo(plan, round, Peer::Tsgo);
}

}  // namespace spinrpc::bench
