#pragma once

#include <chrono>  // std::chrono::milliseconds
#include <string>  // std::string

#include "channel/unique_fd.h"

namespace spinrpc {

/// A connection's two ends; the same socket appears twice (dup'ed).
struct Connection {
  UniqueFd in;   ///< replies come from here
  UniqueFd out;  ///< requests go here
};

/// Connects to the Unix domain socket at `path`, retrying every few ms while
/// nothing listens there yet (ENOENT, ECONNREFUSED) for up to `timeout`.
/// Throws std::system_error naming the path ("cannot connect to /tmp/x.sock
/// within 5000 ms: Connection refused") on timeout or any other failure.
Connection connect_unix_socket(const std::string& path, std::chrono::milliseconds timeout);

/// Opens a server's FIFO pair: `to_server` for writing, retrying while the
/// server has not created or opened it yet (ENOENT, ENXIO) for up to
/// `timeout`; then `from_server` for reading, which blocks until the server
/// opens it for writing (it does so right after opening `to_server`).
/// Throws std::system_error naming the path that failed.
Connection connect_fifo_pair(const std::string& to_server, const std::string& from_server,
                             std::chrono::milliseconds timeout);

}  // namespace spinrpc
