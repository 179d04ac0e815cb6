#pragma once

#include "descriptor/unique_fd.h"
#include "stream/buffer_options.h"
#include "stream/streams.h"

namespace spinrpc {

/// A connection's two descriptors, as a client's connect_* returns them: a
/// FIFO pair, or one socket twice (dup'ed, so each direction owns its fd).
/// fd_streams() makes them Streams.
struct Connection {
  UniqueFd in;   ///< the peer's messages come from here
  UniqueFd out;  ///< ours go here
};

/// Where a server meets its one client: the listening side of an endpoint.
/// Each way of connecting is one class behind this interface: stdio
/// (transport/stdio.h), a Unix domain socket (tsgo's --pipe on POSIX,
/// transport/unix_socket.h), a pair of POSIX FIFOs (transport/fifo.h); the
/// connecting side of each sits next to it. A Windows named pipe
/// (`\\.\pipe\NAME`, what tsgo's --pipe means there) would be one more:
/// CreateNamedPipe, ConnectNamedPipe, and a channel over the HANDLE
/// (README, "Windows").
///
/// Construction claims the endpoint (binds the socket, creates the FIFOs),
/// so a bad path fails before any client waits; accept() then blocks until
/// the client is there. The destructor removes the files it created.
class Transport {
 public:
  virtual ~Transport() = default;
  /// Blocks until the client connects; returns the connection's Streams,
  /// made with `options` (`spinning`: the reader will try without
  /// blocking; see fd_streams()). Throws std::system_error naming the path
  /// on failure.
  virtual Streams accept(const BufferOptions& options, bool spinning) = 0;
};

}  // namespace spinrpc
