#include "bench/harness/registration.h"

#include <cstdio>     // std::fflush, std::fprintf
#include <cstdlib>    // std::_Exit
#include <exception>  // std::exception
#include <utility>    // std::move

namespace spinrpc::bench {

BenchName& BenchName::add(std::string_view key, std::string_view value) {
  name_ += '/';
  name_ += key;
  name_ += ':';
  name_ += value;
  return *this;
}

BenchName& BenchName::add(std::string_view key, std::size_t value) { return add(key, std::to_string(value)); }

void register_run(const std::string& name, std::size_t iterations, BenchBody body) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [name, body = std::move(body)](benchmark::State& state) {
                                 try {
                                   body(state);
                                 } catch (const std::exception& e) {
                                   // A broken fixture is not a measurement: stop
                                   // before Google Benchmark prints a time for it.
                                   std::fflush(stdout);
                                   std::fprintf(stderr, "spinrpc-bench: %s: %s\n", name.c_str(), e.what());
                                   std::fflush(stderr);
                                   std::_Exit(1);
                                 }
                               })
      ->Iterations(static_cast<benchmark::IterationCount>(iterations))
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace spinrpc::bench
