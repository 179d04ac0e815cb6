// spinrpc-server: tsgo --api's transport, answered by spinrpc::Server.
// Built twice where spinrpc-server is a static PIE (app/CMakeLists.txt):
// with SPINRPC_ASYNC_SIBLING, the static spinrpc-server, which runs that
// sibling for --async; without, the sibling itself (and the one dynamic
// spinrpc-server elsewhere), which serves --async in-process.
#include <string>  // std::string
#include <vector>  // std::vector

#include "app/server_main.h"
#ifdef SPINRPC_ASYNC_SIBLING
#include "app/async_sibling.h"
#endif

int main(int argc, char** argv) {
  const std::string program = "spinrpc-server";
  const std::vector<std::string> args(argv + 1, argv + argc);
#ifdef SPINRPC_ASYNC_SIBLING
  if (spinrpc::asks_for_async(args)) return spinrpc::exec_beside_self(SPINRPC_ASYNC_SIBLING, argv, program);
  return spinrpc::run_server_main(program, args, {}, nullptr);
#else
  return spinrpc::run_server_main(program, args);
#endif
}
