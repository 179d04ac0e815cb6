// connect() on POSIX: --pipe is a Unix domain socket, --fifo-in/--fifo-out
// two FIFOs. A Windows build has its own endpoint_win32.cpp, where --pipe
// is a named pipe (docs/CONVENTIONS.md#adding-a-windows-named-pipe).
#include "transport/endpoint.h"

#include "transport/fifo_posix.h"
#include "transport/unix_socket_posix.h"

namespace spinrpc {

Streams connect(const Endpoint& endpoint, const ConnectOptions& options) {
  switch (endpoint.kind) {
    case Endpoint::Kind::pipe:
      return connect_unix_socket(endpoint.path, options);
    case Endpoint::Kind::fifos:
      break;
  }
  return connect_fifo_pair(endpoint.path, endpoint.reply_path, options);
}

}  // namespace spinrpc
