#pragma once

#include <chrono>    // std::chrono::steady_clock
#include <cstddef>   // std::size_t
#include <memory>    // std::unique_ptr
#include <optional>  // std::optional
#include <utility>   // std::move

#include "channel/byte_stream.h"
#include "wait/channel_stats.h"
#include "channel/cross_thread_flag.h"
#include "channel/payload_sink.h"
#include "channel/stream_switch.h"
#include "stream/streams.h"
#include "wait/spin_policy.h"
#include "protocol/frame.h"
#include "protocol/frame_decoder.h"
#include "trace/trace_ring.h"

namespace spinrpc {

/// What a FrameChannel accepts and how it buffers, apart from how it waits.
struct FrameOptions : BufferOptions {
  /// Frame size limit, checked before any buffer grows (protocol/frame.h).
  Limits limits;
};

/// FrameOptions and the wait policy.
struct ChannelOptions : FrameOptions {
  /// How the reader waits for bytes. The default (budget 0) is a plain
  /// blocking read; spinrpc-server and SyncRpcChannel pass
  /// resolve_spin_policy() (settings/settings.h).
  SpinPolicy spin;
  /// Where the channel's trace goes (docs/TRACE.md): each frame read and
  /// written, each wait, and what the layers above record through trace().
  /// Null (the default): no trace, one predictable branch per read and
  /// write.
  std::shared_ptr<trace::Ring> trace;
};

/// The MessagePack framing (protocol/frame.h) over a ByteStream: reads and
/// writes whole frames over a connection's Streams, whatever carries them.
/// Frames are decoded in place in the stream's buffer, so name and payload
/// are views, never copies. Each frame is one write (ByteStream::write_all).
///
/// Views returned by a read stay valid until the next read on this channel,
/// unless a Hold keeps them longer (see hold_frame()).
///
/// Waiting for bytes follows options.spin (SpinReader): with a budget, the
/// reader tries for up to that many µs before it blocks; writes never spin.
///
/// WARNING: one thread at a time. Separate channels are independent.
class FrameChannel {
 public:
  /// Over `streams` (stream/streams.h): what a connect or an accept
  /// returns (transport/endpoint.h, transport/transport.h), or
  /// fd_streams() over descriptors of the caller's (stream/fd_streams_posix.h).
  FrameChannel(Streams streams, ChannelOptions options = {});

  /// Returns the next frame, blocking until it is whole. Returns std::nullopt
  /// on EOF between frames (the peer simply exited). Throws PeerClosed on EOF
  /// inside a frame, ProtocolError on malformed bytes or a frame over
  /// options.limits, std::system_error on an OS failure.
  /// With a `sink`, a payload of PayloadSink::kMinBytes or more that has
  /// not arrived whole yet is read into the memory the sink gives (the
  /// frame's payload view then points there; its type and name stay in
  /// the buffer). The sink is asked once per such frame; an empty span
  /// leaves the payload in the buffer.
  std::optional<FrameView> try_read_frame(PayloadSink* sink = nullptr);

  /// As try_read_frame(), but EOF between frames also throws PeerClosed.
  FrameView read_frame();

  /// Gives `sink` the time until something arrives to read (a byte past
  /// the last frame returned, or end of input): when sink.has_preparation(),
  /// calls sink.prepare_step() until it returns false or the input is
  /// readable (InputStream::readable_now). Never waits otherwise. Throws
  /// what readable_now throws.
  void prepare_while_waiting(PayloadSink& sink);

  /// Writes one whole frame (OutputStream::write_all says what it blocks on).
  /// Throws PeerClosed when the reader is gone, std::length_error for a
  /// field of 4 GiB or more, std::system_error on other OS failures. SIGPIPE
  /// must be ignored or blocked by the process (the server and the client
  /// shim both see to it).
  void write_frame(MessageType type, ByteView name, ByteView payload);

  /// Keeps the frame returned by the last read valid until the Hold is
  /// destroyed, although further frames are read meanwhile: a server handler
  /// keeps its request's payload while it Calls back into the client. Frames
  /// read while the Hold lives are not covered: each stays valid until the
  /// next read, as usual, unless it is held too. See ByteStream::Hold.
  using Hold = ByteStream::Hold;
  [[nodiscard]] Hold hold_frame() noexcept { return stream_.hold(frame_size_); }

  /// Bounds the reads and writes that follow (ByteStream::set_deadline);
  /// after a TimedOut the channel is not usable. std::nullopt removes the
  /// bound.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
    stream_.set_deadline(deadline);
  }

  /// True while a read waits for the rest of a frame whose first bytes have
  /// arrived. Safe to call from any thread (a snapshot; see CrossThreadFlag):
  /// spinrpc-server's signal thread asks it whether a signal cuts a message
  /// short.
  bool mid_frame() const noexcept { return mid_frame_.get(); }

  /// The reader's counters and spin policy (docs/SPIN.md#counters).
  const ChannelStats& stats() const noexcept { return stream_.stats(); }

  /// The read buffer's size now, in bytes (BufferOptions::retained_buffer_bytes).
  std::size_t read_buffer_bytes() const noexcept { return stream_.read_buffer_bytes(); }

  /// Hands the buffered, spin-aware stream under this channel to another
  /// framing (spinrpc-server --async: JsonRpcChannel); the channel is then
  /// empty and must only be destroyed.
  ByteStream release_stream() && noexcept { return std::move(stream_); }

  /// Moves the channel with `stream_switch` at the end of the first
  /// exchange (channel/stream_switch.h): as the server, right after the
  /// first Response or Error is written; as the client, right after it is
  /// read, if the peer agreed. Set before the first Request. Until then, and
  /// when the move does not happen, the channel stays on its streams.
  void switch_at_first_reply(std::unique_ptr<StreamSwitch> stream_switch, StreamSwitch::Side side) noexcept {
    switch_ = std::move(stream_switch);
    switch_side_ = side;
  }

  /// Says why the channel stays on its streams (ChannelStats::transport_reason).
  void set_transport_reason(std::string reason) { stream_.set_transport_reason(std::move(reason)); }

  /// The channel's trace ring (ChannelOptions::trace), null when not
  /// tracing: the client and the server record their requests, handlers
  /// and Calls there.
  trace::Ring* trace() const noexcept { return trace_.get(); }

  /// The streams under the channel (owned by it).
  InputStream& input() noexcept { return stream_.input(); }
  OutputStream& output() noexcept { return stream_.output(); }

 private:
  ByteStream stream_;
  Limits limits_;
  std::shared_ptr<trace::Ring> trace_;  // see trace()
  // try_read_frame and write_frame without the trace, and with it.
  std::optional<FrameView> next_frame(PayloadSink* sink);
  // next_frame without the client's move onto shared memory at its first reply.
  std::optional<FrameView> decode_next_frame(PayloadSink* sink);
  std::optional<FrameView> next_frame_traced(PayloadSink* sink);
  void put_frame(MessageType type, ByteView name, ByteView payload);
  void put_frame_traced(MessageType type, ByteView name, ByteView payload);
  // Reads the rest of the partial frame `partial` into the sink's memory;
  // nullopt when the sink declines.
  std::optional<FrameView> read_payload_into(PayloadSink& sink, const DecodeResult& partial);

  // The first Response or Error was read (client) or is being written
  // (server): moves or stays, then forgets the switch.
  void finish_switch(bool move);
  void after_first_reply_read();

  std::unique_ptr<StreamSwitch> switch_;  // see switch_at_first_reply(); null once done
  StreamSwitch::Side switch_side_ = StreamSwitch::Side::server;
  CrossThreadFlag mid_frame_;   // see mid_frame()
  std::size_t frame_size_ = 0;  // bytes of the frame last returned; consumed at the next read
};

}  // namespace spinrpc
