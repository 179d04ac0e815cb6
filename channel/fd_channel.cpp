#include "channel/fd_channel.h"

#include <sys/uio.h>  // iovec

#include <utility>  // std::move

#include "channel/peer_closed.h"
#include "protocol/frame_decoder.h"
#include "protocol/frame_encoder.h"

namespace spinrpc {
namespace {

iovec to_iovec(ByteView bytes) {
  return {const_cast<std::byte*>(bytes.data()), bytes.size()};
}

}  // namespace

FdChannel::FdChannel(UniqueFd in, UniqueFd out, ChannelOptions options)
    : stream_(std::move(in), std::move(out), options, std::move(options.spin)),
      limits_(options.limits) {}

std::optional<FrameView> FdChannel::try_read_frame() {
  stream_.consume(frame_size_);
  frame_size_ = 0;
  for (;;) {
    const DecodeResult result = decode_frame(stream_.buffered(), limits_);
    if (result.status == DecodeResult::Status::Frame) {
      frame_size_ = result.size_bytes;
      mid_frame_.set(false);
      return result.frame;
    }
    mid_frame_.set(!stream_.buffered().empty());
    if (stream_.fill(result.size_bytes) == 0) {
      // Branch: EOF. Between frames it is the peer's normal exit.
      mid_frame_.set(false);
      if (stream_.buffered().empty()) return std::nullopt;
      // tsgo's words inside a field; a message cut at a field boundary
      // gets its own (docs/PROTOCOL.md#end-of-input).
      if (result.inside_field) throw PeerClosed("unexpected EOF", PeerClosed::Where::InsideField);
      const std::size_t got = stream_.buffered().size();
      throw PeerClosed("unexpected EOF: the peer closed the connection after " + std::to_string(got) +
                           (got == 1 ? " byte" : " bytes") +
                           " of a message, at a field boundary; the message is incomplete",
                       PeerClosed::Where::FieldBoundary);
    }
  }
}

FrameView FdChannel::read_frame() {
  if (auto frame = try_read_frame()) return *frame;
  throw PeerClosed("unexpected EOF: the peer closed the connection between frames",
                   PeerClosed::Where::BetweenFrames);
}

void FdChannel::write_frame(MessageType type, ByteView name, ByteView payload) {
  const FrameHeader header = encode_frame_header(type, name.size(), payload.size());
  iovec iov[4] = {to_iovec(header.prefix()), to_iovec(name), to_iovec(header.payload_header()),
                  to_iovec(payload)};
  stream_.write_all(iov);
}

}  // namespace spinrpc
