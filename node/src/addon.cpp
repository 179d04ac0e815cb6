// The Node-API addon: one JavaScript class, SyncRpcChannel, with the surface
// of the TS 7 channel (@typescript/native-preview's dist/api/syncChannel.js)
// and of libsyncrpc, over ChannelCore (docs/NODE.md).
//
// Everything runs on the calling JavaScript thread: a request blocks it
// (spinning first, by the shim's policy) and the server's Calls run the
// registered JavaScript callbacks inline. No libuv handle is created, so a
// channel never keeps Node alive; channels left open are ended when their
// environment is torn down, when index.mjs sees the process exit, or when
// they are garbage-collected.

#include <napi.h>
#include <signal.h>  // sigabbrev_np
#include <string.h>  // strerrorname_np
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG

#include <algorithm>      // std::erase_if, std::min
#include <chrono>         // std::chrono::milliseconds
#include <cerrno>         // EACCES, EAGAIN, EMFILE, ENFILE, ENOENT
#include <cmath>          // std::isfinite, std::floor
#include <cstdint>        // std::uint64_t
#include <span>           // std::span
#include <stdexcept>      // std::runtime_error, std::logic_error
#include <exception>      // std::exception_ptr
#include <mutex>          // std::mutex, std::lock_guard
#include <optional>       // std::optional
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <type_traits>    // std::decay_t, std::is_same_v
#include <system_error>   // std::system_error
#include <unordered_map>  // std::unordered_map
#include <utility>        // std::pair
#include <vector>         // std::vector

#include "channel/payload_sink.h"
#include "wait/spin_config.h"
#include "descriptor/stderr_lines.h"
#include "wait/timed_out.h"
#include "client-shim/child_exited.h"
#include "client-shim/child_process.h"
#include "node/src/channel_core.h"
#include "node/src/page_populator.h"
#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"

namespace spinrpc::node {
namespace {

// ── Channels to end at environment teardown ──────────────────────────

// Every live ChannelCore with the environment (main thread or worker) that
// owns it. Process-wide and never destroyed, so a finalizer that runs late
// in teardown still finds it.
struct LiveChannels {
  std::mutex mutex;
  std::vector<std::pair<napi_env, ChannelCore*>> entries;

  static LiveChannels& get() {
    static auto* live = new LiveChannels;
    return *live;
  }
  void add(napi_env env, ChannelCore* core) {
    const std::lock_guard lock(mutex);
    entries.emplace_back(env, core);
  }
  void remove(ChannelCore* core) {
    const std::lock_guard lock(mutex);
    std::erase_if(entries, [core](const auto& e) { return e.second == core; });
  }
  // Ends every channel of `env` that is still open.
  void end_all(napi_env env) {
    std::vector<ChannelCore*> mine;
    {
      const std::lock_guard lock(mutex);
      for (const auto& [owner, core] : entries) {
        if (owner == env) mine.push_back(core);
      }
    }
    for (ChannelCore* core : mine) core->end_now();
  }
};

// ── C++ errors as JavaScript errors ──────────────────────────────────

// "SIGKILL" for 9, as Node's ChildProcess.signalCode names signals.
std::string signal_name(int signal) {
  if (const char* abbrev = ::sigabbrev_np(signal)) return std::string("SIG") + abbrev;
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
  const char* name = ::strerrorname_np(err);
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

// The exception being handled, as the JavaScript error the caller sees:
// the message is what() (the server's own text for an Error reply, as in
// the TS 7 channel); `code` says which kind, and a dead child's exit code or
// signal are properties too.
// `suffix` is appended to the message.
Napi::Error to_js_error(Napi::Env env, std::exception_ptr thrown, const std::string& suffix = {}) {
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
    const char* name = e.code().category() == std::generic_category() ? ::strerrorname_np(err)
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

// What the TS 7 channel sends as CallError for a throwing callback:
// String(e instanceof Error ? e.message : e).trim(), computed with the
// realm's own Error, String and String.prototype.trim, so that a Symbol
// ("Symbol(x)"), an object with a `message` that is no Error ("[object
// Object]") and Unicode spaces come out as there.
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

// ── Arguments ────────────────────────────────────────────────────────

std::string string_argument(const Napi::Value& value, const char* what) {
  if (!value.IsString()) {
    throw Napi::TypeError::New(value.Env(),
                               std::string(what) + " must be a string, got " + type_name(value.Type()));
  }
  return value.As<Napi::String>().Utf8Value();
}

// The largest frame the binding takes by default: a bin32 or str32
// payload's most (4 GiB - 1) and the frame's header and name (4 KiB is
// more than a method name needs), so that only maxMessageBytes refuses one.
constexpr std::size_t kMaxReplyBytes = (std::size_t{4} << 30) + (std::size_t{4} << 10);

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

std::string spawn_argument(const Napi::Value& value, const std::string& name, const char* what) {
  return checked_spawn_text(value, string_argument(value, what), name);
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

// What a request does after one of its callbacks failed (threw, returned
// no string, or was unregistered when the server called it): the
// `callbackFailure` option. Under every rule the server gets CallError and
// the request reads its reply.
enum class CallbackFailureRule {
  kContinue,  // the request returns (the default)
  kThrow,     // TS 7.0's channel: the request throws "Error calling callback …"
  kPoison,    // TS 7.1's: that, and every later request throws the same error
};

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
        rule = CallbackFailureRule::kContinue;
      } else if (text == "throw") {
        rule = CallbackFailureRule::kThrow;
      } else if (text == "poison") {
        rule = CallbackFailureRule::kPoison;
      } else {
        throw Napi::TypeError::New(value.Env(),
                                   "SyncRpcChannel: option callbackFailure must be \"continue\", \"throw\" or \"poison\"");
      }
    } else if (key == "maxMessageBytes") {
      const long long bytes = count_option(v, "maxMessageBytes");
      if (bytes == 0) throw Napi::TypeError::New(value.Env(), "SyncRpcChannel: option maxMessageBytes must be positive");
      options.channel.limits.max_message_bytes = static_cast<std::size_t>(bytes);
    } else {
      throw Napi::TypeError::New(value.Env(),
                                 "SyncRpcChannel: unknown option " + key +
                                     " (collectTiming, spinUs, adaptive, placement, "
                                     "requestTimeoutMs, closeGraceMs, maxMessageBytes, env, callbackFailure)");
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

// ── The class ────────────────────────────────────────────────────────

// The sink requestBinarySync gives the channel: a big Response payload is
// read straight into the Buffer handed back to JavaScript, instead of into
// the channel's buffer and then copied (docs/NODE.md, "Large payloads").
// The Buffer comes from Node's allocator, as the TS 7 channel's does, and
// its pages are populated before the read (PagePopulator): while the
// server works on the request, when the replies come in one size (a
// Buffer made ahead for the next one), else right before the read. One
// per channel; begin() starts each request.
class ReplyBuffers final : public PayloadSink {
 public:
  /// Replies made ahead for: PayloadSink::kMinBytes up to this. A Buffer
  /// made ahead is kept until the next big reply. Bigger ones are not made
  /// ahead: a Buffer made while the last reply's garbage is still
  /// uncollected is fresh memory every time, and its populate (8-11 ms per
  /// 16 MiB) outlasts the server's turn, so each 16 MiB binary echo faulted
  /// in 4,096 pages; allocated when the reply comes, the Buffer mostly
  /// reuses a freed one (docs/NODE.md, "The reply's pages").
  static constexpr std::size_t kMaxAheadBytes = std::size_t{1} << 20;

  /// At most this much of a reply's Buffer is populated before the read;
  /// the rest is faulted in by the read itself, as it arrives. The length
  /// is only what the server announced: one that announces 4 GiB and dies
  /// made this process write 4 GiB of memory over 12 s before the read
  /// could see the EOF. The bound is what the session's scratch buffers
  /// may keep anyway (ChannelCore::kRetainedScratchBytes).
  static constexpr std::size_t kMaxPopulatedBytes = ChannelCore::kRetainedScratchBytes;

  void begin(napi_env env) noexcept {
    env_ = env;
    value_ = nullptr;
    data_ = nullptr;
  }

  std::span<std::byte> payload_memory(MessageType type, std::size_t bytes) override {
    if (type != MessageType::Response) return {};  // a Call's payload goes to a callback as text
    if (ahead_ != nullptr && ahead_memory_.size() == bytes &&
        napi_get_reference_value(env_, ahead_, &value_) == napi_ok && value_ != nullptr) {
      populator_.finish();
      data_ = ahead_memory_.data();
      ++used_ahead_;
    } else {
      void* data = nullptr;
      if (napi_create_buffer(env_, bytes, &data, &value_) != napi_ok) {
        throw std::runtime_error("cannot allocate a Buffer of " + std::to_string(bytes) + " bytes for the reply");
      }
      data_ = static_cast<std::byte*>(data);
      PagePopulator now;
      now.reset({data_, std::min(bytes, kMaxPopulatedBytes)});
      now.finish();
    }
    drop_ahead();
    // The last big reply stays referenced until the next one is made, as
    // the TS 7 channel keeps its last payload (`_msgPayload`). Without it
    // the garbage collector freed every reply at once, glibc gave the heap
    // top back to the kernel, and each new reply was fresh pages: 352 brk
    // calls in 360 back-to-back 1 MiB binary echoes against 57 with it
    // (strace), and after 100 echoes the p50 1.18 ms against 0.57
    // (docs/NODE.md, "Large payloads").
    drop_last();
    if (napi_create_reference(env_, value_, 1, &last_) != napi_ok) last_ = nullptr;
    // Two big replies of one size in a row: the next is likely the same
    // (an echo after an echo, a page of fixed-size records after another).
    // Sizes that vary (source files) get no Buffer made ahead, which would
    // be garbage for the collector each time.
    if (bytes == last_bytes_ && bytes <= kMaxAheadBytes) make_ahead(bytes);
    last_bytes_ = bytes;
    return {data_, bytes};
  }

  // While the server works on the next request: populate the Buffer made
  // ahead for its reply, a step at a time.
  bool prepare_step() noexcept override { return populator_.step(); }
  bool has_preparation() const noexcept override { return !populator_.done(); }

  // The Buffer, when `reply` is the payload read into it; else null.
  napi_value holding(ByteView reply) const noexcept {
    return data_ != nullptr && reply.data() == data_ ? value_ : nullptr;
  }

  // A Buffer of `bytes` for the next reply, populated while its request
  // is worked on. Failing to make it only means the next reply gets a new
  // one, as without it.
  void make_ahead(std::size_t bytes) noexcept {
    napi_value value = nullptr;
    void* data = nullptr;
    if (napi_create_buffer(env_, bytes, &data, &value) != napi_ok ||
        napi_create_reference(env_, value, 1, &ahead_) != napi_ok) {
      ahead_ = nullptr;
      return;
    }
    ahead_memory_ = {static_cast<std::byte*>(data), bytes};
    populator_.reset(ahead_memory_);
    ++made_ahead_;
  }

  // Lets the Buffer made ahead go (used, or of another size).
  void drop_ahead() noexcept {
    if (ahead_ != nullptr) napi_delete_reference(env_, ahead_);
    ahead_ = nullptr;
    ahead_memory_ = {};
    populator_.reset({});
  }

  // Lets the last reply's Buffer go (a newer one is kept).
  void drop_last() noexcept {
    if (last_ != nullptr) napi_delete_reference(env_, last_);
    last_ = nullptr;
  }

  // Lets both go (the channel is closed or going).
  void release() noexcept {
    drop_ahead();
    drop_last();
  }

  // For stats(): Buffers made ahead, and those a reply was read into.
  std::uint64_t made_ahead() const noexcept { return made_ahead_; }
  std::uint64_t used_ahead() const noexcept { return used_ahead_; }

 private:
  napi_env env_ = nullptr;
  napi_value value_ = nullptr;  // this request's reply Buffer
  std::byte* data_ = nullptr;
  std::size_t last_bytes_ = 0;  // the last big reply's size
  napi_ref ahead_ = nullptr;    // a Buffer for the next reply, made ahead
  napi_ref last_ = nullptr;     // the last big reply's Buffer
  std::span<std::byte> ahead_memory_;
  PagePopulator populator_;     // over ahead_memory_ (empty without it)
  std::uint64_t made_ahead_ = 0;
  std::uint64_t used_ahead_ = 0;
};

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
    // The TS 7 channel takes any reply a Buffer can hold; the shim's 256
    // MiB default (protocol/frame.h) refused a 260 MiB reply from tsgo that
    // it read in 0.5 s. Any MessagePack frame here, unless lowered.
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
      if (rule_ != CallbackFailureRule::kContinue && !callback_failure_.IsEmpty()) {
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
      if (rule_ != CallbackFailureRule::kContinue) {
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
    if (rule_ == CallbackFailureRule::kPoison) {
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
    if (rule_ != CallbackFailureRule::kContinue && !callback_failure_.IsEmpty()) {
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
    // napi_call_function itself, not FunctionReference::Call: when the
    // engine stops the callback (a worker's process.exit() or terminate(),
    // a vm timeout), node-addon-api would wrap what it left pending in an
    // Error, which needs JavaScript to run, and abort the process
    // ("FATAL ERROR: Error::Error napi_define_properties"; found by a
    // break-it pass).
    napi_value argv[2] = {Napi::String::New(env, name.data(), name.size()),
                          Napi::String::New(env, payload.data(), payload.size())};
    napi_value result = nullptr;
    if (napi_call_function(env, env.Undefined(), callback.Value(), 2, argv, &result) != napi_ok) {
      napi_value thrown = nullptr;
      bool pending = false;
      napi_is_exception_pending(env, &pending);
      if (pending) napi_get_and_clear_last_exception(env, &thrown);
      // Node-API 8 references objects only: what was thrown (a primitive
      // too) is kept in a holder object's `thrown`. While the engine stops
      // JavaScript, that fails (or nothing was thrown at all): the request
      // ends here, with no JavaScript value made, and the channel is broken.
      napi_value holder = nullptr;
      if (!pending || napi_create_object(env, &holder) != napi_ok ||
          napi_set_named_property(env, holder, "thrown", thrown) != napi_ok) {
        throw CallbackAborted("callback `" + std::string(name) + "` was stopped by the JavaScript engine");
      }
      // CallError with the TS 7 channel's text; the request goes on and the
      // server decides what the failure means (the rule decides what the
      // request then throws).
      std::string message = thrown_message(env, Napi::Value(env, thrown));
      if (callback_failure_.IsEmpty()) {
        record_callback_failure(env, thrown, "callback `" + std::string(name) + "` threw: " + message,
                                "Error calling callback `" + std::string(name) + "`: " + message);
      }
      throw std::runtime_error(std::move(message));
    }
    const Napi::Value value(env, result);
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
  CallbackFailureRule rule_ = CallbackFailureRule::kContinue;
  // Under the poison rule, after a failure: {error}, thrown by every request.
  Napi::Reference<Napi::Object> poisoned_;
};

// endAll(): ends this environment's open channels (index.mjs, on 'exit').
Napi::Value end_all(const Napi::CallbackInfo& info) {
  LiveChannels::get().end_all(info.Env());
  return info.Env().Undefined();
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("SyncRpcChannel", Channel::define(env));
  exports.Set("endAll", Napi::Function::New<end_all>(env, "endAll"));
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
