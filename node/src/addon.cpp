// The Node-API addon's entry point: the SyncRpcChannel class
// (node/src/channel.h), endAll() and checkOptions(), and the environment's
// callback caller (node/src/callback_caller.h). No libuv handle is created, so a
// channel never keeps Node alive; channels left open are ended when their
// environment is torn down, when index.mjs sees the process exit, or when
// they are garbage-collected (docs/NODE.md).

#include <napi.h>

#include "client-shim/sync_rpc_channel.h"
#include "node/src/arguments.h"
#include "node/src/callback_caller.h"
#include "node/src/channel.h"
#include "node/src/live_channels.h"

namespace spinrpc::node {
namespace {

// endAll(): ends this environment's open channels (index.mjs, on 'exit').
Napi::Value end_all(const Napi::CallbackInfo& info) {
  LiveChannels::get().end_all(info.Env());
  return info.Env().Undefined();
}

// checkOptions(options): the TypeError SyncRpcChannel's constructor throws
// for `options` (its third argument), or nothing; nothing is started.
// createTransport() refuses a bad option when it is called, not at its
// first request, when the channel is made (transport.mjs).
Napi::Value check_options(const Napi::CallbackInfo& info) {
  SyncRpcOptions options;
  bool collect_timing = false;
  CallbackFailureRule rule = CallbackFailureRule::request_returns;
  read_options(info[0], options, collect_timing, rule);
  return info.Env().Undefined();
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  install_callback_caller(env);
  exports.Set("SyncRpcChannel", define_channel_class(env));
  exports.Set("endAll", Napi::Function::New<end_all>(env, "endAll"));
  exports.Set("checkOptions", Napi::Function::New<check_options>(env, "checkOptions"));
  // Worker threads and embedders tear environments down without 'exit'.
  napi_add_env_cleanup_hook(
      env, [](void* arg) { LiveChannels::get().end_all(static_cast<napi_env>(arg)); }, env);
  return exports;
}

}  // namespace
}  // namespace spinrpc::node

namespace {
// NODE_API_MODULE pastes the function's name into an identifier.
Napi::Object init_spinrpc(Napi::Env env, Napi::Object exports) {
  return spinrpc::node::init(env, exports);
}
}  // namespace

NODE_API_MODULE(spinrpc, init_spinrpc)