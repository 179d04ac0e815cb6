#pragma once
// A shared library over spinrpc::client, the way a Node-API binding links
// the static libraries: it only builds if they are position-independent.

#include <string>

/// Spawns `server` with --api, echoes `text` through it, closes it; returns
/// the reply. Throws what SyncRpcChannel throws.
std::string echo_through(const std::string& server, const std::string& text);
