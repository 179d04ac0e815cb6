#pragma once

#include <cstddef>  // std::byte, std::size_t
#include <span>     // std::span

#include "descriptor/pipe.h"
#include "protocol/message_type.h"

namespace spinrpc {

/// Where a big payload is read to instead of the channel's buffer: memory
/// the caller owns, so that a reply it would copy out anyway arrives there
/// in the first place (the Node binding's reply Buffer; docs/NODE.md,
/// "Large payloads"). FrameChannel::try_read_frame asks at most once per
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

  /// One short step of work for the sink while its reply is awaited: the
  /// Node binding populates the Buffer the next big reply will be read
  /// into, so that the read does not fault it in page by page
  /// (node/src/page_populator.h). SyncRpcChannel calls it after writing
  /// the Request, again and again while nothing has arrived to read, until
  /// it returns false, so the work must be finite. A step should take tens
  /// of µs at most: a reply that arrives meanwhile waits for the step
  /// under way.
  virtual bool prepare_step() noexcept { return false; }

  /// Whether prepare_step() has anything to do now: asked first, so that
  /// a sink with nothing to prepare (most requests) costs no poll(2).
  virtual bool has_preparation() const noexcept { return false; }

 protected:
  ~PayloadSink() = default;
};

}  // namespace spinrpc
