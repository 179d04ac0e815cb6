#pragma once

#include <napi.h>

namespace spinrpc::node {

/// How a registered callback's call ended.
struct CallbackOutcome {
  enum class Kind {
    returned,  ///< `value` is what the callback returned
    threw,     ///< `value` is what it threw (any value, null and primitives too)
    stopped,   ///< the engine stopped it; no `value` (nullptr)
  };
  Kind kind;
  napi_value value;
};

/// Makes this environment's callback caller: a JavaScript function that
/// calls a callback inside a try/catch. The module's init calls it once per
/// environment (main thread, each worker). Throws a JavaScript error.
void install_callback_caller(Napi::Env env);

/// Calls `callback(name, payload)` with `this` undefined, through the
/// caller, on the environment's thread (a stack trace made in the callback
/// shows it as `at callRegisteredCallback (<anonymous>)`).
///
/// A JavaScript catch block takes everything a callback can throw, and
/// nothing the engine does to stop JavaScript (a worker's process.exit() or
/// terminate(), a vm timeout), so a failed call of the caller means only
/// that (or a stack overflow on entering the caller itself). Then the
/// engine's exception is left pending, no JavaScript value may be made, and
/// the caller's caller must return to JavaScript at once: Node-API rethrows
/// the exception there unless the engine is still terminating. Which
/// Node-API calls fail after a stopped callback differs from one Node line
/// to the next (docs/NODE.md, "Errors"), so nothing else tells it.
CallbackOutcome call_callback(Napi::Env env, napi_value callback, napi_value name, napi_value payload);

}  // namespace spinrpc::node
