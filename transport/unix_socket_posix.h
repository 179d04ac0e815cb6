#pragma once

#include <sys/un.h>  // sockaddr_un

#include <chrono>  // std::chrono::milliseconds
#include <memory>  // std::unique_ptr
#include <string>  // std::string

#include "transport/endpoint.h"
#include "transport/transport.h"

namespace spinrpc {

class CreatedFiles;

/// The address of the Unix domain socket at `path`: the one place for the
/// path rule (1 to 107 bytes: sun_path holds 108 with the terminating NUL).
/// Throws std::system_error (ENAMETOOLONG) whose what() is `what_for`, the
/// path and the rule ("cannot listen on PATH: a Unix socket path must have 1
/// to 107 bytes").
sockaddr_un unix_socket_address(const std::string& path, const char* what_for);

/// Where --pipe PATH puts the socket (dialect/api_dialect.h, PipeLayout).
enum class SocketPlace {
  at_path,               ///< the socket is PATH (API 7.0)
  in_private_directory,  ///< PATH is a new directory, 0700, holding PATH/socket (API 7.1)
};

/// Listens on a Unix domain socket, serving exactly one connection (tsgo's
/// --pipe; later clients are accepted and closed at once), private to this
/// user whatever the umask (docs/HARDENING.md, "Endpoints are private"):
/// the socket file is 0600 from the moment another user could reach it,
/// and a client whose SO_PEERCRED uid is not our effective uid is closed at
/// once with one line on stderr naming `program`, and the server waits for
/// the next. at_path: a stale socket file at `path` (one nobody listens on)
/// is removed first; a path held by a live server or that exists but is not
/// a socket is refused. in_private_directory: `path` must not exist.
/// Either way a missing parent directory and a path that breaks the length
/// rule are refused with std::system_error naming the path, leaving nothing
/// behind. What is created is recorded in `files` and removed with the
/// transport. Boost.Asio owns the acceptor; the accepted fd goes to the
/// caller.
std::unique_ptr<Transport> make_unix_socket_transport(const std::string& path, SocketPlace place,
                                                     CreatedFiles& files, const std::string& program);

/// Connects to the Unix domain socket at `path`, retrying every few ms while
/// nothing listens there yet (ENOENT, ECONNREFUSED) for up to
/// options.timeout, and returns its Streams (the socket twice, dup'ed).
/// Throws std::system_error naming the path ("cannot connect to /tmp/x.sock
/// within 5000 ms: Connection refused") on timeout or any other failure.
/// connect() (transport/endpoint.h) calls it for Endpoint::Kind::pipe.
Streams connect_unix_socket(const std::string& path, const ConnectOptions& options);

}  // namespace spinrpc
