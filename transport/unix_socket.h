#pragma once

#include <sys/un.h>  // sockaddr_un

#include <chrono>  // std::chrono::milliseconds
#include <memory>  // std::unique_ptr
#include <string>  // std::string

#include "transport/transport.h"

namespace spinrpc {

class CreatedFiles;

/// The address of the Unix domain socket at `path`: the one place for the
/// path rule (1 to 107 bytes: sun_path holds 108 with the terminating NUL).
/// Throws std::system_error (ENAMETOOLONG) whose what() is `what_for`, the
/// path and the rule ("cannot listen on PATH: a Unix socket path must have 1
/// to 107 bytes").
sockaddr_un unix_socket_address(const std::string& path, const char* what_for);

/// Listens on a Unix domain socket at `path`, serving exactly one connection
/// (tsgo's --pipe; later clients are accepted and closed at once): a stale
/// socket file there (one nobody listens on) is removed first; a path held
/// by a live server, a path that exists but is not a socket, a directory
/// that does not exist and a path that breaks the length rule are refused
/// with std::system_error naming the path, leaving nothing behind. The
/// socket file is recorded in `files` and removed with the transport.
/// Boost.Asio owns the acceptor; the accepted fd goes to the caller.
std::unique_ptr<Transport> make_unix_socket_transport(const std::string& path, CreatedFiles& files);

/// Connects to the Unix domain socket at `path`, retrying every few ms while
/// nothing listens there yet (ENOENT, ECONNREFUSED) for up to `timeout`.
/// Throws std::system_error naming the path ("cannot connect to /tmp/x.sock
/// within 5000 ms: Connection refused") on timeout or any other failure.
Connection connect_unix_socket(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace spinrpc
