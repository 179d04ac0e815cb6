#include "channel/frame_channel.h"

#include <sys/uio.h>  // iovec

#include <cstring>    // std::memcpy
#include <stdexcept>  // std::logic_error
#include <utility>    // std::move

#include "stream/peer_closed.h"
#include "protocol/frame_decoder.h"
#include "protocol/frame_encoder.h"
#include "protocol/protocol_error.h"

namespace spinrpc {
namespace {

bool is_reply(MessageType type) noexcept { return type == MessageType::Response || type == MessageType::Error; }

iovec to_iovec(ByteView bytes) {
  return {const_cast<std::byte*>(bytes.data()), bytes.size()};
}

}  // namespace

FrameChannel::FrameChannel(Streams streams, ChannelOptions options)
    : stream_(std::move(streams), options, std::move(options.spin)), limits_(options.limits), trace_(std::move(options.trace)) {
  stream_.set_trace(trace_.get());
}

std::optional<FrameView> FrameChannel::try_read_frame(PayloadSink* sink) {
  if (!trace_) [[likely]] return next_frame(sink);
  return next_frame_traced(sink);
}

std::optional<FrameView> FrameChannel::next_frame_traced(PayloadSink* sink) {
  // The read begins where the last traced span ended (a write, a handler):
  // no clock read of its own; its waits are SpinReader's.
  const auto start = trace_->last();
  const std::uint64_t mark = trace_->mark();
  std::optional<FrameView> frame = next_frame(sink);
  if (frame) {
    // The server's request begins with the read of its Request, the waits
    // in it included (the client's as it writes one): a request's records
    // are those up to the next.
    if (frame->type == MessageType::Request) trace_->begin_request_since(mark);
    trace_->span(trace::Kind::read, static_cast<std::uint8_t>(frame->type), start, trace_->now(),
                 frame->name.size() + frame->payload.size());
  }
  return frame;
}

std::optional<FrameView> FrameChannel::next_frame(PayloadSink* sink) {
  std::optional<FrameView> frame = decode_next_frame(sink);
  // A client's first reply, however it was read (into the sink or not),
  // is where it moves onto the ring the server offered (StreamSwitch).
  if (switch_ && frame && switch_side_ == StreamSwitch::Side::client && is_reply(frame->type)) [[unlikely]] {
    after_first_reply_read();
  }
  return frame;
}

std::optional<FrameView> FrameChannel::decode_next_frame(PayloadSink* sink) {
  stream_.consume(frame_size_);
  frame_size_ = 0;
  for (;;) {
    const DecodeResult result = decode_frame(stream_.buffered(), limits_);
    if (result.status == DecodeResult::Status::frame) {
      frame_size_ = result.size_bytes;
      mid_frame_.set(false);
      return result.frame;
    }
    mid_frame_.set(!stream_.buffered().empty());
    // The frame's size is known once its header is in.
    if (result.payload_begin != 0) stream_.expect(result.size_bytes);
    // Branch: a big payload, most of it still to come, and a sink for it.
    if (sink != nullptr && result.payload_begin != 0 &&
        result.size_bytes - result.payload_begin >= PayloadSink::kMinBytes) {
      if (auto frame = read_payload_into(*sink, result)) return frame;
      sink = nullptr;  // declined: asked once per frame
    }
    if (stream_.fill(result.size_bytes) == 0) {
      // Branch: EOF. Between frames it is the peer's normal exit.
      mid_frame_.set(false);
      if (stream_.buffered().empty()) return std::nullopt;
      // tsgo's words inside a field; a message cut at a field boundary
      // gets its own (docs/PROTOCOL.md#end-of-input).
      if (result.inside_field) throw PeerClosed("unexpected EOF", PeerClosed::Where::inside_field);
      const std::size_t got = stream_.buffered().size();
      throw PeerClosed("unexpected EOF: the peer closed the connection after " + std::to_string(got) +
                           (got == 1 ? " byte" : " bytes") +
                           " of a message, at a field boundary; the message is incomplete",
                       PeerClosed::Where::field_boundary);
    }
  }
}

std::optional<FrameView> FrameChannel::read_payload_into(PayloadSink& sink, const DecodeResult& partial) {
  const std::size_t payload_bytes = partial.size_bytes - partial.payload_begin;
  const std::span<std::byte> memory = sink.payload_memory(partial.frame.type, payload_bytes);
  if (memory.empty()) return std::nullopt;
  if (memory.size() < payload_bytes) throw std::logic_error("PayloadSink gave less memory than the payload needs");
  // All that is buffered belongs to this frame (it is incomplete): the
  // payload's first bytes move over, the rest is read straight there. The
  // header and name stay in the buffer, which no read touches meanwhile.
  const ByteView buffered = stream_.buffered();
  const std::size_t have = buffered.size() - partial.payload_begin;
  std::memcpy(memory.data(), buffered.data() + partial.payload_begin, have);
  for (std::size_t at = have; at < payload_bytes;) {
    const std::size_t n = stream_.read_direct(memory.data() + at, payload_bytes - at);
    if (n == 0) {
      mid_frame_.set(false);
      throw PeerClosed("unexpected EOF", PeerClosed::Where::inside_field);
    }
    at += n;
  }
  frame_size_ = buffered.size();  // header, name and the payload's first bytes
  mid_frame_.set(false);
  return FrameView{partial.frame.type, partial.frame.name, ByteView(memory.data(), payload_bytes)};
}

void FrameChannel::prepare_while_waiting(PayloadSink& sink) {
  // Bytes of the next frame already buffered: nothing to wait for.
  if (!sink.has_preparation() || stream_.buffered().size() > frame_size_) return;
  InputStream& input = stream_.input();
  while (!input.readable_now() && sink.prepare_step()) {
  }
}

FrameView FrameChannel::read_frame() {
  if (auto frame = try_read_frame()) return *frame;
  throw PeerClosed("unexpected EOF: the peer closed the connection between frames",
                   PeerClosed::Where::between_frames);
}

void FrameChannel::write_frame(MessageType type, ByteView name, ByteView payload) {
  if (!trace_) [[likely]] return put_frame(type, name, payload);
  put_frame_traced(type, name, payload);
}

void FrameChannel::put_frame_traced(MessageType type, ByteView name, ByteView payload) {
  if (type == MessageType::Request) trace_->begin_request();
  const auto start = trace_->last();
  put_frame(type, name, payload);
  trace_->span(trace::Kind::send, static_cast<std::uint8_t>(type), start, trace_->now(), name.size() + payload.size());
}

void FrameChannel::put_frame(MessageType type, ByteView name, ByteView payload) {
  const FrameHeader header = encode_frame_header(type, name.size(), payload.size());
  iovec iov[4] = {to_iovec(header.prefix()), to_iovec(name), to_iovec(header.payload_header()),
                  to_iovec(payload)};
  if (switch_ && switch_side_ == StreamSwitch::Side::server && is_reply(type)) [[unlikely]] {
    // Only with nothing of the client's buffered past the request answered:
    // a sync client has sent nothing more, and anything it had would be
    // left behind on the pipe.
    const bool move = stream_.buffered().size() == frame_size_ && switch_->agree();
    stream_.write_all(iov);
    finish_switch(move);
    return;
  }
  stream_.write_all(iov);
}

void FrameChannel::after_first_reply_read() {
  const bool move = switch_->agree();
  if (move && stream_.buffered().size() != frame_size_) {
    // The server moved after this reply: bytes behind it on the pipe are
    // not a sync server's.
    switch_.reset();
    throw ProtocolError("the server sent bytes after its first reply on the pipe, having moved to shared memory");
  }
  finish_switch(move);
}

void FrameChannel::finish_switch(bool move) {
  const std::unique_ptr<StreamSwitch> done = std::move(switch_);
  if (!move) {
    stream_.set_transport_reason(done->reason(false));
    if (trace_) trace_->instant("transport: stays on descriptors", trace_->now());
    return;
  }
  stream_.replace_streams([&](Streams current) { return done->move(std::move(current)); }, done->reason(true));
  if (trace_) trace_->instant("transport: moved to shared memory", trace_->now());
}

}  // namespace spinrpc
