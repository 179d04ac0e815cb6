#include "node/src/arguments.h"

#include <chrono>   // std::chrono::milliseconds
#include <cmath>    // std::isfinite, std::floor
#include <cstdint>  // std::uint32_t

#include "node/src/js_errors.h"
#include "wait/placement_controller.h"  // parse_placement

namespace spinrpc::node {

std::string string_argument(const Napi::Value& value, const char* what) {
  if (!value.IsString()) {
    throw Napi::TypeError::New(value.Env(),
                               std::string(what) + " must be a string, got " + type_name(value.Type()));
  }
  return value.As<Napi::String>().Utf8Value();
}

namespace {

// A spawn argument: a string without NUL bytes. execve(2) would end it at
// the first NUL and run the child with other arguments than the caller
// passed; Node's spawn refuses it (ERR_INVALID_ARG_VALUE), and so does the
// TS 7 channel through it.
std::string checked_spawn_text(const Napi::Value& value, std::string text, const std::string& name) {
  if (text.find('\0') != std::string::npos) {
    Napi::TypeError error = Napi::TypeError::New(
        value.Env(), "The argument '" + name + "' must be a string without null bytes. Received " +
                         Napi::Value(value.Env().Global().Get("JSON").As<Napi::Object>().Get("stringify")
                                         .As<Napi::Function>().Call({value}))
                             .ToString()
                             .Utf8Value());
    error.Set("code", Napi::String::New(value.Env(), "ERR_INVALID_ARG_VALUE"));
    throw error;
  }
  return text;
}

// The `env` option, as Node's spawn takes it: every enumerable key, own or
// inherited, whose value is not undefined, as "KEY=String(value)"; a NUL in
// a key or value is refused as Node refuses it.
std::vector<std::string> env_option(const Napi::Value& value) {
  if (!value.IsObject() || value.IsArray() || value.IsFunction()) {
    throw Napi::TypeError::New(value.Env(), "SyncRpcChannel: option env must be an object");
  }
  const Napi::Object object = value.As<Napi::Object>();
  const Napi::Array keys = object.GetPropertyNames();
  std::vector<std::string> entries;
  entries.reserve(keys.Length());
  for (std::uint32_t i = 0; i < keys.Length(); ++i) {
    const Napi::Value key = keys.Get(i);
    const Napi::Value v = object.Get(key);
    if (v.IsUndefined()) continue;
    const std::string key_text = key.ToString().Utf8Value();
    const std::string name = "options.env['" + key_text + "']";
    std::string entry = checked_spawn_text(key, key_text, name);
    entry += '=';
    entry += checked_spawn_text(v, v.ToString().Utf8Value(), name);
    entries.push_back(std::move(entry));
  }
  return entries;
}

// A non-negative whole number of milliseconds or microseconds.
long long count_option(const Napi::Value& value, const char* key) {
  const double number = value.IsNumber() ? value.As<Napi::Number>().DoubleValue() : -1;
  if (!std::isfinite(number) || number < 0 || std::floor(number) != number || number > 1e12) {
    throw Napi::TypeError::New(value.Env(), std::string("SyncRpcChannel: option ") + key +
                                                " must be a non-negative integer");
  }
  return static_cast<long long>(number);
}

bool bool_option(const Napi::Value& value, const char* key) {
  if (!value.IsBoolean()) {
    throw Napi::TypeError::New(value.Env(),
                               std::string("SyncRpcChannel: option ") + key + " must be a boolean");
  }
  return value.As<Napi::Boolean>().Value();
}

}  // namespace

std::string spawn_argument(const Napi::Value& value, const std::string& name, const char* what) {
  return checked_spawn_text(value, string_argument(value, what), name);
}

// The third constructor argument: TS 7's collectTiming boolean, or an
// object of our options (docs/NODE.md, "The surface").
void read_options(const Napi::Value& value, SyncRpcOptions& options, bool& collect_timing,
                  CallbackFailureRule& rule) {
  if (value.IsUndefined()) return;
  if (!value.IsObject() || value.IsArray() || value.IsFunction()) {
    // TS 7's collectTiming, taken as the TS 7 channel takes it (`if
    // (this.collectTiming)`): any value but a plain object, by truthiness.
    collect_timing = value.ToBoolean().Value();
    return;
  }
  const Napi::Object object = value.As<Napi::Object>();
  const Napi::Array keys = object.GetPropertyNames();
  for (std::uint32_t i = 0; i < keys.Length(); ++i) {
    const std::string key = keys.Get(i).ToString().Utf8Value();
    const Napi::Value v = object.Get(key);
    if (v.IsUndefined()) continue;
    if (key == "collectTiming") {
      collect_timing = bool_option(v, "collectTiming");
    } else if (key == "spinUs") {
      options.spin.spin_us = count_option(v, "spinUs");
    } else if (key == "adaptive") {
      options.spin.adaptive = bool_option(v, "adaptive");
    } else if (key == "placement") {
      const std::optional<PlacementController::Setting> setting =
          v.IsString() ? parse_placement(v.As<Napi::String>().Utf8Value()) : std::nullopt;
      if (!setting) {
        throw Napi::TypeError::New(value.Env(),
                                   "SyncRpcChannel: option placement must be \"auto\", \"off\" or \"occupy\"");
      }
      options.spin.placement = *setting;
    } else if (key == "requestTimeoutMs") {
      options.request_timeout = std::chrono::milliseconds(count_option(v, "requestTimeoutMs"));
    } else if (key == "closeGraceMs") {
      options.close_grace = std::chrono::milliseconds(count_option(v, "closeGraceMs"));
    } else if (key == "env") {
      options.environment = env_option(v);
    } else if (key == "callbackFailure") {
      const std::string text = v.IsString() ? v.As<Napi::String>().Utf8Value() : std::string();
      if (text == "continue") {
        rule = CallbackFailureRule::request_returns;
      } else if (text == "throw") {
        rule = CallbackFailureRule::request_throws;
      } else if (text == "poison") {
        rule = CallbackFailureRule::channel_poisoned;
      } else {
        throw Napi::TypeError::New(value.Env(),
                                   "SyncRpcChannel: option callbackFailure must be \"continue\", \"throw\" or \"poison\"");
      }
    } else if (key == "sharedMemory") {
      // false: no shared-memory offer to the server (it stays on the
      // pipes); true: offer it even under SPINRPC_SHM=off; unset:
      // SPINRPC_SHM in the child's environment decides (docs/NODE.md).
      options.shared_memory = bool_option(v, "sharedMemory");
    } else if (key == "trace") {
      // A file for this channel's trace (docs/TRACE.md); "" for none. Unset:
      // SPINRPC_TRACE in the child's environment decides.
      if (!v.IsString()) throw Napi::TypeError::New(value.Env(), "SyncRpcChannel: option trace must be a string (a file name)");
      options.trace = v.As<Napi::String>().Utf8Value();
    } else if (key == "maxMessageBytes") {
      const long long bytes = count_option(v, "maxMessageBytes");
      if (bytes == 0) throw Napi::TypeError::New(value.Env(), "SyncRpcChannel: option maxMessageBytes must be positive");
      options.channel.limits.max_message_bytes = static_cast<std::size_t>(bytes);
    } else {
      throw Napi::TypeError::New(value.Env(),
                                 "SyncRpcChannel: unknown option " + key +
                                     " (collectTiming, spinUs, adaptive, placement, "
                                     "requestTimeoutMs, closeGraceMs, maxMessageBytes, sharedMemory, trace, env, callbackFailure)");
    }
  }
}

// A JavaScript string's UTF-8 bytes, written into one of the core's scratch
// buffers: one pass when the buffer already holds the longest possible
// encoding (3 bytes per UTF-16 unit), else one pass to measure and one to
// write. Throws a TypeError for a non-string.
std::string_view utf8_into(napi_env env, napi_value value, ChannelCore& core,
                           std::span<char> (ChannelCore::*buffer)(std::size_t), const char* what) {
  std::size_t units = 0;
  if (napi_get_value_string_utf16(env, value, nullptr, 0, &units) != napi_ok) {
    napi_valuetype type = napi_undefined;
    napi_typeof(env, value, &type);
    throw Napi::TypeError::New(env, std::string(what) + " must be a string, got " + type_name(type));
  }
  std::size_t need = 3 * units + 1;  // + the NUL napi always writes
  std::span<char> out = (core.*buffer)(0);
  if (out.size() < need && units > (std::size_t{64} << 10)) {
    // Big and not known to fit: measure first rather than reserve 3x.
    std::size_t bytes = 0;
    napi_get_value_string_utf8(env, value, nullptr, 0, &bytes);
    need = bytes + 1;
  }
  if (out.size() < need) out = (core.*buffer)(need);
  std::size_t written = 0;
  napi_get_value_string_utf8(env, value, out.data(), out.size(), &written);
  return {out.data(), written};
}

}  // namespace spinrpc::node
