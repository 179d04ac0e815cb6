#pragma once

#include <chrono>   // std::chrono::microseconds, nanoseconds
#include <cstdint>  // std::uint64_t
#include <string>   // std::string

#include "wait/placement_controller.h"

namespace spinrpc {

/// How a reader waits for the next message (docs/SPIN.md#the-rule). Resolved
/// once at start-up (resolve_spin_policy) and passed down; never global.
struct SpinPolicy {
  /// µs to poll with non-blocking reads before blocking; 0 = plain blocking
  /// reads, no extra system call on the hot path.
  std::chrono::microseconds budget{0};
  /// Suspend spinning after 3 waits over 1 ms, resume after 3 under 1 ms.
  bool adaptive = true;
  /// Why `budget` has its value, for the stats ("default", "TSGO_SYNC_SPIN_US=50",
  /// "--spin-us 0", "1 CPU available (sched_getaffinity)").
  std::string reason = "spinning not configured";
  /// Where the budget may be spent besides our own descriptor: keeping the
  /// other CPUs busy so a blocked peer is woken on ours (docs/PLACEMENT.md).
  /// Only with a budget > 0: the budget is what occupying may spend.
  PlacementController::Setting placement = PlacementController::Setting::off;
  /// Why `placement` has its value ("default", "SPINRPC_PLACEMENT=off", ...).
  std::string placement_reason = "placement not configured";
  /// The peer's process id when this side started it (the client shim's
  /// child), else 0. Before it first occupies, the reader looks for the
  /// peer's own occupier thread (Occupier::kThreadName in /proc/PID/task)
  /// and, finding one, leaves placement to the peer: two placers on one
  /// pair fight (docs/PLACEMENT.md#one-placer-per-pair).
  int peer_pid = 0;
  /// The peer said it spins while it waits (kPeerSpinsVariable): the one
  /// blocked read that leaves occupying or a shared CPU runs off its CPU,
  /// since a spinning peer left on it never moves
  /// (docs/PLACEMENT.md#two-spinners-on-one-cpu).
  bool peer_spins = false;
  /// While spinning is suspended (the CPUs are taken), move now and then to
  /// the CPU the peer last ran on, so that the pair's wake-ups stay on one
  /// CPU instead of each preempting unrelated work on the other
  /// (docs/PLACEMENT.md#following-the-peer-when-the-cpus-are-taken).
  /// spinrpc-server sets it; the peer is found from the descriptor (a
  /// socket's SO_PEERCRED, or the nearest ancestor holding our pipe's write
  /// end: the parent, or the client behind a wrapper). Only with
  /// placement on: SPINRPC_PLACEMENT=off leaves the server where the kernel
  /// puts it. One side per pair follows: the shim and the binding do not.
  bool follow_peer = false;
};

/// The adaptive rule, pure: no clock, no I/O (docs/SPIN.md#the-rule). Feed it
/// every wait's duration; it says whether the next wait spins.
///
/// W > 1 ms: long += 1, short = 0; while spinning, long == 3 suspends.
/// W < 1 ms: short += 1, long = 0; while suspended, short == 3 resumes
///           (more after contention, and then only with a spare CPU: see
///           after_contention() and after_spare_cpu_sample()).
/// W == 1 ms changes nothing. The threshold is far above a 100 µs budget on
/// purpose: on a host with deep C-states a blocked read returns late even
/// when the peer answered at once, so "the budget ran out" alone would switch
/// spinning off exactly where it helps (docs/SPIN.md#the-rule).
class AdaptiveSpinController {
 public:
  /// Waits in a row on one side of the threshold that flip the state.
  static constexpr unsigned kWaitsToFlip = 3;
  static constexpr std::chrono::microseconds kThreshold{1000};

  /// `adaptive` false: always spinning, never suspends.
  explicit AdaptiveSpinController(bool adaptive) noexcept : adaptive_(adaptive) {}

  /// Feeds one wait; returns whether the next wait spins.
  bool after_wait(std::chrono::nanoseconds wait) noexcept;

  /// Reports that a spin gave the CPU away: a yield came back late because
  /// another task ran (SpinReader). The CPUs are oversubscribed, and there
  /// a spinner loses a whole time slice per yield where a
  /// blocked reader is woken at once. Beyond the proposal's rule
  /// (docs/SPIN.md#beyond-the-rule): suspends at once, and
  /// each suspension for this reason doubles the short waits needed to
  /// resume (3, 6, 12, ... up to kMaxWaitsToResume), and resuming then also
  /// needs a spare CPU (kSpareCpuSamples), so a machine that stays loaded
  /// does not pay for another spin. 1000 waits spun without
  /// contention reset the count to 3. Ignored when the rule is off.
  void after_contention() noexcept;

  /// Cap on the short waits needed to resume after repeated contention.
  static constexpr unsigned kMaxWaitsToResume = 3 * 64;

  /// Uncontended spinning waits that forget earlier contention.
  static constexpr unsigned kWaitsToForgive = 1000;

  /// After a suspension for contention, the short waits alone do not resume
  /// spinning: there must also be no more runnable tasks than CPUs, or the
  /// next spin only takes turns from the tasks that caused it
  /// (docs/SPIN-NOTES.md#resuming-needs-a-spare-cpu). When
  /// the count is reached, the controller asks for up to kSpareCpuSamples
  /// samples, one per wait (wants_spare_cpu_sample()):
  /// kSpareCpuSamplesToResume that found a spare CPU resume; when that can
  /// no longer happen, it is one more contention (the count to resume
  /// doubles) and the controller stays suspended.
  static constexpr unsigned kSpareCpuSamples = 4;
  static constexpr unsigned kSpareCpuSamplesToResume = 2;
  /// True while the controller waits for spare-CPU samples.
  bool wants_spare_cpu_sample() const noexcept { return sampling_; }
  /// Feeds one sample: whether every runnable task had a CPU (CpuLoadProbe).
  void after_spare_cpu_sample(bool spare_cpu) noexcept;
  /// Times a resumption was put off because the CPUs were oversubscribed.
  std::uint64_t resumptions_refused() const noexcept { return resumptions_refused_; }

  bool spinning() const noexcept { return spinning_; }
  std::uint64_t suspensions() const noexcept { return suspensions_; }
  std::uint64_t resumptions() const noexcept { return resumptions_; }

 private:
  void resume() noexcept;
  // One more contention's worth: the short waits to resume double, up to
  // kMaxWaitsToResume (a contention, or a refusal for want of a spare CPU).
  void double_waits_to_resume() noexcept;
  bool adaptive_;
  bool spinning_ = true;
  unsigned long_waits_ = 0;   // consecutive waits over the threshold
  unsigned short_waits_ = 0;  // consecutive waits under the threshold
  unsigned waits_to_resume_ = kWaitsToFlip;  // grows with contention
  unsigned calm_waits_ = 0;   // spinning waits since the last contention
  bool contended_before_ = false;  // a contention since the last calm stretch
  bool suspended_by_contention_ = false;  // resuming also needs a spare CPU
  bool sampling_ = false;           // asking for spare-CPU samples
  unsigned samples_ = 0;            // spare-CPU samples taken in this round
  unsigned spare_samples_ = 0;       // of those, the ones that found a spare CPU
  std::uint64_t resumptions_refused_ = 0;
  std::uint64_t suspensions_ = 0;
  std::uint64_t resumptions_ = 0;
};

}  // namespace spinrpc
