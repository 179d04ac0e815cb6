#pragma once

#include <chrono>  // std::chrono::milliseconds
#include <string>  // std::string
#include <utility>  // std::move

#include "stream/buffer_options.h"
#include "stream/streams.h"

namespace spinrpc {

/// Where a client finds a server that already listens, as spinrpc-server's
/// and tsgo's command lines name it (docs/PROTOCOL.md#command-line).
struct Endpoint {
  enum class Kind {
    /// `--pipe PATH`: a Unix domain socket at PATH on POSIX
    /// (transport/unix_socket_posix.h).
    pipe,
    /// `--fifo-in TO_SERVER --fifo-out FROM_SERVER`: two POSIX FIFOs
    /// (transport/fifo_posix.h).
    fifos,
  };
  Kind kind = Kind::pipe;
  std::string path;        ///< the socket, or the FIFO the client writes (TO_SERVER)
  std::string reply_path;  ///< fifos: the FIFO the client reads (FROM_SERVER); empty otherwise

  /// The server listening with `--pipe path`.
  static Endpoint pipe(std::string path) { return {Kind::pipe, std::move(path), {}}; }
  /// The server listening with `--fifo-in to_server --fifo-out from_server`.
  static Endpoint fifos(std::string to_server, std::string from_server) {
    return {Kind::fifos, std::move(to_server), std::move(from_server)};
  }
};

/// How connect() makes the connection's Streams.
struct ConnectOptions {
  /// How the streams buffer and write (fd_streams()).
  BufferOptions buffer;
  /// The reader will try without blocking (a spin budget over 0).
  bool spinning = false;
  /// The written descriptor is made non-blocking (it is ours alone: a
  /// socket or FIFO this connect opened), so that a deadline can bound a
  /// write (OutputStream::set_deadline). A socket's one open description
  /// then reads non-blocking too, which its input stream waits out in
  /// poll(2).
  bool bounded_writes = false;
  /// How long to keep retrying while the server is not listening yet, in ms.
  std::chrono::milliseconds timeout{5000};
};

/// Connects to the server at `endpoint`, retrying up to options.timeout
/// while it is not there yet, and returns the connection's Streams: the
/// shape every accept (transport/transport.h) returns too. Throws
/// std::system_error naming the path on timeout or any other failure
/// ("cannot connect to /tmp/x.sock within 5000 ms: Connection refused").
/// Defined per platform (transport/endpoint_posix.cpp).
Streams connect(const Endpoint& endpoint, const ConnectOptions& options);

}  // namespace spinrpc
