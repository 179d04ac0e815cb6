// spinrpc-bench: the benchmark suite (docs/BENCHMARKING.md). Registers every
// workload round by round (for round r: for workload w: for variant v), so
// that the variants and the floors of one workload run side by side and
// drift over the run falls on all of them. scripts/bench.sh runs it and
// bench/report.mjs turns its JSON into bench/REPORT.md.
//
//   spinrpc-bench [--smoke] [--rounds=N] [--latency_dir=DIR] [--benchmark_*...]
//
// Exit status: 0, 1 for a broken fixture or OS failure, 2 for a bad command
// line, 3 (kIntegrityExitStatus) when any reply differed from what was sent.
#include <csignal>     // std::signal, SIGPIPE
#include <cstdio>      // std::fprintf
#include <filesystem>  // std::filesystem::create_directories
#include <stdexcept>   // std::invalid_argument

#include <benchmark/benchmark.h>

#include "bench/harness/bench_plan.h"
#include "bench/harness/variant.h"
#include "bench/cases/workloads.h"

namespace {

void add_context(const spinrpc::bench::BenchPlan& plan) {
  using namespace spinrpc::bench;
  benchmark::AddCustomContext("spinrpc_mode", plan.smoke ? "smoke" : "full");
  benchmark::AddCustomContext("spinrpc_rounds", std::to_string(plan.rounds));
  // The workloads paired against tsgo or spin off run more (BenchPlan::paired_rounds).
  benchmark::AddCustomContext("spinrpc_paired_rounds",
                              std::to_string(plan.rounds * plan.paired_rounds_per_round()));
  benchmark::AddCustomContext("spinrpc_server", plan.server_path);
  benchmark::AddCustomContext("spinrpc_tsgo", plan.tsgo_path.value_or(""));
  for (const Variant v : kAllVariants) {
    benchmark::AddCustomContext(std::string("spinrpc_variant_") + std::string(variant_name(v)),
                                "spin_us=" + std::to_string(variant_spin_us(v)) +
                                    " adaptive=" + (variant_adaptive(v) ? "1" : "0"));
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace spinrpc::bench;
  // The pipe floors write to a child that might die: an error, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  BenchPlan plan;
  try {
    plan = parse_plan(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "spinrpc-bench: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  if (!plan.tsgo_path) {
    std::fprintf(stderr,
                 "spinrpc-bench: tsgo not found ($SPINRPC_TSGO, or npm ci in tests/interop): "
                 "BM_EchoTsgo is not run\n");
  }
  if (!plan.latency_dir.empty()) std::filesystem::create_directories(plan.latency_dir);
  add_context(plan);

  for (int round = 0; round < plan.rounds; ++round) {
    register_floor_benchmarks(plan, round);
    register_echo_benchmarks(plan, round);
    register_tsgo_echo_benchmarks(plan, round);
    register_blocking_client_benchmarks(plan, round);
    register_transport_benchmarks(plan, round);
    register_interleave_benchmarks(plan, round);
    register_sparse_benchmarks(plan, round);
    register_slow_server_benchmarks(plan, round);
    register_worst_case_benchmarks(plan, round);
    register_oversubscribed_benchmarks(plan, round);
    register_dead_peer_benchmarks(plan, round);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
