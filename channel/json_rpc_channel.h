#pragma once

#include <sys/uio.h>  // iovec

#include <cstddef>   // std::size_t
#include <optional>  // std::optional
#include <span>      // std::span

#include "channel/byte_stream.h"
#include "channel/cross_thread_flag.h"
#include "wait/channel_stats.h"
#include "protocol/content_length.h"
#include "protocol/frame.h"

namespace spinrpc {

/// tsgo's async framing (`Content-Length` headers, docs/ASYNC.md) over the
/// same buffered, spin-aware ByteStream as the MessagePack FrameChannel. Bodies
/// are views into the stream's buffer, valid until the next read unless a
/// Hold keeps them; each message goes out in one write (ByteStream::write_all).
///
/// WARNING: one thread at a time.
class JsonRpcChannel {
 public:
  /// `limits`: max_header_bytes bounds the header block, max_message_bytes
  /// the body (both checked before the buffer grows).
  JsonRpcChannel(ByteStream stream, const Limits& limits)
      : stream_(std::move(stream)), decoder_(limits) {}

  /// The next body, blocking until it is whole; std::nullopt on EOF between
  /// messages. Throws ProtocolError with tsgo's line for malformed headers
  /// and with spinrpc's for a message cut short by EOF or over a limit;
  /// std::system_error on an OS failure.
  std::optional<ByteView> try_read_body();

  /// Writes the concatenation of `parts` as is (they hold whole messages).
  void write(std::span<iovec> parts) { stream_.write_all(parts); }

  /// Keeps the body last read valid while more are read (a handler's params
  /// during a server → client call). See ByteStream::Hold.
  [[nodiscard]] ByteStream::Hold hold_body() noexcept { return stream_.hold(message_size_); }

  /// The reader's counters and spin policy (docs/SPIN.md#counters).
  const ChannelStats& stats() const noexcept { return stream_.stats(); }

  /// True while a read waits for the rest of a message whose first bytes
  /// have arrived. Safe to call from any thread (CrossThreadFlag), as
  /// FrameChannel::mid_frame.
  bool mid_frame() const noexcept { return mid_frame_.get(); }

 private:
  ByteStream stream_;
  ContentLengthDecoder decoder_;
  CrossThreadFlag mid_frame_;  // see mid_frame()
  std::size_t message_size_ = 0;  // bytes of the message last returned; consumed at the next read
};

}  // namespace spinrpc
