#pragma once

#include "stream/buffer_options.h"
#include "stream/streams.h"

namespace spinrpc {

/// Where a server meets its one client: the listening side of an endpoint.
/// Each way of connecting is one class behind this interface: stdio
/// (transport/stdio.h), a Unix domain socket (tsgo's --pipe on POSIX,
/// transport/unix_socket_posix.h), a pair of POSIX FIFOs
/// (transport/fifo_posix.h); the connecting side of each sits next to it,
/// and a client reaches it through connect() (transport/endpoint.h). A
/// Windows named pipe (`\\.\pipe\NAME`, what tsgo's --pipe means there)
/// would be one more, in files of its own
/// (docs/CONVENTIONS.md#adding-a-windows-named-pipe).
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
