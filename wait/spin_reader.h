#pragma once

#include <chrono>   // std::chrono
#include <cstddef>  // std::byte, std::size_t
#include <cstdint>  // std::uint64_t
#include <memory>   // std::unique_ptr
#include <optional>  // std::optional

#include "wait/channel_stats.h"
#include "wait/cpu_load_probe.h"
#include "wait/occupier.h"
#include "wait/placement_controller.h"
#include "wait/spin_policy.h"
#include "stream/input_stream.h"
#include "stream/output_stream.h"
#include "trace/trace_ring.h"

namespace spinrpc {

/// The wait at the heart of spinrpc (docs/SPIN.md#the-rule): reads from an
/// InputStream, and when nothing is there yet, tries it without blocking
/// for up to the spin budget before blocking on it. After the first
/// kYieldAfter (3 µs) it yields the CPU between tries (sched_yield) rather
/// than only pausing, so a peer sharing the CPU runs then instead of after
/// the budget. The adaptive rule may suspend spinning; suspended, a wait is
/// one blocking read. Placement (docs/PLACEMENT.md) acts at before_write(),
/// the BeforeWrite hook of the channel's OutputStream.
///
/// What it reads is the stream's business (stream/input_stream.h): this
/// class decides only when to try, yield and block.
///
/// WARNING: one thread at a time.
class SpinReader final : public BeforeWrite {
 public:
  /// Reads `in` (not null) by `policy`.
  SpinReader(std::unique_ptr<InputStream> in, SpinPolicy policy);

  /// The stream read from.
  InputStream& input() noexcept { return *in_; }
  const InputStream& input() const noexcept { return *in_; }

  /// Reads `in` (not null) from now on and returns the stream read so far
  /// (a channel moving onto shared memory: docs/SHARED-MEMORY.md). The
  /// policy and counters carry on; placement too, unless the new stream
  /// says it has nothing to place (its tries are loads from memory:
  /// StreamTraits::Tries).
  std::unique_ptr<InputStream> replace_input(std::unique_ptr<InputStream> in) noexcept;

  /// How many tries a spinning wait makes between two clock reads on a
  /// stream whose tries are loads from memory (StreamTraits::Tries): a
  /// load of the ring's head line costs a small fraction of a clock read,
  /// and this many take about as long as one on a paravirtual clock.
  static constexpr unsigned kMemoryTriesPerClockRead = 64;

  /// What a wait waits for: a new message, or the rest of one whose first
  /// bytes are in (the peer is writing it now).
  enum class WaitFor { message, rest_of_message };

  /// Reads up to `len` (> 0) bytes into `buf`, waiting by the spin rule
  /// until at least one byte arrives. Spins at most the budget (µs), then
  /// blocks until the deadline, if one is set, else without limit. Returns
  /// the byte count, or 0 once the peer has gone. Throws what the stream's
  /// reads throw (stream/input_stream.h), TimedOut past the deadline.
  /// For WaitFor::rest_of_message, a yield that comes back late ends the
  /// spin as usual but is not contention: it is the peer, writing the rest
  /// on our CPU until the pipe is full, and small messages after a big one
  /// must not pay for it
  /// (docs/SPIN-NOTES.md#a-contended-cpu-ends-the-spin-and-backs-the-adaptive-rule-off).
  std::size_t read_some(std::byte* buf, std::size_t len, WaitFor wait_for = WaitFor::message);

  /// Reads what has arrived, never waiting: bytes read, 0 at EOF, -1 when
  /// nothing has arrived. Counts nothing in stats(). For ByteStream's
  /// BufferOptions::read_while_writing.
  long read_available(std::byte* buf, std::size_t len) { return in_->try_read(buf, len); }

  /// Told right before a message the peer waits for is written (the
  /// channel's OutputStream calls it): starts the cycle the placement
  /// policy times (write → the peer's next bytes) and, when occupying
  /// pays, pokes the occupier so that the peer's wake-up finds no idle CPU
  /// but ours (docs/PLACEMENT.md).
  void before_write() noexcept override;

  /// Bounds every later wait: once `deadline` passes with no byte read,
  /// read_some throws TimedOut. std::nullopt (the default) waits forever.
  /// Spinning stays bounded by the budget; only the blocking part of a wait
  /// changes.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
    deadline_ = deadline;
  }
  /// The deadline in force (set_deadline), for a channel moving onto other
  /// streams: its writes stay bounded as its reads are.
  std::optional<std::chrono::steady_clock::time_point> deadline() const noexcept { return deadline_; }

  /// Records every wait in `ring` from now on (docs/TRACE.md#events): how it
  /// waited, how long it spun, how many tries, what ended it; and the
  /// adaptive rule's and placement's decisions as instants. Null (the
  /// default): no trace; each wait then pays one predictable branch.
  /// `ring` must outlive this reader or be replaced first.
  void set_trace(trace::Ring* ring) noexcept { trace_ = ring; }

  /// The counters so far and the policy in force, current when read (the
  /// placement fields are filled in here, not on every cycle; reading them
  /// allocates nothing). The reference stays valid while this reader
  /// lives, its placement fields as of the last call.
  const ChannelStats& stats() const noexcept {
    // Without an occupier the placement fields no longer change: they say
    // what was decided when it went (end_cycle, before_write).
    if (occupier_) update_placement_stats();
    return stats_;
  }

  /// The same counters, for the writing side of the channel (ByteStream
  /// counts its lent parts there), so that one struct holds a channel's.
  ChannelStats& stats() noexcept { return stats_; }

 private:
  using Clock = std::chrono::steady_clock;
  // 1 for a system call, kMemoryTriesPerClockRead for a load from memory.
  static unsigned tries_per_clock_read(const InputStream& in) noexcept;
  std::size_t blocking_read(std::byte* buf, std::size_t len) { return in_->read_blocking(buf, len, deadline_); }
  // After a wait that began at `start` and ended at `now` as `how` says,
  // having spun `spun` over `tries` tries. A wait that read no clock (a
  // ring's quick tries) passes two default time points.
  void end_wait(Clock::time_point start, Clock::time_point now, trace::WaitEnd how, Clock::duration spun = {},
                unsigned tries = 0);
  // end_wait's part when tracing: the wait's record, and an instant for
  // each decision taken since the last one.
  void trace_wait(Clock::time_point start, Clock::time_point now, trace::WaitEnd how, Clock::duration spun,
                  unsigned tries) noexcept;
  // A budget-0 read, timed for the trace.
  std::size_t traced_blocking_read(std::byte* buf, std::size_t len);
  void end_cycle(Clock::time_point now) noexcept;
  // A placement cycle is in progress: a message was written since the last
  // one ended, and there is an occupier to place with (end_wait ends it).
  bool cycle_open() const noexcept { return wrote_at_ && occupier_; }
  // Fills stats_'s placement fields from placement_ and the occupier. On
  // read, not per cycle: off each reply's path (docs/SPIN-NOTES.md, "The
  // reply path").
  void update_placement_stats() const noexcept;
  // After an occupied cycle: true if the peer was found stuck on the
  // occupier's CPU and this thread moved there.
  bool peer_shares_occupier() noexcept;
  // After a spinning wait: counts waits in a row in which another task ran
  // on our CPU between tries; enough of them: block once (before_write).
  void note_shared_cpu(bool shared) noexcept;
  static constexpr unsigned kSharedWaitsToUnplace = 8;
  // A streak of shared waits this soon after the last one is contention.
  static constexpr unsigned kWaitsForStreakToRecur = 256;
  // Our CPU is contended: counts it and backs the adaptive rule off.
  void note_contention() noexcept;
  void add_spin_time(Clock::duration spun) noexcept;
  // Once, at the first wait with nothing waiting or else the second wait:
  // starts the occupier's thread there, off the path of a first reply.
  void start_occupier_when_idle();
  // Every kFollowEvery waits while suspended (SpinPolicy::follow_peer):
  // moves to the CPU the peer last ran on. Finds the peer (StreamTraits::
  // peer) at the first call.
  void follow_peer() noexcept;
  // A /proc read and at most one migration per this many suspended waits:
  // rarely enough to cost nothing measurable, often enough that a split is
  // mended within milliseconds (docs/PLACEMENT.md#following-the-peer-when-the-cpus-are-taken).
  static constexpr unsigned kFollowEvery = 512;
  // Whether placement may occupy yet: a peer we started has been checked
  // for an occupier of its own (end_cycle), or there is none to check.
  bool peer_known() const noexcept { return policy_.peer_pid <= 0 || peer_checked_; }

  std::unique_ptr<InputStream> in_;
  unsigned tries_per_clock_read_;       // from in_'s traits, read once per stream, not per wait
  SpinPolicy policy_;                   // read once at start-up
  AdaptiveSpinController controller_;  // pure adaptive rule
  CpuLoadProbe spare_cpu_;               // asked only when controller_ wants a sample
  // Counters and policy; mutable for the placement fields stats() fills in.
  mutable ChannelStats stats_;
  Clock::duration spun_{};              // total time spent spinning
  std::optional<Clock::time_point> deadline_;  // see set_deadline()
  PlacementController placement_;       // pure: free or occupy, from cycle times
  std::unique_ptr<Occupier> occupier_;  // null unless placement can occupy
  std::optional<Clock::time_point> wrote_at_;  // last write, until its cycle ends
  std::uint64_t contentions_seen_ = 0;  // occupier_->contentions() already fed
  std::uint64_t shared_seen_ = 0;       // occupier_->shared() at the last occupied cycle
  bool peer_checked_ = false;  // peer_occupier_tid(policy_.peer_pid) was asked
  unsigned cycles_ended_ = 0;  // cycles ended before the peer check (at most 2)
  // When the occupier's thread starts (start_occupier_when_idle): at the
  // first wait unless bytes are already waiting, else at the next one.
  enum class OccupierStart { first_wait, next_wait, started };
  OccupierStart occupier_start_ = OccupierStart::first_wait;
  bool occupied_last_ = false;  // the cycle before the one in progress was occupied
  unsigned shared_waits_ = 0;    // spinning waits in a row that shared our CPU
  unsigned waits_since_streak_ = kWaitsForStreakToRecur;  // spinning waits since the last streak (saturating)
  bool unplace_next_ = false;    // note_shared_cpu asks the next cycle to block once
  // How the wait that ends the cycle in progress waits (set by before_write):
  // spin by the rule, or block because the occupier was poked (occupy),
  // because the cycle blocks once to be placed apart (unplace; unshare:
  // off our CPU, for a peer that spins), or because
  // placement chose block.
  enum class CycleWait { spin, occupy, unplace, unshare, block };
  CycleWait cycle_wait_ = CycleWait::spin;
  // Following the peer's CPU while suspended: not asked for (or no budget,
  // or placement off), not yet looked for, found, or nobody to follow.
  enum class Follow { off, unresolved, following, none };
  Follow follow_ = Follow::off;
  unsigned suspended_waits_ = 0;  // waits while suspended, counted for kFollowEvery
  trace::Ring* trace_ = nullptr;  // see set_trace()
  // The decision counters as of the last traced wait: a change is an instant.
  struct TracedDecisions {
    std::uint64_t suspensions = 0, resumptions = 0, contentions = 0, placement_changes = 0, moves = 0,
                  follows = 0, unshares = 0;
  };
  TracedDecisions traced_{};
};

}  // namespace spinrpc
