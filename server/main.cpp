// spinrpc-server: tsgo --api's transport, answered by spinrpc::Server.
#include <string>  // std::string
#include <vector>  // std::vector

#include "server/bench_methods.h"
#include "server/server_main.h"

int main(int argc, char** argv) {
  return spinrpc::run_server_main(
      "spinrpc-server", std::vector<std::string>(argv + 1, argv + argc),
      [](spinrpc::Server& server, const spinrpc::CommandLine& line) {
        if (line.bench_methods) spinrpc::register_bench_methods(server);
      });
}
