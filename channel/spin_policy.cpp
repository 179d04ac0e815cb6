#include "channel/spin_policy.h"

namespace spinrpc {

bool AdaptiveSpinController::after_wait(std::chrono::nanoseconds wait) noexcept {
  if (!adaptive_) return spinning_;
  if (wait > kThreshold) {
    ++long_waits_;
    short_waits_ = 0;
    if (spinning_ && long_waits_ == kWaitsToFlip) {
      spinning_ = false;
      ++suspensions_;
    }
  } else if (wait < kThreshold) {
    ++short_waits_;
    long_waits_ = 0;
    if (!spinning_ && short_waits_ == kWaitsToFlip) {
      spinning_ = true;
      ++resumptions_;
    }
  }
  return spinning_;
}

}  // namespace spinrpc
