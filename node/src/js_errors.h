#pragma once

#include <napi.h>

#include <exception>  // std::exception_ptr
#include <string>     // std::string

namespace spinrpc::node {

/// The exception `thrown` as the JavaScript error the caller sees: the
/// message is what() (the server's own text for an Error reply, as in the
/// TS 7 channel) followed by `suffix`; `code` says which kind
/// (ERR_SPINRPC_CHILD_EXITED, _PEER_CLOSED, _TIMED_OUT, _PROTOCOL; Node's
/// "ENOENT" shapes for OS errors and spawn failures), and a dead child's
/// exit code or signal are properties too (docs/NODE.md, "Errors").
Napi::Error to_js_error(Napi::Env env, std::exception_ptr thrown, const std::string& suffix = {});

/// What the TS 7 channel sends as CallError for a throwing callback:
/// String(e instanceof Error ? e.message : e).trim(), computed with the
/// realm's own Error, String and String.prototype.trim, so that a Symbol
/// ("Symbol(x)"), an object with a `message` that is no Error ("[object
/// Object]") and Unicode spaces come out as there.
std::string thrown_message(Napi::Env env, Napi::Value thrown);

/// "a string", "undefined", ...: a value's type in an error message.
const char* type_name(napi_valuetype type);

}  // namespace spinrpc::node
