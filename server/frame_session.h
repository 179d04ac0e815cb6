#pragma once

#include "server/session.h"

namespace spinrpc {

class FrameChannel;

namespace detail {

/// Sync mode's Session: MessagePack frames on a FrameChannel
/// (docs/PROTOCOL.md). A Response carries any bytes; a Call is a Call
/// frame answered by a CallResponse or CallError of the same name.
class FrameSession final : public Session {
 public:
  explicit FrameSession(FrameChannel& channel) noexcept : channel_(channel) {}

  bool carries_bytes() const noexcept override { return true; }
  std::string_view absent_item_params() const noexcept override { return {}; }
  std::string_view json_result(std::string_view result) override;
  void reply(std::string_view method, ByteView result) override;
  void reply_error(std::string_view method, std::string_view text) override;
  ByteView call(std::string_view callback, ByteView arguments, std::exception_ptr& failure) override;
  trace::Ring* trace() const noexcept override;
  const ChannelStats& stats() const noexcept override;

 private:
  FrameChannel& channel_;
};

}  // namespace detail
}  // namespace spinrpc
