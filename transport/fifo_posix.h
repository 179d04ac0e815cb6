#pragma once

#include <chrono>  // std::chrono::milliseconds
#include <memory>  // std::unique_ptr
#include <string>  // std::string

#include "transport/endpoint.h"
#include "transport/transport.h"

namespace spinrpc {

class CreatedFiles;

/// Serves on two POSIX FIFOs: requests are read from `in_path`, replies
/// written to `out_path`. Each is created with mode 0600 if missing (and
/// then recorded in `files` and removed with the transport), and left in
/// place if it existed. The opening order cannot deadlock whichever FIFO
/// the client opens first. Throws std::system_error naming the path if a
/// path exists but is not a FIFO, or cannot be created or opened.
std::unique_ptr<Transport> make_fifo_transport(const std::string& in_path,
                                               const std::string& out_path, CreatedFiles& files);

/// Opens a server's FIFO pair: `to_server` for writing, retrying while the
/// server has not created or opened it yet (ENOENT, ENXIO) for up to
/// options.timeout; then `from_server` for reading, which blocks until the
/// server opens it for writing (it does so right after opening
/// `to_server`), within what is left of the timeout. Returns their Streams.
/// Throws std::system_error naming the path that failed. connect()
/// (transport/endpoint.h) calls it for Endpoint::Kind::fifos.
Streams connect_fifo_pair(const std::string& to_server, const std::string& from_server,
                          const ConnectOptions& options);

}  // namespace spinrpc
