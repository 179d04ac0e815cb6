#pragma once

#include <chrono>   // std::chrono
#include <cstddef>  // std::byte, std::size_t
#include <cstdint>  // std::uint64_t
#include <memory>   // std::unique_ptr
#include <optional>  // std::optional

#include "channel/channel_stats.h"
#include "channel/occupier.h"
#include "channel/placement_controller.h"
#include "channel/spin_policy.h"

namespace spinrpc {

/// The wait at the heart of spinrpc (SPIN.md, "The rule"): reads from one
/// fd, and when nothing is there yet, polls it with non-blocking reads for
/// up to the spin budget before blocking in poll(2). Between tries it yields
/// the CPU (sched_yield) rather than only pausing, so a peer sharing the CPU
/// runs at once instead of after the budget (docs/SPIN-NOTES.md). The adaptive rule may
/// suspend spinning; suspended, a wait is one blocking read(2).
///
/// The fd is put in O_NONBLOCK while spinning is active and back in
/// blocking mode while suspended or with budget 0 (one fcntl(2) per switch,
/// none per wait). O_NONBLOCK belongs to the open file description: a
/// socket's write side sees it too, and FdChannel's writer waits for POLLOUT
/// on EAGAIN for that reason.
///
/// WARNING: one thread at a time. Borrows the fd; does not close it.
class SpinReader {
 public:
  /// Borrows `fd`, which must stay open for this object's life.
  /// Throws std::system_error if the fd's flags cannot be read or set.
  SpinReader(int fd, SpinPolicy policy);
  /// Moving hands the fd over; the moved-from reader restores nothing.
  SpinReader(SpinReader&& other) noexcept;
  SpinReader& operator=(SpinReader&& other) noexcept;
  SpinReader(const SpinReader&) = delete;
  SpinReader& operator=(const SpinReader&) = delete;
  /// Puts the fd's O_NONBLOCK flag back as it was found: a server's stdin
  /// may be a terminal or pipe shared with its parent. Never throws.
  ~SpinReader();

  /// Reads up to `len` (> 0) bytes into `buf`, waiting by the spin rule
  /// until at least one byte arrives. Spins at most the budget (µs), then
  /// blocks until the deadline, if one is set, else without limit. Returns
  /// the byte count, or 0 at EOF (also for ECONNRESET). Throws TimedOut past
  /// the deadline, std::system_error for other OS failures.
  std::size_t read_some(std::byte* buf, std::size_t len);

  /// Call right before writing a message the peer waits for (FdChannel
  /// does): starts the cycle the placement policy times (write → the peer's
  /// next bytes) and, when occupying pays, pokes the occupier so that the
  /// peer's wake-up finds no idle CPU but ours (docs/PLACEMENT.md).
  void before_write() noexcept;

  /// Bounds every later wait: once `deadline` passes with no byte read,
  /// read_some throws TimedOut. std::nullopt (the default) waits forever.
  /// Spinning stays bounded by the budget; only the blocking part of a wait
  /// changes (poll with the time left, then read).
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
    deadline_ = deadline;
  }

  /// The counters so far and the policy in force, kept current on every
  /// wait (reading them allocates nothing). Valid while this reader lives.
  const ChannelStats& stats() const noexcept { return stats_; }

 private:
  using Clock = std::chrono::steady_clock;
  // One non-blocking attempt: bytes (or 0 at EOF), or -1 when none yet.
  long try_read(std::byte* buf, std::size_t len);
  std::size_t blocking_read(std::byte* buf, std::size_t len);
  void end_wait(Clock::duration wait);
  void end_cycle(Clock::time_point now) noexcept;
  void add_spin_time(Clock::duration spun) noexcept;
  void wait_readable_until(Clock::time_point deadline);
  void set_nonblocking(bool on);
  void restore_flags() noexcept;

  int fd_;                              // borrowed; -1 once moved from
  bool found_nonblocking_ = false;      // O_NONBLOCK as the fd came to us
  SpinPolicy policy_;                   // read once at start-up
  AdaptiveSpinController controller_;  // pure adaptive rule
  bool nonblocking_ = false;            // O_NONBLOCK currently set on fd_
  ChannelStats stats_;                  // counters and policy, always current
  Clock::duration spun_{};              // total time spent spinning
  std::optional<Clock::time_point> deadline_;  // see set_deadline()
  PlacementController placement_;       // pure: free or occupy, from cycle times
  std::unique_ptr<Occupier> occupier_;  // null unless placement can occupy
  std::optional<Clock::time_point> wrote_at_;  // last write, until its cycle ends
  std::uint64_t contentions_seen_ = 0;  // occupier_->contentions() already fed
};

}  // namespace spinrpc
