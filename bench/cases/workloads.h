#pragma once

#include <array>    // std::array
#include <cstddef>  // std::size_t

#include "bench/harness/bench_plan.h"

namespace spinrpc::bench {

/// The echo sizes of the echo workload and of the floors, in bytes
/// (docs/BENCHMARKING.md#the-workloads): 8 B, 1 KiB, 64 KiB, 1 MiB.
inline constexpr std::array<std::size_t, 4> kEchoSizes{8, 1024, std::size_t{64} << 10, std::size_t{1} << 20};

/// The small echo of every mixed workload, in bytes.
inline constexpr std::size_t kSmallBytes = 8;

// Each function registers round `round` (0-based) of one workload, every
// variant once, in the order variants_in_round(round) gives. harness/bench_main.cpp
// calls them round by round, so the rounds of all workloads interleave.

/// bench/cases/floor_bench.cpp: BM_PipeFloor (raw pipe ping-pong, blocking and polled)
/// and BM_ShmFloor (shared-memory ping-pong) at every echo size.
void register_floor_benchmarks(const BenchPlan& plan, int round);
/// bench/cases/echo_bench.cpp: BM_Echo, back-to-back echoes at every size.
void register_echo_benchmarks(const BenchPlan& plan, int round);
/// bench/cases/echo_bench.cpp: BM_EchoTsgo, the same against tsgo (if installed).
void register_tsgo_echo_benchmarks(const BenchPlan& plan, int round);
/// BM_BlockingClient: the shim with spin 0 against spinrpc-server at its
/// defaults and against tsgo (needs plan.tsgo_path).
void register_blocking_client_benchmarks(const BenchPlan& plan, int round);
/// bench/cases/transport_bench.cpp: BM_Transport, 8-byte echoes over stdio, a Unix
/// socket (--pipe) and two FIFOs, with the server's extra threads' wake-ups.
void register_transport_benchmarks(const BenchPlan& plan, int round);
/// bench/cases/interleave_bench.cpp: BM_Interleave, 30 small echoes + 1 large request.
void register_interleave_benchmarks(const BenchPlan& plan, int round);
/// bench/cases/sparse_bench.cpp: BM_Sparse, one request every 10 ms.
void register_sparse_benchmarks(const BenchPlan& plan, int round);
/// bench/cases/slow_server_bench.cpp: BM_SlowServer, benchWork busyUs 5000.
void register_slow_server_benchmarks(const BenchPlan& plan, int round);
/// bench/cases/worst_case_bench.cpp: BM_WorstCase, 50 fast then 1 slow, repeated.
void register_worst_case_benchmarks(const BenchPlan& plan, int round);
/// bench/cases/oversubscribed_bench.cpp: BM_Oversubscribed, N pairs at once.
void register_oversubscribed_benchmarks(const BenchPlan& plan, int round);
/// BM_DeadPeer (bench/cases/dead_peer_bench.cpp): a dead peer to a typed error, per transport.
void register_dead_peer_benchmarks(const BenchPlan& plan, int round);

}  // namespace spinrpc::bench
