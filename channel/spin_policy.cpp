#include "channel/spin_policy.h"

#include <algorithm>  // std::min

namespace spinrpc {

bool AdaptiveSpinController::after_wait(std::chrono::nanoseconds wait) noexcept {
  if (!adaptive_) return spinning_;
  if (spinning_ && ++calm_waits_ >= kWaitsToForgive) {
    waits_to_resume_ = kWaitsToFlip;
    contended_before_ = false;
  }
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
    if (!spinning_ && short_waits_ == waits_to_resume_) {
      spinning_ = true;
      ++resumptions_;
    }
  }
  return spinning_;
}

void AdaptiveSpinController::after_contention() noexcept {
  if (!adaptive_) return;
  calm_waits_ = 0;
  short_waits_ = 0;
  if (!spinning_) return;
  spinning_ = false;
  ++suspensions_;
  // The first contention suspends with the usual count; every later one
  // before a calm stretch doubles it.
  if (contended_before_) waits_to_resume_ = std::min(waits_to_resume_ * 2, kMaxWaitsToResume);
  contended_before_ = true;
}

}  // namespace spinrpc
