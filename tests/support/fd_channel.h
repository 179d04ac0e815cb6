#pragma once

#include <utility>  // std::move

#include "channel/frame_channel.h"
#include "descriptor/unique_fd.h"
#include "stream/fd_streams_posix.h"

namespace spinrpc::test {

/// A FrameChannel over two descriptors of the test's, made as a transport
/// makes one: fd_streams() with the channel's buffering, spinning when its
/// policy has a budget.
inline FrameChannel fd_channel(UniqueFd in, UniqueFd out, ChannelOptions options = {}) {
  Streams streams = fd_streams(std::move(in), std::move(out), options, options.spin.budget.count() > 0);
  return FrameChannel(std::move(streams), std::move(options));
}

}  // namespace spinrpc::test
