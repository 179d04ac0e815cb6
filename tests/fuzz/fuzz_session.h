#pragma once

// What both server fuzz targets (server_serve_fuzz.cpp, server_serve_async_fuzz.cpp)
// track about a session: whether a call() into the client failed because the
// stream did. After that the session must end with an exception, even when
// the handler swallowed it (RequestContext::call's contract).

#include "stream/peer_closed.h"
#include "protocol/protocol_error.h"

namespace spinrpc::fuzz {

struct Session {
  bool call_failed_fatally = false;  // a call() threw PeerClosed or ProtocolError
};

// Runs f(); a PeerClosed or ProtocolError out of it marks the session and
// goes on up.
template <typename F>
void fatal_marks(Session& session, F&& f) {
  try {
    f();
  } catch (const PeerClosed&) {
    session.call_failed_fatally = true;
    throw;
  } catch (const ProtocolError&) {
    session.call_failed_fatally = true;
    throw;
  }
}

}  // namespace spinrpc::fuzz
