#include <unistd.h>  // STDIN_FILENO, STDOUT_FILENO

#include "server/transport.h"

namespace spinrpc {
namespace {

class StdioTransport final : public Transport {
 public:
  FdChannel accept(ChannelOptions options) override {
    return FdChannel(UniqueFd(STDIN_FILENO), UniqueFd(STDOUT_FILENO), std::move(options));
  }
};

}  // namespace

std::unique_ptr<Transport> make_stdio_transport() { return std::make_unique<StdioTransport>(); }

}  // namespace spinrpc
