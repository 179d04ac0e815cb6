#include "echo_binding.h"

#include <spinrpc/client-shim/sync_rpc_channel.h>

std::string echo_through(const std::string& server, const std::string& text) {
  spinrpc::SyncRpcChannel channel(server, {"--api"});
  std::string reply = channel.request("echo", text);
  if (channel.close() != 0) throw std::runtime_error(server + " did not exit 0 on EOF");
  return reply;
}
