#include "transport/stdio.h"

#include <unistd.h>  // STDIN_FILENO, STDOUT_FILENO

namespace spinrpc {
namespace {

class StdioTransport final : public Transport {
 public:
  Connection accept() override { return {UniqueFd(STDIN_FILENO), UniqueFd(STDOUT_FILENO)}; }
};

}  // namespace

std::unique_ptr<Transport> make_stdio_transport() { return std::make_unique<StdioTransport>(); }

}  // namespace spinrpc
