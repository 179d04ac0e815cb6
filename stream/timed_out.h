#pragma once

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

namespace spinrpc {

/// A deadline passed before the peer's bytes came, or before it took ours
/// (FrameChannel::set_deadline). The stream may stop mid-frame: the channel is not
/// usable afterwards. what() is one line.
class TimedOut : public std::runtime_error {
 public:
  explicit TimedOut(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace spinrpc
