#pragma once

#include <chrono>   // std::chrono::microseconds
#include <cstdint>  // std::uint64_t
#include <string>   // std::string

namespace spinrpc {

/// What a channel's reader did (docs/SPIN.md#counters).
/// Counting is always on: a few integer increments per wait.
///
/// Every read that needed bytes is one wait:
/// waits = spin_hits + spin_misses + blocked_while_suspended + plain_waits.
struct ChannelStats {
  std::uint64_t waits = 0;                    ///< reads that needed bytes
  std::uint64_t spin_hits = 0;                ///< bytes came within the spin budget
  std::uint64_t spin_misses = 0;              ///< budget spent (or CPU contended), then blocked
  std::uint64_t spin_contended = 0;           ///< of spin_misses: a yield gave the CPU away, so the spin stopped early
  std::uint64_t blocked_while_suspended = 0;  ///< blocked at once: adaptive rule suspended spinning
  std::uint64_t plain_waits = 0;              ///< blocked at once: budget 0
  std::uint64_t suspensions = 0;              ///< adaptive rule switched spinning off
  std::uint64_t resumptions = 0;              ///< adaptive rule switched spinning back on
  std::uint64_t spin_us = 0;                  ///< total wall µs spent in the spin loop (yields included)
  std::chrono::microseconds budget{0};        ///< effective spin budget
  bool adaptive = false;                      ///< adaptive rule on
  bool spinning = false;                      ///< the next wait spins
  std::string budget_reason;                  ///< why `budget` (SpinPolicy::reason)
};

}  // namespace spinrpc
