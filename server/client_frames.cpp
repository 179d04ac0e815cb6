#include "server/client_frames.h"

#include <string>  // std::string

#include "channel/frame_channel.h"
#include "protocol/protocol_error.h"

namespace spinrpc::detail {

std::optional<FrameView> read_client_frame(FrameChannel& channel) {
  try {
    return channel.try_read_frame();
  } catch (const ProtocolError& e) {
    throw ProtocolError(kInvalidRequest + std::string(e.what()));
  }
}

}  // namespace spinrpc::detail
