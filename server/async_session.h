#pragma once

#include <cstdint>      // std::uint64_t
#include <deque>        // std::deque
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "channel/json_rpc_channel.h"
#include "protocol/json_rpc.h"

namespace spinrpc::detail {

struct AsyncSession;

/// AsyncSession::call's body (serve_async.cpp).
std::string_view call_client(AsyncSession& session, std::string_view callback, std::string_view arguments);

/// The state of one async session (Server::serve_async), shared by the
/// serve loop and RequestContext::call.
struct AsyncSession {
  explicit AsyncSession(JsonRpcChannel& c) : channel(c), call_through(&call_client) {
    params.reserve(64);  // never inline: JsonRpcDecoder::take_output
  }

  /// Writes `head`, then `body`, then `tail` as one gathered write.
  void write(std::string_view head, std::string_view body = {}, std::string_view tail = {});

  /// A server → client request; returns the result in output form (valid
  /// until the next decode), or throws RemoteError for an error response.
  std::string_view call(std::string_view callback, std::string_view arguments) {
    return call_through(*this, callback, arguments);
  }

  JsonRpcChannel& channel;
  /// call()'s body, reached through a pointer set where a session is made
  /// (serve_async.cpp) rather than by name, so RequestContext::call, which
  /// every server links, pulls in no JSON-RPC decoder and no simdjson where
  /// --async is never served in-process (the static spinrpc-server:
  /// docs/NODE.md, "Spawn to first reply").
  std::string_view (*call_through)(AsyncSession& session, std::string_view callback, std::string_view arguments);
  JsonRpcDecoder decoder;
  /// Requests that arrived while a call was pending, as whole bodies, and
  /// the one being answered (its params may point into it).
  std::deque<std::string> queued;
  std::string current;
  /// The request being answered: its id, and its params when they are not
  /// a view of the body (JsonRpcDecoder::take_output).
  JsonRpcId id;
  std::string id_text;
  std::string method;
  std::string params;
  std::uint64_t next_call = 1;  ///< "api1", "api2", … (one counter per process, as tsgo)
  std::string out;              ///< reused for small messages
};

}  // namespace spinrpc::detail
