#include "node/src/js_errors.h"


#include <cerrno>        // EACCES, EAGAIN, EMFILE, ENFILE, ENOENT
#include <cstdint>       // std::uint32_t
#include <optional>      // std::optional
#include <stdexcept>     // std::invalid_argument
#include <system_error>  // std::system_error

#include "client-shim/child_exited.h"
#include "client-shim/child_process.h"
#include "stream/peer_closed.h"
#include "descriptor/glibc_extensions.h"
#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"
#include "stream/timed_out.h"

namespace spinrpc::node {
namespace {

// "SIGKILL" for 9, as Node's ChildProcess.signalCode names signals.
std::string signal_name(int signal) {
  if (const char* abbrev = signal_abbreviation(signal)) return std::string("SIG") + abbrev;
  return std::to_string(signal);
}

// A child that could not be started, as Node's child_process.spawn reports
// it (lib/internal/child_process.js): the errors it emits as the child's
// 'error' event (EACCES, EAGAIN, EMFILE, ENFILE, ENOENT) read
// "spawn FILE ENOENT" with `errno` (negative), `code`, `syscall` ("spawn
// FILE"), `path` and `spawnargs` (the arguments after argv[0]); the others,
// which spawn() throws, read "spawn ENOTDIR" with `errno`, `code` and
// `syscall` ("spawn") only. The properties are set in Node's order.
Napi::Error spawn_error(Napi::Env env, const SpawnError& e) {
  const int err = e.code().value();
  const char* name = error_name(err);
  const std::string code = name != nullptr ? name : "Unknown system error -" + std::to_string(err);
  const bool emitted = err == EACCES || err == EAGAIN || err == EMFILE || err == ENFILE || err == ENOENT;
  const std::string syscall = emitted ? "spawn " + e.executable() : "spawn";
  Napi::Error error = Napi::Error::New(env, syscall + " " + code);
  error.Set("errno", Napi::Number::New(env, -err));
  error.Set("code", Napi::String::New(env, code));
  error.Set("syscall", Napi::String::New(env, syscall));
  if (emitted) {
    error.Set("path", Napi::String::New(env, e.executable()));
    Napi::Array spawnargs = Napi::Array::New(env, e.args().size());
    for (std::uint32_t i = 0; i < e.args().size(); ++i) spawnargs.Set(i, Napi::String::New(env, e.args()[i]));
    error.Set("spawnargs", spawnargs);
  }
  return error;
}

}  // namespace

Napi::Error to_js_error(Napi::Env env, std::exception_ptr thrown, const std::string& suffix) {
  const auto with_code = [&](const std::exception& e, const char* code) {
    Napi::Error error = Napi::Error::New(env, e.what() + suffix);
    if (code != nullptr) error.Set("code", Napi::String::New(env, code));
    return error;
  };
  try {
    std::rethrow_exception(thrown);
  } catch (const Napi::Error& e) {
    return e;
  } catch (const RemoteError& e) {
    return with_code(e, nullptr);  // the TS 7 channel: new Error(payload)
  } catch (const ChildExited& e) {
    Napi::Error error = with_code(e, "ERR_SPINRPC_CHILD_EXITED");
    const std::optional<int> code = e.exit_code();
    const std::optional<int> signal = e.term_signal();
    error.Set("exitCode", code ? Napi::Value(Napi::Number::New(env, *code)) : env.Null());
    error.Set("signal",
              signal ? Napi::Value(Napi::String::New(env, signal_name(*signal))) : env.Null());
    return error;
  } catch (const PeerClosed& e) {
    return with_code(e, "ERR_SPINRPC_PEER_CLOSED");
  } catch (const TimedOut& e) {
    return with_code(e, "ERR_SPINRPC_TIMED_OUT");
  } catch (const ProtocolError& e) {
    return with_code(e, "ERR_SPINRPC_PROTOCOL");
  } catch (const SpawnError& e) {
    return spawn_error(env, e);
  } catch (const std::system_error& e) {
    // Node's own shape for OS errors: code "ENOENT", errno negative.
    const int err = e.code().value();
    const char* name = e.code().category() == std::generic_category() ? error_name(err)
                                                                       : nullptr;
    Napi::Error error = with_code(e, name);
    if (name != nullptr) error.Set("errno", Napi::Number::New(env, -err));
    return error;
  } catch (const std::invalid_argument& e) {
    return Napi::TypeError::New(env, e.what() + suffix);
  } catch (const std::exception& e) {
    return with_code(e, nullptr);
  } catch (...) {
    return Napi::Error::New(env, "spinrpc: unknown C++ exception");
  }
}

std::string thrown_message(Napi::Env env, Napi::Value thrown) {
  try {
    const Napi::Object global = env.Global();
    Napi::Value shown = thrown;
    if (thrown.IsObject() && thrown.As<Napi::Object>().InstanceOf(global.Get("Error").As<Napi::Function>())) {
      shown = thrown.As<Napi::Object>().Get("message");
    }
    const Napi::Function string = global.Get("String").As<Napi::Function>();
    const Napi::Value text = string.Call({shown});
    const Napi::Function trim = string.Get("prototype").As<Napi::Object>().Get("trim").As<Napi::Function>();
    return trim.Call(text, {}).As<Napi::String>().Utf8Value();
  } catch (const Napi::Error&) {
    // String(e) threw (a toString that throws): the TS 7 channel would
    // throw that from its catch block and send nothing.
    return "the callback threw a value that cannot be converted to a string";
  }
}

const char* type_name(napi_valuetype type) {
  switch (type) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_boolean: return "a boolean";
    case napi_number: return "a number";
    case napi_string: return "a string";
    case napi_symbol: return "a symbol";
    case napi_object: return "an object";
    case napi_function: return "a function";
    case napi_external: return "an external";
    case napi_bigint: return "a bigint";
  }
  return "an unknown value";
}

}  // namespace spinrpc::node
