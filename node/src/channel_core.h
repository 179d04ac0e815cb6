#pragma once

#include <cstddef>      // std::byte, std::size_t
#include <memory>       // std::unique_ptr
#include <span>         // std::span
#include <stdexcept>    // std::logic_error
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "client-shim/sync_rpc_channel.h"

namespace spinrpc::node {

/// The part of the Node.js binding that knows nothing of Node: one
/// SyncRpcChannel plus what the JavaScript surface adds to it (the
/// collectTiming byte counts, the "closed" state of the TS 7 channel, an
/// end for process exit) and reusable buffers the addon encodes JavaScript
/// strings into. node/src/addon.cpp wraps one per JavaScript object;
/// tests/node/ drives it directly (docs/NODE.md, "How it is built").
///
/// No heap allocation per request in steady state: the reply is a view
/// into the channel's buffer, and the scratch buffers only grow (up to
/// kRetainedScratchBytes; a bigger one is given back after its request).
///
/// WARNING: one thread at a time, as SyncRpcChannel.
class ChannelCore {
 public:
  /// A scratch buffer grown beyond this for one big payload is released
  /// after that request; the channel's read buffer keeps the same bound
  /// (the shim's default is 16 MiB). Twice that default, so a session that
  /// moves 16 MiB messages (a big source file for the TS API) reuses its
  /// buffers instead of faulting in fresh pages for each one.
  static constexpr std::size_t kRetainedScratchBytes = std::size_t{32} << 20;

  /// Spawns the server as SyncRpcChannel does; errors as its constructor.
  /// options.channel.retained_buffer_bytes is raised to kRetainedScratchBytes.
  /// `collect_timing`: record last_bytes_sent()/last_bytes_received().
  ChannelCore(const std::string& executable, const std::vector<std::string>& args,
              SyncRpcOptions options, bool collect_timing);
  ChannelCore(const ChannelCore&) = delete;
  ChannelCore& operator=(const ChannelCore&) = delete;
  /// Ends the child as end_now() does.
  ~ChannelCore();

  /// A buffer of at least `bytes` bytes for the next request's payload (or
  /// method name: method_buffer()), valid until the next call of the same
  /// function. Contents are not kept across growth. Throws std::logic_error
  /// while a request is open (from a callback: the open request's method
  /// and payload live there).
  std::span<char> payload_buffer(std::size_t bytes);
  std::span<char> method_buffer(std::size_t bytes);

  /// One Request; the reply stays valid until the next request or close().
  /// Throws ChannelClosed after close(), else as SyncRpcChannel::request_bytes.
  /// With a `sink`, a big reply goes to the sink's memory instead of the
  /// channel's buffer (SyncRpcChannel::request_bytes).
  ByteView request(std::string_view method, ByteView payload, PayloadSink* sink = nullptr);

  /// As SyncRpcChannel::register_callback.
  void register_callback(std::string name, Callback callback);

  /// SyncRpcChannel::close() once (EOF to the child, a grace, SIGKILL),
  /// then nothing: returns the wait status, -1 when already closed.
  int close();
  /// For an unclosed channel at process exit, environment teardown or
  /// garbage collection: SIGKILL the child and reap it, without the grace a
  /// polite close() gives. Never throws (a failure is one line on stderr).
  void end_now() noexcept;

  bool closed() const noexcept { return closed_; }
  bool collect_timing() const noexcept { return collect_timing_; }
  /// Payload bytes of the last request and of its reply (0 until a reply
  /// comes); both stay 0 unless collect_timing. Framing is not counted,
  /// as in the TS 7 channel.
  std::size_t last_bytes_sent() const noexcept { return last_bytes_sent_; }
  std::size_t last_bytes_received() const noexcept { return last_bytes_received_; }
  /// The child's pid until it is reaped; -1 after.
  int pid() const noexcept { return channel_.pid(); }
  /// The reader's spin counters (all zero after close()).
  ChannelStats stats() const { return channel_.stats(); }

 private:
  struct Scratch {
    std::unique_ptr<char[]> data;  // uninitialised storage
    std::size_t capacity = 0;
    std::span<char> reserve(std::size_t bytes);
    void trim() noexcept;  // releases a buffer grown past kRetainedScratchBytes
  };

  SyncRpcChannel channel_;
  Scratch payload_scratch_;
  Scratch method_scratch_;
  bool collect_timing_;
  bool closed_ = false;
  bool in_request_ = false;  // request() is running (callbacks may be)
  std::size_t last_bytes_sent_ = 0;
  std::size_t last_bytes_received_ = 0;
};

/// A request on a closed channel. what() is the TS 7 channel's text,
/// "SyncRpcChannel is closed".
class ChannelClosed : public std::logic_error {
 public:
  ChannelClosed() : std::logic_error("SyncRpcChannel is closed") {}
};

}  // namespace spinrpc::node
