#pragma once

#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "bench/harness/bench_plan.h"
#include "bench/harness/variant.h"
#include "client-shim/sync_rpc_channel.h"

namespace spinrpc::bench {

/// Spawns plan.server_path (spinrpc-bench-server) with `--api` and `v`'s spin flags
/// behind a client shim running `v` too, checks that both ends report `v`'s
/// budget and adaptive setting (throws std::runtime_error if not: a variant
/// that did not apply would measure the wrong thing), then sends
/// plan.warmup_echoes checked 8-byte echoes. All before any timing.
/// `where` names the benchmark in error messages.
SyncRpcChannel start_spinrpc_server(const BenchPlan& plan, Variant v, std::string_view where);

/// The client shim's options for `v`: SyncRpcOptions::spin = shim_spin(v),
/// everything else at its default.
SyncRpcOptions shim_options(Variant v);

/// The checks and warm-up of start_spinrpc_server for a spinrpc-server that
/// was started some other way (--pipe, --fifo-in/--fifo-out) and reached
/// through `channel`: both ends must report `v`'s budget and adaptive setting
/// (std::runtime_error if not), then plan.warmup_echoes checked 8-byte echoes.
void check_variant_and_warm_up(const BenchPlan& plan, SyncRpcChannel& channel, Variant v, std::string_view where);

/// Spawns `tsgo --api` (plan.tsgo_path, which must be set) behind a client
/// shim running `v`, checks the shim's setting and warms up as above. tsgo
/// does not spin, so only the client's side of the variant applies.
SyncRpcChannel start_tsgo(const BenchPlan& plan, Variant v, std::string_view where);

/// Sends `count` echoes of `bytes` bytes, each checked (check_reply), untimed.
void warm_up(SyncRpcChannel& channel, std::size_t count, std::size_t bytes, std::string_view where);

}  // namespace spinrpc::bench
