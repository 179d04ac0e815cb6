// BM_BlockingClient: a client that blocks in read(2) (the client shim with
// spin budget 0, so no placement on its side either) against spinrpc-server
// at its defaults and against the real tsgo, alternating within each round
// (docs/PLACEMENT.md, figures 2 and 8): the case that placement exists for.
// The server's spin settings come from the environment, as a new user's
// would; the benchmark checks the server runs the default budget unless
// TSGO_SYNC_SPIN_US says otherwise, and reports the server's placement
// decision through its counters.
#include <algorithm>  // std::max
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

enum class Server { spinrpc, tsgo };

SyncRpcOptions blocking_client_options() {
  SyncRpcOptions options;
  options.spin.spin_us = 0;
  options.spin.placement = PlacementController::Setting::off;
  return options;
}

void run_blocking_client(benchmark::State& state, const BenchPlan& plan, const std::string& name, Server server) {
  SyncRpcChannel channel = server == Server::spinrpc
                               ? SyncRpcChannel(plan.server_path, {"--api"}, blocking_client_options())
                               : SyncRpcChannel(*plan.tsgo_path, {"--api"}, blocking_client_options());
  warm_up(channel, plan.warmup_echoes, 8, name);
  const std::vector<std::vector<std::byte>> payloads = make_payloads(8, 16);
  const SpinBaseline spin0(channel, server == Server::spinrpc);
  Measurement m(name, channel.pid(), true, static_cast<std::size_t>(state.max_iterations));
  timed_echoes(state, m, channel, payloads, name);
  stop_timed_loop(m, channel, spin0);
  publish_and_close(m, state, plan, channel);
}

}  // namespace

void register_blocking_client_benchmarks(const BenchPlan& plan, int round) {
  if (!plan.tsgo_path) return;
  // Each of the plan's rounds holds enough rounds of this pair for the
  // paired figures (docs/PLACEMENT.md, figures 2 and 8), the echoes split
  // among them.
  const std::size_t count = plan.paired_count(plan.echo_count(8));
  for (const int index : plan.paired_rounds(round)) {
    // Alternate which server goes first from round to round.
    const Server order[2] = {index % 2 == 0 ? Server::spinrpc : Server::tsgo,
                             index % 2 == 0 ? Server::tsgo : Server::spinrpc};
    for (const Server server : order) {
      const std::string name = BenchName("BM_BlockingClient")
                                   .add("server", server == Server::spinrpc ? "spinrpc" : "tsgo")
                                   .add("count", count)
                                   .add("round", static_cast<std::size_t>(index))
                                   .str();
      register_run(name, count, [&plan, name, server](benchmark::State& state) {
        run_blocking_client(state, plan, name, server);
      });
    }
  }
}

}  // namespace spinrpc::bench
