#pragma once

#include <functional>  // std::function
#include <string>      // std::string
#include <vector>      // std::vector

#include "app/command_line.h"
#include "server/server.h"

namespace spinrpc {

/// Registers an executable's own methods on its Server, given the parsed
/// command line: the hook for extra methods (bench/peers/bench_server_main.cpp
/// adds the benchmarks' benchWork; tests/peers/ their scripted methods).
using AddMethods = std::function<void(Server& server, const CommandLine& line)>;

/// Serves one --async session (JSON-RPC: docs/ASYNC.md) on `server` over
/// `channel`. run_server_main's default is Server::serve_async, in this
/// process. It is a parameter so that an executable that never serves
/// --async itself can pass none and link no JSON-RPC decoder and no
/// simdjson: the static spinrpc-server hands --async to a sibling
/// executable (docs/NODE.md, "Spawn to first reply").
using ServeAsync = void (*)(Server& server, JsonRpcChannel& channel);

/// run_server_main's default ServeAsync.
inline void serve_async_in_process(Server& server, JsonRpcChannel& channel) { server.serve_async(channel); }

/// The whole of a spinrpc-server-like executable, for spinrpc-server itself
/// and for applications that embed their own methods: parses `args` (argv
/// without argv[0]: tsgo's command line and spinrpc's flags), ignores
/// SIGPIPE, resolves the spin policy, claims the transport (stdio, --pipe
/// socket, --fifo-in/--fifo-out), ends cleanly on SIGINT/SIGTERM, serves one
/// client and maps every ending to an exit status and at most one stderr
/// line (README, "Exit status"; docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo):
///   0  the client closed the connection between frames (quiet), or --help
///      without --api;
///   1  a malformed or oversized frame, a message cut short by EOF, a client
///      that left before reading a reply or during a Call, an OS error (one
///      line on stderr);
///   2  a bad command line (one line and the usage on stderr);
///   130/143  SIGINT/SIGTERM (files removed; quiet unless a request or a
///      message was cut short, then one line).
/// Fds 0-2 that are closed at start get /dev/null; their flags are never
/// changed. Meant to own the process: once the connection is open, the
/// calling thread takes a descriptor table of its own (unshare(2)), so
/// threads the application started before no longer see the fds it opens
/// or closes from then on (descriptor/descriptor_table.h).
/// `program` names the executable in messages. `serve_async` null: this
/// executable has no --async, which then exits 1 with one line. Returns
/// the exit status.
int run_server_main(const std::string& program, const std::vector<std::string>& args,
                    const AddMethods& add_methods = {}, ServeAsync serve_async = serve_async_in_process);

}  // namespace spinrpc
