#pragma once

#include <sched.h>  // cpu_set_t

#include <atomic>   // std::atomic
#include <chrono>   // std::chrono
#include <cstdint>  // std::uint32_t, std::uint64_t
#include <thread>   // std::thread
#include <utility>  // std::pair

namespace spinrpc {

/// A thread that keeps the CPUs other than the caller's busy for a bounded
/// time after each poke(), so that the kernel, placing the wake-up of a peer
/// blocked in read(2), finds no idle CPU in the cache domain and keeps the
/// peer on the CPU the caller is about to leave (docs/PLACEMENT.md).
///
/// It is an ordinary SCHED_OTHER thread on purpose: the kernel counts a CPU
/// that runs only SCHED_IDLE tasks as idle when it places a wake-up, so an
/// idle-class occupier keeps nothing from the halted CPUs. Between tries
/// it yields; a yield that comes back a time slice late, or more than
/// kTurnsPerCycle short turns of others in one cycle, each with the thread
/// switched out (a slow yield without a switch is the host's or
/// interrupts' time: ContextSwitchWatch), mean another task
/// wants that CPU, and it lets go at once (contentions()) and sleeps until
/// the next poke. It never spins longer than `hold` past the last poke, and sleeps on
/// a futex otherwise. The thread starts with start() (SpinReader calls it
/// at its first idle moment, off the path of a first reply; so that no
/// request in steady state allocates), or else at the first poke, and
/// sleeps until a poke. The thread holds no file descriptor: it leaves the
/// process's descriptor table at birth, so that the reader's reads and
/// writes stay the table's sole user's (descriptor/descriptor_table.h).
///
/// WARNING: poke() from one thread at a time (the channel's reader).
class Occupier {
 public:
  /// The thread's name (/proc/PID/task/TID/comm), by which a peer that
  /// started this process sees that it places (peer_occupier_tid).
  static constexpr const char* kThreadName = "spinrpc-occupy";

  /// `hold`: how long to keep occupying after a poke (the spin budget).
  /// No thread yet (start()). Never throws: without 2 allowed CPUs or a
  /// thread, poke() returns false.
  explicit Occupier(std::chrono::microseconds hold) noexcept;
  /// Starts the thread, asleep, named kThreadName. Returns false when it
  /// cannot occupy (fewer than 2 CPUs allowed, or no thread); later calls
  /// only return the same answer.
  bool start() noexcept;
  Occupier(const Occupier&) = delete;
  Occupier& operator=(const Occupier&) = delete;
  /// Stops and joins the thread. Never throws.
  ~Occupier();

  /// Occupies every allowed CPU but `avoid_cpu` (the caller's, from
  /// sched_getcpu) for `hold` from now. Cheap while the thread is awake (two
  /// atomic stores); one futex wake when it sleeps. Returns false when it
  /// cannot occupy: fewer than 2 CPUs allowed, or the thread could not start.
  bool poke(int avoid_cpu) noexcept;

  /// Times it let go because another task wanted its CPU.
  std::uint64_t contentions() const noexcept { return contentions_.load(std::memory_order_relaxed); }
  /// Yields that came back more than kSharedYield (wait/contended_yield.h) but at most
  /// kContendedSlice late, with the thread switched out meanwhile: a task
  /// ran a short turn on the occupier's CPU.
  /// Cycle after cycle, that task is the peer, stuck on the CPU we keep
  /// busy (see move_to_cpu).
  std::uint64_t shared() const noexcept { return shared_.load(std::memory_order_relaxed); }
  /// Yields that came back more than kSharedYield late without the thread
  /// switched out: the host's or interrupts' time, neither a turn nor
  /// contention (ContextSwitchWatch).
  std::uint64_t stolen() const noexcept { return stolen_.load(std::memory_order_relaxed); }
  /// The CPU it last ran on while occupying, and the caller's CPU it was
  /// keeping away from at that moment; -1 before it ran.
  int cpu() const noexcept { return where().first; }
  int avoided_cpu() const noexcept { return where().second; }
  /// Both at once, from one snapshot: {cpu(), avoided_cpu()}. Never equal
  /// but for {-1, -1} before it ran.
  std::pair<int, int> where() const noexcept {
    const std::uint64_t w = where_.load(std::memory_order_relaxed);
    return {static_cast<int>(static_cast<std::uint32_t>(w >> 32)), static_cast<int>(static_cast<std::uint32_t>(w))};
  }
  /// Total µs it spent occupying (wall time, yields included).
  std::uint64_t occupied_us() const noexcept { return occupied_ns_.load(std::memory_order_relaxed) / 1000; }

 private:
  void run() noexcept;

  /// A yield that returns this late means another task took a time slice
  /// on the occupier's CPU (EEVDF's base slice is 0.75 ms and more): let
  /// go. Shorter delays are not contention: the peer passes through our
  /// CPU while it moves to the reader's, and kernel threads pass through,
  /// so the spin loop's kContendedYield here would let go on a quiet
  /// machine too (docs/PLACEMENT.md#the-decision).
  static constexpr std::chrono::microseconds kContendedSlice{250};
  /// More short turns of others than this within one cycle (between two
  /// pokes) is contention too: a peer that blocks takes one turn per cycle
  /// (two when it moves over); a peer that spins on this CPU takes one at
  /// every try. Occupying cannot help a spinning peer (it is never woken),
  /// and sitting on its CPU slows it down
  /// (docs/PLACEMENT.md#two-spinners-on-one-cpu).
  static constexpr unsigned kTurnsPerCycle = 2;

  std::chrono::microseconds hold_;
  std::thread thread_;
  bool failed_ = false;                       // could not start: never again
  std::atomic<std::uint32_t> pokes_{0};       // futex word: bumped per poke
  std::atomic<bool> sleeping_{false};         // the thread waits on pokes_
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> until_ns_{0};     // steady_clock ns: occupy until then
  cpu_set_t allowed_;                         // the process's CPUs at start
  int pinned_away_ = -2;                      // the CPU the thread is pinned away from (poker's thread only)
  std::atomic<std::uint64_t> contentions_{0};
  std::atomic<std::uint64_t> shared_{0};
  std::atomic<std::uint64_t> stolen_{0};   // slow yields without a switch
  std::atomic<int> pin_{-1};                  // the CPU poke() last pinned it away from
  std::atomic<std::uint64_t> where_{~std::uint64_t{0}};  // {cpu, avoided} as two 32-bit halves
  std::atomic<std::uint64_t> occupied_ns_{0};
};

/// The thread id of process `pid`'s occupier thread (a thread named
/// Occupier::kThreadName: a spinrpc channel with placement on), or 0 when
/// it runs none or we cannot tell. Reads /proc/PID/task/*/comm. Never throws.
int peer_occupier_tid(int pid) noexcept;

/// Moves the calling thread to `cpu` now and leaves its affinity mask as it
/// was: pins it to `cpu` alone (the kernel migrates it before the call
/// returns), then restores the mask, which still allows `cpu`, so it stays.
/// Placement's way out of a split it cannot fix from where it is: the peer
/// stuck on the CPU the occupier keeps busy, woken there again and again
/// without the kernel choosing a CPU (a task that blocks before it has had
/// its fair share is left queued, "delayed dequeue", and its next wake-up
/// finds it still there; docs/PLACEMENT.md#the-peer-stuck-on-the-occupiers-cpu).
/// Returns false, changing nothing, when `cpu` is not allowed or a call fails.
bool move_to_cpu(int cpu) noexcept;

/// Keeps the calling thread off `cpu` while it lives and then leaves its
/// affinity mask as it was. The constructor removes `cpu` from the mask (the
/// kernel migrates the thread before the call returns); the destructor puts
/// the saved mask back. For a reader that blocks once to leave a CPU it
/// shares with a spinning peer: blocking alone did not move it, because a
/// pipe wake-up is placed on the waker's CPU (a sync wake-up) or finds the
/// reader still queued there (delayed dequeue), and the waker is the
/// spinning peer itself (perf sched timehist: binding and server both on one
/// CPU for 8,000 switches while the other idled;
/// docs/PLACEMENT.md#two-spinners-on-one-cpu). Does nothing when `cpu` is
/// not in the mask, is the only CPU in it, or a call fails. A mask changed
/// by someone else while it lives is left as they set it. Never throws.
class AwayFromCpu {
 public:
  explicit AwayFromCpu(int cpu) noexcept;
  ~AwayFromCpu();
  AwayFromCpu(const AwayFromCpu&) = delete;
  AwayFromCpu& operator=(const AwayFromCpu&) = delete;
  /// Whether the mask was narrowed (and will be restored).
  bool active() const noexcept { return active_; }

 private:
  cpu_set_t saved_;     // the mask found, put back
  cpu_set_t narrowed_;  // the mask set: still there at the end, or someone else's stays
  bool active_ = false;
};

}  // namespace spinrpc
