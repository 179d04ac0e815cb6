#pragma once

#include <chrono>  // std::chrono::microseconds

namespace spinrpc {

/// A sched_yield that returns later than this let another task run: the CPU
/// is contended. An uncontended yield takes well under 1 µs here; a peer's
/// short turn on the same CPU (an echo: ~2 µs) stays under it; a time slice
/// of someone else (~0.75-3 ms) is far over (docs/SPIN-NOTES.md, "A contended
/// CPU ends the spin"). Shared by the spin loop and the occupier.
inline constexpr std::chrono::microseconds kContendedYield{20};

/// A yield that returns later than this (but not contended) let a short turn
/// of another task run: an uncontended yield returns in ~1 µs here, a
/// peer's turn takes 3 µs and more. Used by the occupier (the peer stuck on
/// its CPU) and the spin loop (a spinning peer sharing our CPU), see
/// docs/PLACEMENT.md#the-peer-stuck-on-the-occupiers-cpu.
inline constexpr std::chrono::microseconds kSharedYield{3};

/// A spinning wait tries back to back for this long before it starts
/// yielding between tries. A spinning peer on another CPU answers within it
/// (a shim ↔ server echo waits ~1-1.5 µs per side), and each yield costs
/// ~0.3-0.5 µs a wait would otherwise spend trying: yielding from the first
/// try made the shim ↔ server echo 0.6 µs slower. A peer that needs our
/// CPU waits at most this long for it; past it, the yields hand the CPU over
/// and tell the spin loop that the CPU is shared, and the next wait yields
/// from its first try (docs/SPIN-NOTES.md#yield-after-a-few-microseconds).
inline constexpr std::chrono::microseconds kYieldAfter{3};

}  // namespace spinrpc
