#include "node/src/callback_caller.h"

namespace spinrpc::node {
namespace {

// The try/catch every registered callback runs in. A failure leaves what
// was thrown in `failed.thrown` and returns `failed` itself, an object no
// callback can return, so that a success costs no allocation.
constexpr char kCallerSource[] =
    "(function callRegisteredCallback(callback, name, payload, failed) {\n"
    "  'use strict';\n"
    "  try { return callback(name, payload); } catch (thrown) { failed.thrown = thrown; return failed; }\n"
    "})";

// Per environment (napi instance data): the caller and its `failed` object.
struct CallbackCaller {
  Napi::FunctionReference call;
  Napi::ObjectReference failed;
};

}  // namespace

void install_callback_caller(Napi::Env env) {
  const Napi::Function call = env.RunScript(kCallerSource).As<Napi::Function>();
  // `thrown` is an own data property from the start, so the caller's
  // assignment never reaches a setter on Object.prototype.
  Napi::Object failed = Napi::Object::New(env);
  failed.Set("thrown", env.Undefined());
  env.SetInstanceData(new CallbackCaller{Napi::Persistent(call), Napi::Persistent(failed)});
}

CallbackOutcome call_callback(Napi::Env env, napi_value callback, napi_value name, napi_value payload) {
  const CallbackCaller& caller = *env.GetInstanceData<CallbackCaller>();
  const napi_value failed = caller.failed.Value();
  napi_value argv[4] = {callback, name, payload, failed};
  napi_value result = nullptr;
  if (napi_call_function(env, env.Undefined(), caller.call.Value(), 4, argv, &result) != napi_ok) {
    // Past the catch: the engine is stopping JavaScript. Its exception stays
    // pending (call_callback's contract).
    return {CallbackOutcome::Kind::stopped, nullptr};
  }
  bool threw = false;
  if (Napi::Value(env, result).IsObject()) napi_strict_equals(env, result, failed, &threw);
  if (!threw) return {CallbackOutcome::Kind::returned, result};
  // Taken out of `failed`, which keeps nothing alive until the next failure.
  Napi::Object holder(env, failed);
  const Napi::Value thrown = holder.Get("thrown");
  holder.Set("thrown", env.Undefined());
  return {CallbackOutcome::Kind::threw, thrown};
}

}  // namespace spinrpc::node
