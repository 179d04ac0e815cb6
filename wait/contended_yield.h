#pragma once

#include <sys/resource.h>  // ::getrusage, RUSAGE_THREAD

#include <chrono>   // std::chrono::microseconds
#include <cstdint>  // std::uint64_t
#include <optional>  // std::optional

namespace spinrpc {

/// A sched_yield that returns later than this let another task run: the CPU
/// is contended. It lies between a peer's short turn on the same CPU (an
/// echo), which stays under it, and a time slice of someone else, which is
/// far over (docs/SPIN-NOTES.md, "A contended CPU ends the spin", has the
/// figures). Shared by the spin loop and the occupier.
inline constexpr std::chrono::microseconds kContendedYield{20};

/// A yield that returns later than this (but not contended) let a short turn
/// of another task run: it lies between an uncontended yield and a peer's
/// shortest turn. Used by the occupier (the peer stuck on
/// its CPU) and the spin loop (a spinning peer sharing our CPU), see
/// docs/PLACEMENT.md#the-peer-stuck-on-the-occupiers-cpu.
inline constexpr std::chrono::microseconds kSharedYield{3};

/// A spinning wait tries back to back for this long before it starts
/// yielding between tries. A spinning peer on another CPU answers within it
/// (a shim ↔ server echo waits about a microsecond per side), and each
/// yield costs a fraction of that a wait would otherwise spend trying. A peer that needs our
/// CPU waits at most this long for it; past it, the yields hand the CPU over
/// and tell the spin loop that the CPU is shared, and the next wait yields
/// from its first try (docs/SPIN-NOTES.md#yield-after-a-few-microseconds).
inline constexpr std::chrono::microseconds kYieldAfter{3};

/// Whether the calling thread was switched off its CPU between two looks
/// (voluntary and involuntary context switches; getrusage RUSAGE_THREAD,
/// one system call a look). A slow yield during which it was not ran no other task
/// of this system on our CPU: the time went to the hypervisor (a vCPU
/// descheduled by its host) or to interrupts, which no spinner here takes
/// from anyone and blocking would not give back
/// (docs/SPIN-NOTES.md#a-late-yield-is-contention-only-if-another-task-ran).
/// A yield that hands the CPU to another task counts as an involuntary
/// switch. The spin loop and the occupier judge their slow yields by it.
/// One thread; never throws.
class ContextSwitchWatch {
 public:
  /// Takes the count now (the spin loop: before a wait's first yield).
  void mark() noexcept {
    count_ = count();
    marked_ = true;
  }
  bool marked() const noexcept { return marked_; }
  /// Whether the thread was switched out since mark() or the last call,
  /// and marks anew. True when a count is unknown (the kernel refused):
  /// then every slow yield is taken for a switch, as if this could not tell.
  bool switched() noexcept {
    const std::optional<std::uint64_t> now = count();
    const bool switched = !now || !count_ || *now != *count_;
    count_ = now;
    marked_ = true;
    return switched;
  }

 private:
  static std::optional<std::uint64_t> count() noexcept {
    rusage usage{};
    if (::getrusage(RUSAGE_THREAD, &usage) != 0) return std::nullopt;
    return static_cast<std::uint64_t>(usage.ru_nvcsw) + static_cast<std::uint64_t>(usage.ru_nivcsw);
  }

  std::optional<std::uint64_t> count_;
  bool marked_ = false;
};

}  // namespace spinrpc
