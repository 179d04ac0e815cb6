#pragma once

#include <napi.h>

namespace spinrpc::node {

/// The JavaScript class SyncRpcChannel (docs/NODE.md, "The surface"): its
/// constructor starts a server through a ChannelCore, registered in
/// LiveChannels until it is closed or garbage-collected.
Napi::Function define_channel_class(Napi::Env env);

}  // namespace spinrpc::node
