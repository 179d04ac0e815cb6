#include "bench/harness/bench_plan.h"

#include <unistd.h>  // ::access, X_OK

#include <algorithm>     // std::max
#include <cstdlib>       // std::getenv
#include <filesystem>    // std::filesystem::read_symlink
#include <stdexcept>     // std::invalid_argument
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code

#include "bench/harness/flag_parser.h"

namespace spinrpc::bench {

namespace {

std::string server_next_to_this_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "spinrpc-bench-server";  // searched in PATH
  return (self.parent_path() / "spinrpc-bench-server").string();
}

std::optional<std::string> find_tsgo() {
  if (const char* env = std::getenv("SPINRPC_TSGO"); env != nullptr && *env != '\0') {
    if (::access(env, X_OK) == 0) return std::string(env);
    return std::nullopt;
  }
  // SPINRPC_SOURCE_DIR: set by bench/CMakeLists.txt. typescript@7.0.2's own
  // server (tests/interop/versions.mjs, id 7.0), as the Node jobs use.
  const std::string path =
      std::string(SPINRPC_SOURCE_DIR) + "/tests/interop/node_modules/@typescript/typescript-linux-x64/lib/tsc";
  if (::access(path.c_str(), X_OK) == 0) return path;
  return std::nullopt;
}

}  // namespace

std::size_t BenchPlan::echo_count(std::size_t bytes) const noexcept {
  // Full: about 0.1-0.3 s of timed spinrpc echoes per benchmark at every
  // size on a 2-vCPU VM, and enough samples for p99 to mean something.
  if (smoke) return bytes >= (std::size_t{1} << 20) ? 5 : 50;
  if (bytes >= (std::size_t{1} << 20)) return 500;
  if (bytes >= (std::size_t{64} << 10)) return 5000;
  return 30000;
}

std::size_t BenchPlan::floor_count(std::size_t bytes, bool polled) const noexcept {
  // A polled floor whose message does not fit the pipe (64 KiB) makes the
  // writer block while the reader spins; when the scheduler puts both on one
  // CPU, each round trip waits for a time slice (~8 ms on our 2-vCPU VMs):
  // a tenth of the count keeps that case from eating the run.
  const std::size_t count = echo_count(bytes);
  if (polled && bytes >= (std::size_t{64} << 10) && !smoke) return count / 10;
  return count;
}

std::size_t BenchPlan::size_warmup(std::size_t bytes) const noexcept {
  if (bytes >= (std::size_t{1} << 20)) return smoke ? 1 : 10;
  if (bytes >= (std::size_t{64} << 10)) return smoke ? 2 : 100;
  return warmup_echoes;
}

BenchPlan parse_plan(int& argc, char** argv) {
  BenchPlan plan;
  std::optional<int> rounds;
  FlagParser cli;
  cli.flag("--smoke", [&] { plan.smoke = true; });
  cli.option("--rounds", [&](std::string_view v) { rounds = static_cast<int>(whole_number("--rounds", v, 1, 1000)); });
  cli.option("--latency_dir", [&](std::string_view v) { plan.latency_dir = std::string(v); });
  cli.flag("--inject_mismatch", [&] { plan.inject_mismatch = true; });
  cli.parse(argc, argv, /*keep_unknown=*/true);

  if (plan.smoke) {
    plan.rounds = 1;
    plan.warmup_echoes = 20;
    plan.transport_echoes = 50;
    plan.interleave_cycles = 3;
    plan.sparse_requests = 5;
    plan.slow_requests = 3;
    plan.worst_cycles = 2;
    plan.pairs_duration = std::chrono::milliseconds(30);
  }
  if (rounds) plan.rounds = *rounds;

  if (const char* env = std::getenv("SPINRPC_BENCH_SERVER"); env != nullptr && *env != '\0') {
    plan.server_path = env;
  } else {
    plan.server_path = server_next_to_this_executable();
  }
  plan.tsgo_path = find_tsgo();
  return plan;
}

std::vector<int> BenchPlan::paired_rounds(int round) const {
  const int n = paired_rounds_per_round();
  std::vector<int> indices;
  for (int sub = 0; sub < n; ++sub) indices.push_back(round * n + sub);
  return indices;
}

std::size_t BenchPlan::paired_count(std::size_t count) const noexcept {
  return std::max<std::size_t>(count / static_cast<std::size_t>(paired_rounds_per_round()), 10);
}

}  // namespace spinrpc::bench
