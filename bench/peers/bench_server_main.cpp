// spinrpc-bench-server: spinrpc-server (run_server_main, the same command
// line, endpoints and hot path) plus the benchmarks' benchWork method,
// added through run_server_main's hook for extra methods. spinrpc-bench
// spawns it, so the product binary carries no benchmark code.
#include <string>  // std::string
#include <vector>  // std::vector

#include "app/server_main.h"
#include "bench/peers/bench_methods.h"

int main(int argc, char** argv) {
  return spinrpc::run_server_main("spinrpc-bench-server", std::vector<std::string>(argv + 1, argv + argc),
                                  [](spinrpc::Server& server, const spinrpc::CommandLine&) {
                                    spinrpc::bench::register_bench_methods(server);
                                  });
}
