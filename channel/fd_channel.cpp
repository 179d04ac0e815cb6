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
      return result.frame;
    }
    if (stream_.fill(result.size_bytes) == 0) {
      // Branch: EOF. Between frames it is the peer's normal exit.
      if (stream_.buffered().empty()) return std::nullopt;
      throw PeerClosed(result.inside_field ? "unexpected EOF" : "unexpected EOF between fields",
                       result.inside_field);
    }
  }
}

FrameView FdChannel::read_frame() {
  if (auto frame = try_read_frame()) return *frame;
  throw PeerClosed("unexpected EOF: the peer closed the connection between frames", false);
}

void FdChannel::write_frame(MessageType type, ByteView name, ByteView payload) {
  const FrameHeader header = encode_frame_header(type, name.size(), payload.size());
  iovec iov[4] = {to_iovec(header.prefix()), to_iovec(name), to_iovec(header.payload_header()),
                  to_iovec(payload)};
  stream_.write_all(iov);
}

}  // namespace spinrpc
