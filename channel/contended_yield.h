#pragma once

#include <chrono>  // std::chrono::microseconds

namespace spinrpc {

/// A sched_yield that returns later than this let another task run: the CPU
/// is contended. An uncontended yield takes well under 1 µs here; a peer's
/// short turn on the same CPU (an echo: ~2 µs) stays under it; a time slice
/// of someone else (~0.75-3 ms) is far over (docs/SPIN-NOTES.md, "A contended
/// CPU ends the spin"). Shared by the spin loop and the occupier.
inline constexpr std::chrono::microseconds kContendedYield{20};

}  // namespace spinrpc
