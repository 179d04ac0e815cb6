#pragma once

#include <cstddef>  // std::byte, std::size_t
#include <span>     // std::span

#include "channel/pipe.h"
#include "protocol/message_type.h"

namespace spinrpc {

/// Where a big payload is read to instead of the channel's buffer: memory
/// the caller owns, so that a reply it would copy out anyway arrives there
/// in the first place (the Node binding's reply Buffer; docs/NODE.md,
/// "Large payloads"). FdChannel::try_read_frame asks at most once per
/// frame, once the payload's length is known and while most of it is still
/// to come.
class PayloadSink {
 public:
  /// Payloads shorter than this stay in the channel's buffer: a copy of a
  /// few pages costs less than the caller's allocation.
  static constexpr std::size_t kMinBytes = kDefaultPipeBytes;

  /// Memory for the `bytes` (>= kMinBytes) payload bytes of a frame of
  /// `type`, valid until the caller is done with the frame; or an empty
  /// span to leave the payload in the channel's buffer. May throw: the
  /// read then throws the same, and the channel is not usable after it.
  virtual std::span<std::byte> payload_memory(MessageType type, std::size_t bytes) = 0;

 protected:
  ~PayloadSink() = default;
};

}  // namespace spinrpc
