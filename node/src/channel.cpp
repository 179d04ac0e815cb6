// The JavaScript class SyncRpcChannel, with the surface of the TS 7 channel
// (@typescript/native-preview's dist/api/syncChannel.js) and of libsyncrpc,
// over one ChannelCore (docs/NODE.md).
//
// Everything runs on the calling JavaScript thread: a request blocks it
// (spinning first, by the shim's policy) and the server's Calls run the
// registered JavaScript callbacks inline.

#include "node/src/channel.h"

#include <cstdint>        // std::uint32_t
#include <optional>       // std::optional
#include <stdexcept>      // std::runtime_error, std::logic_error
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <type_traits>    // std::decay_t, std::is_same_v
#include <unordered_map>  // std::unordered_map
#include <utility>        // std::move
#include <vector>         // std::vector

#include "descriptor/stderr_lines.h"
#include "node/src/arguments.h"
#include "node/src/callback_caller.h"
#include "node/src/channel_core.h"
#include "node/src/js_errors.h"
#include "node/src/live_channels.h"
#include "node/src/reply_buffers.h"
#include "wait/channel_stats.h"

namespace spinrpc::node {
namespace {

class Channel : public Napi::ObjectWrap<Channel> {
 public:
  static Napi::Function define(Napi::Env env) {
    // Methods writable and configurable, as a JavaScript class's are: tools
    // wrap a channel's requestSync on the instance (bench/workload/walk.mjs
    // does, to time the gaps), which a read-only method forbids.
    constexpr auto method = static_cast<napi_property_attributes>(napi_writable | napi_configurable);
    return DefineClass(env, "SyncRpcChannel",
                       {
                           InstanceMethod<&Channel::request_sync>("requestSync", method),
                           InstanceMethod<&Channel::request_binary_sync>("requestBinarySync", method),
                           InstanceMethod<&Channel::register_callback>("registerCallback", method),
                           InstanceMethod<&Channel::unregister_callback>("unregisterCallback", method),
                           InstanceMethod<&Channel::close>("close", method),
                           InstanceMethod<&Channel::stats>("stats", method),
                           InstanceAccessor<&Channel::last_bytes_sent>("lastBytesSent"),
                           InstanceAccessor<&Channel::last_bytes_received>("lastBytesReceived"),
                           InstanceAccessor<&Channel::collect_timing>("collectTiming"),
                           InstanceAccessor<&Channel::pid>("pid"),
                       });
  }

  explicit Channel(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Channel>(info) {
    const Napi::Env env = info.Env();
    const std::string executable = spawn_argument(info[0], "file", "SyncRpcChannel: exe");
    if (executable.empty()) {
      // Node's spawn refuses an empty file before it starts anything.
      Napi::TypeError error = Napi::TypeError::New(env, "The argument 'file' cannot be empty. Received ''");
      error.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_VALUE"));
      throw error;
    }
    if (!info[1].IsArray()) {
      throw Napi::TypeError::New(env, "SyncRpcChannel: args must be an array of strings");
    }
    const Napi::Array array = info[1].As<Napi::Array>();
    std::vector<std::string> args;
    args.reserve(array.Length());
    for (std::uint32_t i = 0; i < array.Length(); ++i) {
      args.push_back(spawn_argument(array.Get(i), "args[" + std::to_string(i) + "]",
                                    "SyncRpcChannel: every element of args"));
    }
    SyncRpcOptions options;
    // The TS 7 channel takes any reply a Buffer can hold, tsgo sends
    // replies above the shim's 256 MiB default (protocol/frame.h): any
    // MessagePack frame here, unless lowered (docs/NODE.md, "The surface").
    options.channel.limits.max_message_bytes = kMaxReplyBytes;
    bool collect_timing = false;
    read_options(info[2], options, collect_timing, rule_);
    try {
      core_.emplace(executable, args, std::move(options), collect_timing);
    } catch (...) {
      throw to_js_error(env, std::current_exception());
    }
    env_ = env;
    LiveChannels::get().add(env_, &*core_);
  }

  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Garbage-collected while open: the child is ended, not left running.
  ~Channel() override {
    reply_buffers_.release();
    if (!core_) return;
    LiveChannels::get().remove(&*core_);
    core_->end_now();
  }

 private:
  // requestSync(method: string, payload: string): string
  Napi::Value request_sync(const Napi::CallbackInfo& info) {
    const napi_env env = info.Env();
    const std::optional<ByteView> got = request(info, /*binary=*/false);
    if (!got) return Napi::Value();
    const ByteView reply = *got;
    napi_value text = nullptr;
    // One pass from the channel's buffer into the JavaScript string.
    NAPI_THROW_IF_FAILED(env, napi_create_string_utf8(env, reinterpret_cast<const char*>(reply.data()),
                                                      reply.size(), &text),
                         Napi::Value());
    return {env, text};
  }

  // requestBinarySync(method: string, payload: Uint8Array | string): Uint8Array
  Napi::Value request_binary_sync(const Napi::CallbackInfo& info) {
    const napi_env env = info.Env();
    reply_buffers_.begin(env);
    const std::optional<ByteView> got = request(info, /*binary=*/true, &reply_buffers_);
    if (!got) return Napi::Value();
    const ByteView reply = *got;
    // A big reply was read straight into its Buffer.
    if (const napi_value read_there = reply_buffers_.holding(reply)) return {env, read_there};
    napi_value bytes = nullptr;
    // Else one copy into a Buffer of its own (byteOffset 0, as the TS 7
    // channel guarantees: the API reads buffer.buffer at absolute offsets).
    NAPI_THROW_IF_FAILED(env, napi_create_buffer_copy(env, reply.size(), reply.data(), nullptr, &bytes),
                         Napi::Value());
    return {env, bytes};
  }

  // The reply, or nothing when the engine stopped a callback (then no
  // JavaScript value may be made: the caller returns an empty value).
  std::optional<ByteView> request(const Napi::CallbackInfo& info, bool binary, PayloadSink* sink = nullptr) {
    const napi_env env = info.Env();
    ChannelCore& core = *core_;
    ByteView payload;
    std::string_view method;
    try {
      if (core.closed()) throw ChannelClosed();
      method = utf8_into(env, info[0], core, &ChannelCore::method_buffer, "requestSync: method");
      bool is_typed = false;
      if (binary) napi_is_typedarray(env, info[1], &is_typed);
      if (is_typed) {
        napi_typedarray_type type = napi_int8_array;
        std::size_t length = 0;
        void* data = nullptr;
        napi_get_typedarray_info(env, info[1], &type, &length, &data, nullptr, nullptr);
        if (type != napi_uint8_array && type != napi_uint8_clamped_array) {
          throw Napi::TypeError::New(env, "requestBinarySync: payload must be a Uint8Array or a string");
        }
        payload = ByteView(static_cast<const std::byte*>(data), length);  // no copy
      } else {
        payload = as_bytes(utf8_into(env, info[1], core, &ChannelCore::payload_buffer,
                                     binary ? "requestBinarySync: payload" : "requestSync: payload"));
      }
    } catch (...) {
      throw to_js_error(env, std::current_exception());
    }
    if (!poisoned_.IsEmpty()) throw Napi::Error(env, poisoned_.Value().Get("error"));
    callback_failure_.Reset();
    try {
      std::optional<ByteView> reply = core.request(method, payload, sink);
      if (rule_ != CallbackFailureRule::request_returns && !callback_failure_.IsEmpty()) {
        throw_callback_failure(env, nullptr);
      }
      return reply;
    } catch (const Napi::Error&) {
      throw;
    } catch (const CallbackAborted&) {
      // The engine is stopping JavaScript: make no value, return at once
      // and let it finish (call_back).
      return std::nullopt;
    } catch (...) {
      if (callback_failure_.IsEmpty()) throw to_js_error(env, std::current_exception());
      if (rule_ != CallbackFailureRule::request_returns) {
        throw_callback_failure(env, to_js_error(env, std::current_exception()).Value());
      }
      // The request failed after a callback threw (tsgo, for one, exits
      // when a file system callback fails): say so, and keep what it threw.
      Napi::Error error =
          to_js_error(env, std::current_exception(), " (" + callback_failure_text_ + ")");
      error.Set("cause", callback_failure_.Value().Get("thrown"));
      callback_failure_.Reset();
      throw error;
    }
  }

  // registerCallback(name: string, callback: (name: string, payload: string) => string)
  Napi::Value register_callback(const Napi::CallbackInfo& info) {
    const Napi::Env env = info.Env();
    std::string name = string_argument(info[0], "registerCallback: name");
    if (!info[1].IsFunction()) {
      throw Napi::TypeError::New(env, "registerCallback: callback must be a function");
    }
    const auto known = callbacks_.find(name);
    if (known != callbacks_.end()) {
      // The shim's callback for this name calls whatever the slot holds, so
      // replacing the function is all it takes, from inside a callback too
      // (the TS 7 channel's Map.set; the one running stays alive until it
      // returns).
      known->second = Napi::Persistent(info[1].As<Napi::Function>());
      return env.Undefined();
    }
    // The map's node is stable, so the shim's std::function can point at it.
    Napi::FunctionReference& slot = callbacks_[name];
    slot = Napi::Persistent(info[1].As<Napi::Function>());
    try {
      core_->register_callback(name, [this, &slot](std::string_view called, std::string_view payload) {
        return call_back(slot, called, payload);
      });
    } catch (...) {
      callbacks_.erase(name);  // not registered: leave no trace
      throw to_js_error(env, std::current_exception());
    }
    return env.Undefined();
  }

  // unregisterCallback(name: string): the server's later Calls of `name`
  // get the unknown-callback CallError, as for a name never registered.
  Napi::Value unregister_callback(const Napi::CallbackInfo& info) {
    const std::string name = string_argument(info[0], "unregisterCallback: name");
    const auto known = callbacks_.find(name);
    // The shim keeps its entry, which calls whatever the slot holds: an
    // empty slot answers as an unknown name (call_back).
    if (known != callbacks_.end()) known->second.Reset();
    return info.Env().Undefined();
  }

  // The error a request throws after a callback failed, under the throw
  // and poison rules: the TS 7 channel's text. `after` is the request's
  // own error when it failed too (kept as `requestError`).
  [[noreturn]] void throw_callback_failure(Napi::Env env, napi_value after) {
    Napi::Error error = Napi::Error::New(env, callback_failure_message_);
    const Napi::Value thrown = callback_failure_.Value().Get("thrown");
    if (!thrown.IsUndefined()) error.Set("cause", thrown);
    if (after != nullptr) error.Set("requestError", Napi::Value(env, after));
    callback_failure_.Reset();
    if (rule_ == CallbackFailureRule::channel_poisoned) {
      Napi::Object holder = Napi::Object::New(env);
      holder.Set("error", error.Value());
      poisoned_ = Napi::Reference<Napi::Object>::New(holder, 1);
    }
    throw error;
  }

  // Records a failed callback of the current request (`thrown` is what it
  // threw, undefined for an unregistered name).
  void record_callback_failure(Napi::Env env, napi_value thrown, std::string text, std::string message) {
    napi_value holder = nullptr;
    if (napi_create_object(env, &holder) != napi_ok ||
        napi_set_named_property(env, holder, "thrown", thrown) != napi_ok) {
      throw CallbackAborted("callback failure could not be recorded");
    }
    callback_failure_ = Napi::Reference<Napi::Object>::New(Napi::Object(env, holder), 1);
    callback_failure_text_ = std::move(text);
    callback_failure_message_ = std::move(message);
  }

  // Runs on this thread inside a request, when the server Calls.
  std::string call_back(Napi::FunctionReference& callback, std::string_view name,
                        std::string_view payload) {
    const Napi::Env env = Env();
    const Napi::HandleScope scope(env);
    if (rule_ != CallbackFailureRule::request_returns && !callback_failure_.IsEmpty()) {
      // The TS 7 channel's request ended at the first failure, so no later
      // callback of it runs; the server is answered without running one.
      throw std::runtime_error("callback `" + std::string(name) +
                               "` not run: an earlier callback of this request failed");
    }
    if (callback.IsEmpty()) {
      // Unregistered: the TS 7 channel's unknown-callback answer, and its
      // error for the request.
      std::string message = "unknown callback: `" + std::string(name) +
                            "`. Please make sure to register it on the JavaScript side before invoking it.";
      if (callback_failure_.IsEmpty()) {
        record_callback_failure(env, env.Undefined(), "callback `" + std::string(name) + "` is not registered",
                                "no callback named `" + std::string(name) + "` found");
      }
      throw std::runtime_error(std::move(message));
    }
    // Through call_callback, not FunctionReference::Call: when the engine
    // stops the callback, node-addon-api would wrap what it left pending in
    // an Error, which needs JavaScript to run, and abort the process
    // ("FATAL ERROR: Error::Error napi_define_properties").
    const CallbackOutcome outcome =
        call_callback(env, callback.Value(), Napi::String::New(env, name.data(), name.size()),
                      Napi::String::New(env, payload.data(), payload.size()));
    if (outcome.kind == CallbackOutcome::Kind::stopped) {
      // The request ends here, with no JavaScript value made, the engine's
      // exception pending, and the server's Call unanswered: the channel is
      // broken.
      throw CallbackAborted("callback `" + std::string(name) + "` was stopped by the JavaScript engine");
    }
    if (outcome.kind == CallbackOutcome::Kind::threw) {
      // CallError with the TS 7 channel's text; the request goes on and the
      // server decides what the failure means (the rule decides what the
      // request then throws).
      const Napi::Value thrown(env, outcome.value);
      std::string message = thrown_message(env, thrown);
      if (callback_failure_.IsEmpty()) {
        record_callback_failure(env, thrown, "callback `" + std::string(name) + "` threw: " + message,
                                "Error calling callback `" + std::string(name) + "`: " + message);
      }
      throw std::runtime_error(std::move(message));
    }
    const Napi::Value value(env, outcome.value);
    if (!value.IsString()) {
      std::string message = "callback `" + std::string(name) + "` returned " + type_name(value.Type()) +
                            ", not a string";
      if (callback_failure_.IsEmpty()) {
        record_callback_failure(env, env.Undefined(), message,
                                "Error calling callback `" + std::string(name) + "`: " + message);
      }
      throw std::runtime_error(std::move(message));
    }
    return value.As<Napi::String>().Utf8Value();
  }

  // close(): ends the child; never throws (as the TS 7 channel), except
  // from inside one of this channel's callbacks.
  Napi::Value close(const Napi::CallbackInfo& info) {
    // The Buffers kept for replies to come go with the channel, not with
    // the JavaScript object, which may live on.
    reply_buffers_.release();
    try {
      core_->close();
    } catch (const std::logic_error& e) {
      throw Napi::Error::New(info.Env(), e.what());
    } catch (const std::exception& e) {
      // Never waits: Node's stderr may be a full pipe nobody reads.
      spinrpc::write_stderr_without_waiting(std::string("spinrpc: SyncRpcChannel.close(): ") + e.what() + "\n");
    }
    return info.Env().Undefined();
  }

  // stats(): the reader's counters and policy, keyed and ordered as
  // spinrpc-server's getChannelStats reply (for_each_stats_field), then
  // the big binary replies' Buffers (docs/NODE.md, "Large payloads").
  Napi::Value stats(const Napi::CallbackInfo& info) {
    const Napi::Env env = info.Env();
    Napi::Object out = Napi::Object::New(env);
    const auto set = [&](std::string_view name, const auto& value) {
      using Value = std::decay_t<decltype(value)>;
      const std::string key(name);
      if constexpr (std::is_same_v<Value, bool>) {
        out.Set(key, Napi::Boolean::New(env, value));
      } else if constexpr (std::is_same_v<Value, std::string_view>) {
        out.Set(key, Napi::String::New(env, value.data(), value.size()));
      } else {
        out.Set(key, Napi::Number::New(env, static_cast<double>(value)));
      }
    };
    for_each_stats_field(core_->stats(), set);
    set("reply_buffers_made_ahead", reply_buffers_.made_ahead());
    set("reply_buffers_used_ahead", reply_buffers_.used_ahead());
    return out;
  }

  Napi::Value last_bytes_sent(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->last_bytes_sent()));
  }
  Napi::Value last_bytes_received(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->last_bytes_received()));
  }
  Napi::Value collect_timing(const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), core_->collect_timing());
  }
  Napi::Value pid(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), core_->pid());
  }

  std::optional<ChannelCore> core_;  // set by the constructor unless it threw
  ReplyBuffers reply_buffers_;        // requestBinarySync's big replies
  napi_env env_ = nullptr;
  std::unordered_map<std::string, Napi::FunctionReference> callbacks_;
  // What a callback threw during the current request, if one did.
  Napi::Reference<Napi::Object> callback_failure_;  // {thrown: what the callback threw}
  std::string callback_failure_text_;
  std::string callback_failure_message_;  // the TS 7 channel's error for it
  CallbackFailureRule rule_ = CallbackFailureRule::request_returns;
  // Under the poison rule, after a failure: {error}, thrown by every request.
  Napi::Reference<Napi::Object> poisoned_;
};

}  // namespace

Napi::Function define_channel_class(Napi::Env env) { return Channel::define(env); }

}  // namespace spinrpc::node
