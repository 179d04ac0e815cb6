#include "wait/spin_policy.h"

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
    // A long wait while sampling: the traffic turned sparse, the samples
    // would describe another stretch; the count starts again.
    sampling_ = false;
  } else if (wait < kThreshold) {
    ++short_waits_;
    long_waits_ = 0;
    if (!spinning_ && short_waits_ == waits_to_resume_) {
      if (suspended_by_contention_) {
        sampling_ = true;
        samples_ = 0;
        spare_samples_ = 0;
      } else {
        resume();
      }
    }
  }
  return spinning_;
}

void AdaptiveSpinController::after_spare_cpu_sample(bool spare_cpu) noexcept {
  if (!sampling_) return;
  ++samples_;
  if (spare_cpu) ++spare_samples_;
  // Decided as soon as the outcome is known: a machine with a spare CPU
  // resumes after two samples.
  if (spare_samples_ >= kSpareCpuSamplesToResume) {
    sampling_ = false;
    resume();
    return;
  }
  if (samples_ - spare_samples_ <= kSpareCpuSamples - kSpareCpuSamplesToResume) return;
  sampling_ = false;
  // Still oversubscribed: as one more contention, without a spin to pay for it.
  ++resumptions_refused_;
  short_waits_ = 0;
  double_waits_to_resume();
}

void AdaptiveSpinController::resume() noexcept {
  spinning_ = true;
  suspended_by_contention_ = false;
  ++resumptions_;
}

void AdaptiveSpinController::double_waits_to_resume() noexcept {
  waits_to_resume_ = std::min(waits_to_resume_ * 2, kMaxWaitsToResume);
}

void AdaptiveSpinController::after_contention() noexcept {
  if (!adaptive_) return;
  calm_waits_ = 0;
  short_waits_ = 0;
  if (!spinning_) return;
  spinning_ = false;
  suspended_by_contention_ = true;
  ++suspensions_;
  // The first contention suspends with the usual count; every later one
  // before a calm stretch doubles it.
  if (contended_before_) double_waits_to_resume();
  contended_before_ = true;
}

}  // namespace spinrpc
