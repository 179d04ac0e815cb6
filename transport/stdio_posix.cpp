#include "transport/stdio.h"

#include <unistd.h>  // STDIN_FILENO, STDOUT_FILENO

#include "stream/fd_streams_posix.h"

namespace spinrpc {
namespace {

class StdioTransport final : public Transport {
 public:
  Streams accept(const BufferOptions& options, bool spinning) override {
    return fd_streams(UniqueFd(STDIN_FILENO), UniqueFd(STDOUT_FILENO), options, spinning);
  }
};

}  // namespace

std::unique_ptr<Transport> make_stdio_transport() { return std::make_unique<StdioTransport>(); }

}  // namespace spinrpc
