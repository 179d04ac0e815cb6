#pragma once

#include <memory>  // std::unique_ptr
#include <string>  // std::string

#include "channel/fd_channel.h"

namespace spinrpc {

class CreatedFiles;

/// Where a server meets its one client. Each way of connecting is one
/// class behind this interface: stdio, a Unix domain socket (tsgo's --pipe
/// on POSIX), a pair of POSIX FIFOs. A Windows named pipe (`\\.\pipe\NAME`,
/// what tsgo's --pipe means there) would be one more: CreateNamedPipe,
/// ConnectNamedPipe, and a channel over the HANDLE (README, "Windows").
///
/// Construction claims the endpoint (binds the socket, creates the FIFOs),
/// so a bad path fails before any client waits; accept() then blocks until
/// the client is there. The destructor removes the files it created.
class Transport {
 public:
  virtual ~Transport() = default;
  /// Blocks until the client connects; returns the channel to it.
  /// Throws std::system_error naming the path on failure.
  virtual FdChannel accept(ChannelOptions options) = 0;
};

/// stdin and stdout, as `tsgo --api` without --pipe.
std::unique_ptr<Transport> make_stdio_transport();

/// A Unix domain socket at `path`, serving exactly one connection (tsgo's
/// --pipe; later clients are accepted and closed at once): a stale socket
/// file there (one nobody listens on) is removed first; a path held by a
/// live server, a path that exists but is not a socket, a directory that
/// does not exist and a path longer than sun_path allows are refused with
/// std::system_error naming the path, leaving nothing behind. The socket
/// file is recorded in `files` and removed with the transport. Boost.Asio
/// owns the acceptor; the accepted fd is handed to the spin-aware channel.
std::unique_ptr<Transport> make_unix_socket_transport(const std::string& path, CreatedFiles& files);

/// Two POSIX FIFOs: the server reads requests from `in_path` and writes
/// replies to `out_path`. Each is created with mode 0600 if missing (and
/// then recorded in `files` and removed with the transport), and left in
/// place if it existed. The opening order cannot deadlock whichever FIFO
/// the client opens first. Throws std::system_error naming the path if a
/// path exists but is not a FIFO, or cannot be created or opened.
std::unique_ptr<Transport> make_fifo_transport(const std::string& in_path,
                                               const std::string& out_path, CreatedFiles& files);

}  // namespace spinrpc
