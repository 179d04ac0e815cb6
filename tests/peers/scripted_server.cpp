// scripted_server: the scripted methods (scripted_methods.h) behind
// spinrpc-server's own command line and endings (run_server_main: --pipe,
// --fifo-in/--fifo-out, signals, exit statuses), with --api implied. The
// transport tests serve it on sockets and FIFOs.
#include <string>  // std::string
#include <vector>  // std::vector

#include "app/server_main.h"
#include "tests/peers/scripted_methods.h"

int main(int argc, char** argv) {
  // --api implied, unless the caller (the async client) gives it itself.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args.front() != "--api") args.insert(args.begin(), "--api");
  return spinrpc::run_server_main("scripted_server", args,
                                  [](spinrpc::Server& server, const spinrpc::CommandLine&) {
                                    add_scripted_methods(server);
                                  });
}
