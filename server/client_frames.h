#pragma once

#include <optional>  // std::optional

#include "protocol/frame.h"

namespace spinrpc {

class FrameChannel;

namespace detail {

/// tsgo's prefix for malformed input (docs/PROTOCOL.md#messages-a-client-must-not-send).
inline constexpr char kInvalidRequest[] = "api: invalid request: ";

/// Reads the client's next frame as FrameChannel::try_read_frame() does, but a
/// ProtocolError carries tsgo's full stderr line ("api: invalid request: …").
/// Every server-side read goes through here: the main loop and call().
std::optional<FrameView> read_client_frame(FrameChannel& channel);

}  // namespace detail
}  // namespace spinrpc
