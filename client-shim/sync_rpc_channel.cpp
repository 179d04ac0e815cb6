#include "client-shim/sync_rpc_channel.h"

#include <signal.h>  // ::sigaction, SIGPIPE, SIGKILL, SIG_DFL, SIG_IGN

#include <memory>         // std::shared_ptr
#include <optional>       // std::optional
#include <stdexcept>      // std::logic_error, std::invalid_argument
#include <system_error>   // std::system_error
#include <unordered_map>  // std::unordered_map
#include <utility>        // std::move

#include "descriptor/pipe.h"
#include "descriptor/stderr_lines.h"
#include "descriptor/syscall.h"
#include "client-shim/child_exited.h"
#include "client-shim/child_process.h"
#include "channel/shm_switch.h"
#include "stream/shm_ring_linux.h"
#include "stream/timed_out.h"
#include "stream/fd_streams_posix.h"
#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"
#include "trace/trace_registry.h"

namespace spinrpc {
namespace {

// How long a child whose pipe reached EOF (or EPIPE) gets to be reaped
// before ChildExited says it still runs. On exit the kernel closes the
// child's fds moments before it becomes a zombie, so this is ample; a child
// that only closed its stdout must not hang the caller.
constexpr std::chrono::milliseconds kReapWait{100};

// Without this a write to a dead child kills the whole process. SIG_DFL is
// the only disposition we replace: a handler or SIG_IGN someone else chose
// is theirs.
void ignore_sigpipe_if_default() {
  struct sigaction current {};
  // Cannot fail for a valid signal number.
  ::sigaction(SIGPIPE, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

void close_quietly(SyncRpcChannel& channel) noexcept {
  try {
    channel.close();
  } catch (const std::exception& e) {
    // Never waits: the host's stderr may be a full pipe nobody reads.
    write_stderr_without_waiting(std::string("spinrpc: cannot close a SyncRpcChannel: ") + e.what() + "\n");
  }
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

}  // namespace

struct SyncRpcChannel::State {
  // Declared before `channel` so it is destroyed after it: our pipe ends
  // close first, then an unreaped child is killed and reaped.
  ChildProcess child;                // none for connect()
  std::optional<FrameChannel> channel;  // reset by close()
  std::string executable;            // as spawned, or "the server at PATH", for messages
  bool spawned = false;              // we own a child process
  SyncRpcOptions options;
  std::unordered_map<std::string, Callback, StringHash, std::equal_to<>> callbacks;
  std::string call_result;  // the last CallResponse payload (answer_call)
  bool in_request = false;  // a Request is open; callbacks may be running
  // With a request_timeout: time the open request spent in our callbacks,
  // which the deadline counts too (said when it passes).
  std::chrono::steady_clock::duration callback_time{};
  bool broken = false;      // an error other than RemoteError left the stream unknown
  bool closed = false;      // close() has run
  // The channel's stats when a timed-out request ended it, what stats()
  // reports from then until close(): the channel is gone, what it was on
  // is not.
  ChannelStats stats_at_timeout;
  std::shared_ptr<trace::Ring> trace;  // options.trace or SPINRPC_TRACE; null: no trace

  // Kills the child (or drops the connection) and throws TimedOut.
  [[noreturn]] void end_after_timeout(std::string_view method);
  // The spin policy from the options and the environment they name.
  SpinPolicy resolve_spin() const;
  // The trace ring, when options.trace or SPINRPC_TRACE asks for one
  // (open_channel hands it to the channel).
  void open_trace();
  // Sets up SIGPIPE and the channel over the connection's `streams`,
  // waiting by `spin` (resolve_spin()).
  void open_channel(Streams streams, SpinPolicy spin);
  // The streams' buffering: options.channel, and a pipe grown for big
  // replies when `made_in_pipe` (a pipe we created: BufferOptions::grow_read_pipe).
  BufferOptions stream_options(bool made_in_pipe) const;
  // The open or usable state, or std::logic_error saying why there is none.
  static State& usable(const std::unique_ptr<State>& state, const char* operation);
  // The one request loop.
  ByteView exchange(std::string_view method, ByteView payload, PayloadSink* sink);
  std::optional<FrameView> read_next(PayloadSink* sink);
  // Answers the Call and returns what it sent: CallResponse or CallError.
  MessageType answer_call(const FrameView& call);
  // answer_call with its spans: the Call, and the callback inside it.
  void answer_call_traced(const FrameView& call, trace::Ring& ring);
  void check_name(const char* what, std::string_view method, const FrameView& frame) const;
  [[noreturn]] void throw_child_exited(PeerClosed::Where where = PeerClosed::Where::between_frames);
};

namespace {

// Marks the channel busy for one request and, unless the request ended in a
// way that leaves the stream in step (a Response or an Error), broken.
class RequestScope {
 public:
  RequestScope(bool& in_request, bool& broken) noexcept : in_request_(in_request), broken_(broken) {
    in_request_ = true;
  }
  RequestScope(const RequestScope&) = delete;
  RequestScope& operator=(const RequestScope&) = delete;
  ~RequestScope() {
    in_request_ = false;
    if (!in_step_) broken_ = true;
  }
  void in_step() noexcept { in_step_ = true; }

 private:
  bool& in_request_;      // State::in_request
  bool& broken_;          // State::broken
  bool in_step_ = false;  // the reply was read whole
};

}  // namespace

SyncRpcChannel::State& SyncRpcChannel::State::usable(const std::unique_ptr<State>& state,
                                                     const char* operation) {
  const auto fail = [operation](const char* why) {
    throw std::logic_error(std::string("SyncRpcChannel::") + operation + ' ' + why);
  };
  if (!state) fail("on a moved-from channel");
  if (state->closed) fail("after close()");
  if (state->in_request) fail("from inside a callback: one request is open at a time");
  if (state->broken) fail("after an error left the channel unusable; close() it");
  return *state;
}

ByteView SyncRpcChannel::State::exchange(std::string_view method, ByteView payload, PayloadSink* sink) {
  trace::Ring* const ring = channel->trace();
  // The request's span: from here to its reply read (docs/TRACE.md#events).
  const auto sent_at = ring ? ring->now() : std::chrono::steady_clock::time_point{};
  const auto traced = [&](MessageType reply, ByteView reply_payload) {
    ring->span(trace::Kind::request, static_cast<std::uint8_t>(reply), sent_at, ring->last(), payload.size(),
               static_cast<std::uint32_t>(reply_payload.size()), ring->intern(method));
  };
  channel->write_frame(MessageType::Request, as_bytes(method), payload);
  // A big reply's memory is made ready while the server works.
  if (sink != nullptr) channel->prepare_while_waiting(*sink);
  // The server may send any number of Calls before its one Response or
  // Error (docs/PROTOCOL.md#exchange-rules).
  for (;;) {
    const std::optional<FrameView> frame = read_next(sink);
    // EOF between frames: the child exited or closed its stdout.
    if (!frame) throw_child_exited();
    switch (frame->type) {
      case MessageType::Response:
        check_name("response", method, *frame);
        if (ring) traced(frame->type, frame->payload);
        return frame->payload;
      case MessageType::Error:
        check_name("response", method, *frame);  // the TS 7 channel's word for an Error too
        if (ring) traced(frame->type, frame->payload);
        throw RemoteError(std::string(frame->payload_text()));
      case MessageType::Call:
        if (ring) {
          answer_call_traced(*frame, *ring);
        } else if (options.request_timeout.count() > 0) {
          const auto start = std::chrono::steady_clock::now();
          answer_call(*frame);
          callback_time += std::chrono::steady_clock::now() - start;
        } else {
          answer_call(*frame);
        }
        break;  // the Request is still open
      case MessageType::Request:
      case MessageType::CallResponse:
      case MessageType::CallError:
        // Only a client sends these; the stream can no longer be trusted.
        throw ProtocolError("unexpected " + std::string(to_string(frame->type)) +
                            " message (type " + std::to_string(static_cast<int>(frame->type)) +
                            ") from " + executable + " while the `" + std::string(method) +
                            "` request was open");
    }
  }
}

std::optional<FrameView> SyncRpcChannel::State::read_next(PayloadSink* sink) {
  try {
    return channel->try_read_frame(sink);
  } catch (const ProtocolError& e) {
    // The decoder's text names the byte; say whose bytes they were.
    throw ProtocolError(executable + " sent an invalid frame: " + e.what());
  }
}

void SyncRpcChannel::State::check_name(const char* what, std::string_view method,
                                       const FrameView& frame) const {
  if (frame.name_text() == method) return;
  throw ProtocolError(std::string("name mismatch for ") + what + ": expected `" +
                      std::string(method) + "`, got `" + std::string(frame.name_text()) + "`");
}

MessageType SyncRpcChannel::State::answer_call(const FrameView& call) {
  // No read happens until the answer is written, so call.name stays valid.
  const std::string_view name = call.name_text();
  const auto found = callbacks.find(name);
  if (found == callbacks.end()) {
    // docs/PROTOCOL.md#exchange-rules: the server is told which one is
    // missing, in libsyncrpc's and the TS 7 channel's words.
    const std::string message = "unknown callback: `" + std::string(name) +
                                "`. Please make sure to register it on the JavaScript side before invoking it.";
    channel->write_frame(MessageType::CallError, call.name, as_bytes(message));
    return MessageType::CallError;
  }
  std::string result;
  try {
    // The callback's span: from the end of the Call's read to its return or throw.
    const trace::ScopedSpan traced(channel->trace(), trace::Kind::handler, trace::kCallbackDetail, name);
    result = found->second(name, call.payload_text());
  } catch (const CallbackAborted&) {
    throw;  // the request ends here; the channel is broken (RequestScope)
  } catch (const std::exception& e) {
    // A failing callback fails the server's call, not this request; the
    // server decides what its handler makes of it.
    channel->write_frame(MessageType::CallError, call.name, as_bytes(e.what()));
    return MessageType::CallError;
  } catch (...) {
    const std::string message =
        "callback \"" + std::string(name) + "\" threw an exception not derived from std::exception";
    channel->write_frame(MessageType::CallError, call.name, as_bytes(message));
    return MessageType::CallError;
  }
  // Kept until the next Call: a big result is lent to the pipe, not
  // copied, and must outlive the write until the server has read it
  // (BufferOptions::LargeWrites::lend; its next message proves that).
  call_result = std::move(result);
  channel->write_frame(MessageType::CallResponse, call.name, as_bytes(call_result));
  return MessageType::CallResponse;
}

void SyncRpcChannel::State::answer_call_traced(const FrameView& call, trace::Ring& ring) {
  // Begins where the Call's read ended; the callback's end is read inside
  // (answer_call's send span starts there).
  const auto start = ring.last();
  const std::uint32_t name = ring.intern(call.name_text());
  const MessageType sent = answer_call(call);
  const auto end = ring.last();
  if (options.request_timeout.count() > 0) callback_time += end - start;
  ring.span(trace::Kind::call, static_cast<std::uint8_t>(sent), start, end, 0, 0, name);
}

void SyncRpcChannel::State::throw_child_exited(PeerClosed::Where where) {
  if (!spawned) throw PeerClosed(executable + " closed the connection", where);
  throw ChildExited(executable, child.try_wait_for(kReapWait), where);
}

void SyncRpcChannel::State::end_after_timeout(std::string_view method) {
  // The reply may still come, or half of it: the stream is out of step for
  // good, and a server that hangs must not outlive the request it hangs on.
  stats_at_timeout = channel->stats();
  channel.reset();
  // The last path component for a child, as ChildExited names it.
  const std::string_view name =
      spawned ? std::string_view(executable).substr(executable.rfind('/') + 1) : executable;
  std::string what = std::string(name) + " did not answer `" + std::string(method) + "` within " +
                     std::to_string(options.request_timeout.count()) + " ms";
  // The deadline counts our callbacks' time too: say how much it was, so
  // that a slow callback is not taken for a slow server.
  if (const auto in_callbacks = std::chrono::duration_cast<std::chrono::milliseconds>(callback_time);
      in_callbacks.count() > 0) {
    what += ", counting " + std::to_string(in_callbacks.count()) + " ms spent in this process's callbacks";
  }
  if (spawned) {
    child.kill(SIGKILL);
    child.wait();
    what += "; it was killed";
  } else {
    what += "; the connection was closed";
  }
  throw TimedOut(what);
}

void SyncRpcChannel::State::open_trace() {
  std::vector<std::string> warnings;
  const std::optional<TraceSetting> setting = resolve_trace_setting(
      options.trace, [this](const char* name) { return environment_value(options.environment, name); }, warnings);
  print_setting_warnings("spinrpc", warnings);
  if (!setting) return;
  const std::string_view name = std::string_view(executable).substr(executable.rfind('/') + 1);
  trace = trace::open_ring(trace::expand_path(setting->pattern),
                           setting->max_requests, "spinrpc client: " + std::string(name));
}

SpinPolicy SyncRpcChannel::State::resolve_spin() const {
  return resolve_spin_policy(options.spin,
                             [this](const char* name) { return environment_value(options.environment, name); });
}

BufferOptions SyncRpcChannel::State::stream_options(bool made_in_pipe) const {
  BufferOptions buffer = options.channel;
  buffer.grow_read_pipe = buffer.grow_read_pipe || made_in_pipe;
  return buffer;
}

void SyncRpcChannel::State::open_channel(Streams streams, SpinPolicy spin) {
  if (!options.keep_sigpipe_disposition) ignore_sigpipe_if_default();
  spin.peer_pid = child.pid() > 0 ? child.pid() : 0;  // a server we started
  ChannelOptions channel_options{options.channel, std::move(spin), trace};
  channel.emplace(std::move(streams), std::move(channel_options));
}

SyncRpcChannel::SyncRpcChannel(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}

SyncRpcChannel SyncRpcChannel::connect(const Endpoint& endpoint, SyncRpcOptions options) {
  auto state = std::make_unique<State>();
  state->executable = "the server at " + endpoint.path;
  state->options = std::move(options);
  SpinPolicy spin = state->resolve_spin();
  ConnectOptions connect_options;
  connect_options.buffer = state->stream_options(/*made_in_pipe=*/false);
  connect_options.spinning = spin.budget.count() > 0;
  // With a request deadline the writes are bounded too (as a spawned child's).
  connect_options.bounded_writes = state->options.request_timeout.count() > 0;
  connect_options.timeout = state->options.connect_timeout;
  Streams streams = spinrpc::connect(endpoint, connect_options);
  state->open_trace();
  state->open_channel(std::move(streams), std::move(spin));
  state->channel->set_transport_reason(std::string(endpoint.kind == Endpoint::Kind::pipe ? "socket" : "FIFOs") +
                                       ": shared memory is offered only to a server this client spawns");
  return SyncRpcChannel(std::move(state));
}

SyncRpcChannel::SyncRpcChannel(const std::string& executable, const std::vector<std::string>& args,
                               SyncRpcOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.executable = executable;
  s.options = options;
  s.spawned = true;

  // The pipes are part of starting the child: a failure to make them
  // (EMFILE, ENFILE) is a SpawnError, as Node's spawn reports it.
  const auto spawn_pipe = [&] {
    try {
      return make_pipe();
    } catch (const std::system_error& e) {
      throw SpawnError(e.code().value(), executable, args);
    }
  };
  PipePair to_child = spawn_pipe();    // child's stdin
  PipePair from_child = spawn_pipe();  // child's stdout
  // The shared-memory offer: made before the spawn, taken or not after the
  // first reply. A ring that cannot be made leaves the channel on pipes.
  std::shared_ptr<SharedRing> ring;
  std::string transport_reason;
  if (client_offers_shm(s.options.shared_memory,
                        [&](const char* name) { return environment_value(s.options.environment, name); })) {
    try {
      ring = std::make_shared<SharedRing>(SharedRing::create());
    } catch (const std::exception& e) {
      transport_reason = std::string("pipes: cannot make the shared-memory ring: ") + e.what();
    }
  } else {
    transport_reason = "pipes: shared memory is off (SPINRPC_SHM=off or the shared_memory option)";
  }
  // We read the child's stdout with read(2), so a spinrpc-server there may
  // lend its big Responses to the pipe instead of copying them in (what
  // other servers make of the variable: nothing); and a client that spins
  // says so (docs/PLACEMENT.md#two-spinners-on-one-cpu).
  SpinPolicy spin = s.resolve_spin();
  s.open_trace();
  // A trace asked for by the option is the server's too, unless its
  // environment says otherwise (docs/TRACE.md).
  std::vector<std::string_view> add_env(entries_for_started_server(spin.budget.count() > 0).begin(),
                                        entries_for_started_server(spin.budget.count() > 0).end());
  const std::string trace_entry = s.options.trace ? std::string(kTraceVariable.name) + "=" + *s.options.trace : "";
  if (!trace_entry.empty()) add_env.push_back(trace_entry);
  s.child = ChildProcess::spawn(executable, args, to_child.read_end.get(), from_child.write_end.get(), add_env,
                                s.options.environment, ring ? ring->fd() : -1);
  if (ring) ring->close_fd();  // the child has its copy; the mapping stays
  // The child has its own copies now. Ours must go at once: while this
  // process holds the write end of the child's stdout, the child's death
  // never shows as EOF.
  to_child.read_end.reset();
  from_child.write_end.reset();
  // With a request deadline the writes must be bounded too: a server that
  // stops reading would otherwise hold a large request's write forever.
  // The write end is of a pipe we made, an open file description of our
  // own, so its O_NONBLOCK touches nothing of anyone else's.
  if (s.options.request_timeout.count() > 0) set_nonblocking(to_child.write_end.get(), true);
  s.open_channel(fd_streams(std::move(from_child.read_end), std::move(to_child.write_end),
                            s.stream_options(/*made_in_pipe=*/true), spin.budget.count() > 0),
                 std::move(spin));
  if (ring) {
    s.channel->switch_at_first_reply(shm_switch(std::move(ring), StreamSwitch::Side::client),
                                     StreamSwitch::Side::client);
  } else {
    s.channel->set_transport_reason(std::move(transport_reason));
  }
}

SyncRpcChannel::SyncRpcChannel(SyncRpcChannel&&) noexcept = default;

SyncRpcChannel& SyncRpcChannel::operator=(SyncRpcChannel&& other) noexcept {
  if (this != &other) {
    close_quietly(*this);
    state_ = std::move(other.state_);
  }
  return *this;
}

SyncRpcChannel::~SyncRpcChannel() { close_quietly(*this); }

std::string SyncRpcChannel::request(std::string_view method, std::string_view payload) {
  return std::string(as_text(request_bytes(method, as_bytes(payload))));
}

std::vector<std::byte> SyncRpcChannel::request_binary(std::string_view method, ByteView payload) {
  const ByteView reply = request_bytes(method, payload);
  return {reply.begin(), reply.end()};
}

ByteView SyncRpcChannel::request_bytes(std::string_view method, ByteView payload, PayloadSink* sink) {
  State& s = State::usable(state_, "request");
  RequestScope scope(s.in_request, s.broken);
  try {
    if (s.options.request_timeout.count() > 0) {
      s.channel->set_deadline(std::chrono::steady_clock::now() + s.options.request_timeout);
      s.callback_time = {};
    }
    const ByteView reply = s.exchange(method, payload, sink);
    scope.in_step();
    return reply;
  } catch (const TimedOut&) {
    s.end_after_timeout(method);
  } catch (const RemoteError&) {
    // The server answered with Error and serves on (tsgo does).
    scope.in_step();
    throw;
  } catch (const ChildExited&) {
    throw;
  } catch (const PeerClosed& e) {
    // EPIPE on a write or EOF inside a frame: the child is gone or going,
    // and how it ended is the useful part.
    s.throw_child_exited(e.where());
  }
}

void SyncRpcChannel::register_callback(std::string name, Callback callback) {
  if (!state_) throw std::logic_error("SyncRpcChannel::register_callback on a moved-from channel");
  // Replacing the std::function that is running would destroy it mid-call;
  // adding another is safe (an unordered_map's nodes never move).
  if (state_->in_request && state_->callbacks.contains(name)) {
    throw std::logic_error("SyncRpcChannel::register_callback from inside a callback: \"" + name +
                           "\" is registered already and may be the one running");
  }
  if (!callback) {
    throw std::invalid_argument("SyncRpcChannel::register_callback: empty callback for \"" + name +
                                "\"");
  }
  state_->callbacks.insert_or_assign(std::move(name), std::move(callback));
}

int SyncRpcChannel::close() {
  if (!state_ || state_->closed) return -1;
  State& s = *state_;
  // Destroying the channel under the request loop would leave it reading freed memory.
  if (s.in_request) throw std::logic_error("SyncRpcChannel::close from inside a callback");
  s.closed = true;
  if (!s.spawned) {
    s.channel.reset();
    if (s.trace) trace::close_ring(s.trace);
    return 0;
  }
  // Closing the child's stdin is the polite request to stop: a sync API server
  // exits 0 on EOF between messages (docs/PROTOCOL.md#end-of-input). Our read
  // end goes too, so a child stuck writing a reply that nobody will read gets
  // EPIPE instead of sitting out the grace period.
  s.channel.reset();
  if (!s.child.try_wait_for(s.options.close_grace)) s.child.kill(SIGKILL);
  const int status = s.child.wait();
  // After the child: its own trace is written by then, and ours does not
  // eat into its close grace.
  if (s.trace) trace::close_ring(s.trace);
  return status;
}

void SyncRpcChannel::kill_child() {
  if (!state_ || !state_->spawned || state_->child.pid() < 0) return;
  state_->child.kill(SIGKILL);
  state_->child.wait();
}

ChannelStats SyncRpcChannel::stats() const {
  if (!state_ || state_->closed) return {};
  if (!state_->channel) return state_->stats_at_timeout;
  return state_->channel->stats();
}

int SyncRpcChannel::pid() const noexcept { return state_ ? state_->child.pid() : -1; }

}  // namespace spinrpc
