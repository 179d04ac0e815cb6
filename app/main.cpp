// spinrpc-server: tsgo --api's transport, answered by spinrpc::Server.
#include <string>  // std::string
#include <vector>  // std::vector

#include "app/server_main.h"

int main(int argc, char** argv) {
  return spinrpc::run_server_main("spinrpc-server", std::vector<std::string>(argv + 1, argv + argc));
}
