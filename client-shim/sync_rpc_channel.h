#pragma once

#include <chrono>       // std::chrono::milliseconds
#include <functional>   // std::function
#include <memory>       // std::unique_ptr
#include <optional>     // std::optional
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "wait/channel_stats.h"
#include "channel/frame_channel.h"
#include "settings/settings.h"
#include "protocol/frame.h"
#include "transport/endpoint.h"

namespace spinrpc {

/// A client callback: (callback name, Call payload) -> CallResponse payload.
/// Throwing sends CallError with what() as the message, and the request
/// goes on; throwing CallbackAborted ends the request instead. Same shape
/// as libsyncrpc's registerCallback.
using Callback = std::function<std::string(std::string_view name, std::string_view payload)>;

/// Thrown by a callback that cannot answer and must not let the request go
/// on: the request throws it on unchanged, the server's Call stays
/// unanswered, and the channel is unusable from then on (close() ends the
/// child). The Node binding throws it when the JavaScript engine stops a
/// callback (a worker's process.exit() or terminate(), a vm timeout), where
/// no more JavaScript may run in that request.
class CallbackAborted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How a SyncRpcChannel spawns and talks to its child.
struct SyncRpcOptions {
  static FrameOptions lending() {
    FrameOptions options;
    options.large_writes = BufferOptions::LargeWrites::lend;
    return options;
  }
  /// Buffering and frame limits of the channel to the server. Payloads of
  /// 64 KiB or more are lent to a pipe (FIFO or a spawned child's stdin)
  /// rather than copied (BufferOptions::LargeWrites::lend): a
  /// request's payload must not change until its reply has come, which a
  /// caller blocked in request() cannot do anyway. The pipe a spawned
  /// child's replies come through grows (up to 1 MiB) once a reply bigger
  /// than it arrives, whatever grow_read_pipe says here
  /// (BufferOptions::grow_read_pipe; docs/NODE.md, "tsgo's big replies").
  FrameOptions channel = lending();
  /// Spin budget and adaptive rule for waiting on the server's replies
  /// (docs/SPIN.md#settings). Unset fields fall back to TSGO_SYNC_SPIN_US and
  /// TSGO_SYNC_SPIN_ADAPTIVE, then to the defaults (100 µs, adaptive; 0 µs
  /// with fewer than 2 CPUs), resolved once in the constructor. A negative
  /// spin_us is reported as one line on stderr and ignored. spin.placement
  /// (else SPINRPC_PLACEMENT, else auto) lets the shim keep the other CPUs
  /// busy for up to the budget after each request, when that measurably
  /// gets a server that blocks in read (tsgo) woken on the shim's CPU; it
  /// then runs one extra thread, asleep between bursts (docs/PLACEMENT.md).
  /// It never changes the process's CPU affinity, only that thread's.
  SpinOverrides spin;
  /// Move the messages to a spawned spinrpc-server into shared memory
  /// (docs/SHARED-MEMORY.md): the child is offered a sealed memfd as fd 3
  /// and SPINRPC_SHM=fd:3,parent:<our pid>,inode:…, and the channel moves
  /// onto it after the first reply if the server took it; any other server
  /// (tsgo), and a spinrpc-server that is not our own child (behind a
  /// wrapper), stays on its pipes, the bytes on them unchanged. Unset: SPINRPC_SHM decides (off:
  /// no; the default: offer). Only the constructor that spawns offers.
  std::optional<bool> shared_memory;
  /// Write a trace of this channel's requests to this file (Chrome
  /// trace-event JSON, docs/TRACE.md): at close(), or at exit if still
  /// open. "%p" becomes the pid, "%%" a "%"; without "%p" the pid is added
  /// ("t.json": "t.<pid>.json"). Unset: SPINRPC_TRACE decides (in
  /// `environment` when that is set); empty: no trace. A spawned child gets
  /// SPINRPC_TRACE set to the same pattern unless its environment has one,
  /// so a spinrpc-server traces its side too, into a file of its own.
  /// SPINRPC_TRACE_MAX: how many requests the trace keeps.
  std::optional<std::string> trace;
  /// The child's environment, as "NAME=value" entries; std::nullopt (the
  /// default): this process's. When set, it is also where the unset spin
  /// settings above are looked up (TSGO_SYNC_SPIN_US, ...), so both ends
  /// read the same values. PATH for finding a bare executable name is
  /// still this process's. Only the constructor that spawns uses it; the
  /// Node binding passes a worker thread's process.env here.
  std::optional<std::vector<std::string>> environment;
  /// close(): how long the child may take to exit after its stdin closes
  /// before it is sent SIGKILL, in ms.
  std::chrono::milliseconds close_grace{2000};
  /// Leave SIGPIPE alone. By default constructing a channel sets SIGPIPE to
  /// SIG_IGN if it is at SIG_DFL (as Node and Rust programs run), so a dead
  /// child is a ChildExited exception, not the death of this process. The
  /// child always starts with SIGPIPE at SIG_DFL, whatever this process set.
  bool keep_sigpipe_disposition = false;
  /// Per-request deadline, in ms; 0 = none. A request whose Response or
  /// Error has not arrived this long after it was sent (the client's own
  /// callbacks' time included) throws TimedOut (stream/timed_out.h) and the
  /// child is killed (SIGKILL) and reaped, or the connection closed. Both
  /// the wait for the reply and the writing of the request are bounded (a
  /// server that stops reading cannot hold a large request's write).
  std::chrono::milliseconds request_timeout{0};
  /// connect(): how long to keep retrying while the server is not
  /// listening yet, in ms.
  std::chrono::milliseconds connect_timeout{5000};
};

/// The child process is gone. what() names the executable and its exit
/// status or signal ("spinrpc-server exited with status 1",
/// "tsgo was killed by signal 9"). Defined in client-shim/child_exited.h.
class ChildExited;

/// The C++ counterpart of libsyncrpc's SyncRpcChannel: spawns an executable
/// speaking the sync API on its stdin/stdout (stderr is inherited) and sends
/// it one Request at a time. Calls that arrive while a Request is open are
/// answered inline by the registered callbacks (CallError for an unknown
/// name or a callback that throws).
///
/// Errors: RemoteError (protocol/remote_error.h) for the server's Error
/// reply (what() is its message); ProtocolError for bytes that break the
/// framing, a reply named for another method, or a message type the server
/// must not send; ChildExited (a PeerClosed) when the child dies or closes
/// its output: the child is then given about 100 ms to be reaped, and
/// what() says how it ended or that it still runs; TimedOut past
/// SyncRpcOptions::request_timeout; std::system_error for OS failures
/// (spawn included). After any error but RemoteError the channel
/// is unusable: further requests throw std::logic_error; close() it.
///
/// WARNING: one thread at a time; callbacks run on the requesting thread and
/// must not call request() or close() on the same channel, nor
/// register_callback() for a name registered already (std::logic_error);
/// registering a new name from inside a callback is fine. With SIGCHLD set
/// to SIG_IGN, or something else reaping the child, close() throws
/// std::system_error (ECHILD: the exit status is lost) and the child is
/// never signalled afterwards (see client-shim/child_process.h).
class SyncRpcChannel {
 public:
  /// Spawns `executable` with `args` as Node's child_process.spawn does
  /// (ChildProcess::spawn: searched in the PATH of the child's environment
  /// if it has no '/'). The child gets close-on-exec pipes as stdin and
  /// stdout, our stderr, and nothing else of ours. Throws SpawnError (a
  /// std::system_error) naming `executable` if it cannot be started: ENOENT
  /// when it is not found, EACCES when it cannot be run, EMFILE/ENFILE when
  /// no descriptor is left for the pipes.
  SyncRpcChannel(const std::string& executable, const std::vector<std::string>& args,
                 SyncRpcOptions options = {});
  /// Connects to a server already listening at `endpoint`
  /// (transport/endpoint.h): `Endpoint::pipe(PATH)` for `spinrpc-server
  /// --pipe PATH` or `tsgo --api --pipe PATH` (a Unix domain socket), or
  /// `Endpoint::fifos(TO_SERVER, FROM_SERVER)` for `spinrpc-server
  /// --fifo-in TO_SERVER --fifo-out FROM_SERVER`; retrying up to
  /// options.connect_timeout while the server is not there yet. There is
  /// no child: a server that goes away is a PeerClosed naming the path,
  /// close() just closes the connection, pid() is -1. Shared memory is
  /// never offered (only a child we spawn may take it). Throws
  /// std::system_error naming the path.
  static SyncRpcChannel connect(const Endpoint& endpoint, SyncRpcOptions options = {});

  SyncRpcChannel(SyncRpcChannel&&) noexcept;
  /// Closes this channel's child first (errors swallowed), then takes over.
  SyncRpcChannel& operator=(SyncRpcChannel&&) noexcept;
  /// Calls close(), swallowing its errors.
  ~SyncRpcChannel();

  /// Sends Request(method, payload); returns the Response payload as text.
  /// Blocks until the reply arrives, or throws TimedOut once
  /// options.request_timeout passes (none by default); errors as for the class.
  std::string request(std::string_view method, std::string_view payload);
  /// Sends Request(method, payload); returns the Response payload as bytes.
  std::vector<std::byte> request_binary(std::string_view method, ByteView payload);
  /// The zero-copy form both of the above forward to: the returned view
  /// points into the channel's buffer and is valid until the next request
  /// or close(). Allocates nothing in steady state (no Calls, and a reply
  /// that fits the buffer grown so far). With a `sink`, a big payload of a
  /// frame the sink takes (it is told the frame's type) is read into the
  /// sink's memory instead, and the view points there (FrameChannel::
  /// try_read_frame).
  ByteView request_bytes(std::string_view method, ByteView payload, PayloadSink* sink = nullptr);

  /// Registers (or replaces) the callback answering Calls named `name`.
  /// Throws std::invalid_argument for an empty callback, std::logic_error
  /// from inside a callback.
  void register_callback(std::string name, Callback callback);

  /// Ends the child: closes its stdin (a sync API server exits on EOF) and
  /// our end of its stdout, waits up to options.close_grace, then SIGKILLs
  /// it, and reaps it. Blocks for at most close_grace plus the time the
  /// kernel takes to end a killed process. Idempotent. Returns the child's
  /// wait status (as from waitpid; 0 for a clean exit), also when a
  /// ChildExited already reaped it, or -1 if it was already closed.
  /// Throws std::system_error if waitpid or kill fails, std::logic_error
  /// from inside a callback.
  int close();

  /// Kills the child (SIGKILL) and reaps it now, leaving the channel as it
  /// is: allowed from inside a callback, where close() is not. A request in
  /// progress then ends with ChildExited, and close() returns the child's
  /// wait status. For a process that ends while a callback runs (the Node
  /// binding, process.exit() there): no child is left behind, not even as a
  /// zombie for an init that does not reap. Nothing without a child, or
  /// once it is reaped. Throws std::system_error if kill or waitpid fails.
  void kill_child();

  /// The child's pid until it is reaped (by close(), or when ChildExited
  /// reports its end); -1 after.
  int pid() const noexcept;

  /// The reader's spin counters and policy so far (docs/SPIN.md#counters); all
  /// zero after close(). After a request that timed out (the channel ended,
  /// the child killed), what they were at that moment, transport included.
  ChannelStats stats() const;

 private:
  struct State;
  explicit SyncRpcChannel(std::unique_ptr<State> state) noexcept;
  std::unique_ptr<State> state_;
};

}  // namespace spinrpc
