#pragma once

#include <chrono>       // std::chrono::duration
#include <cstddef>      // std::size_t
#include <functional>   // std::function
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <benchmark/benchmark.h>

namespace spinrpc::bench {

/// Builds a benchmark name that carries every workload parameter
/// (docs/BENCHMARKING.md#named-workloads):
/// "BM_Echo/bytes:8/count:20000/variant:adaptive/round:2". bench/report.mjs
/// splits names at '/' and ':' and groups rounds.
class BenchName {
 public:
  explicit BenchName(std::string_view family) : name_(family) {}
  BenchName& add(std::string_view key, std::string_view value);
  BenchName& add(std::string_view key, std::size_t value);
  const std::string& str() const noexcept { return name_; }

 private:
  std::string name_;
};

/// The body of one benchmark: runs its own timed loop over `state` and
/// reports through state.SetIterationTime and counters.
using BenchBody = std::function<void(benchmark::State& state)>;

/// Registers `body` under `name` with exactly `iterations` iterations,
/// manual time (the body times only what it measures; docs/BENCHMARKING.md#the-timed-region) and
/// µs as the display unit. Runs happen in registration order. An exception
/// out of `body` ends the whole run: one stderr line naming the benchmark,
/// then exit status 1 (no partial report). Integrity failures exit 3
/// (bench/harness/integrity.h).
void register_run(const std::string& name, std::size_t iterations, BenchBody body);

/// Seconds in a std::chrono duration, for SetIterationTime.
template <class Duration>
double seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace spinrpc::bench
