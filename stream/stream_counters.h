#pragma once

#include <cstdint>  // std::uint64_t

namespace spinrpc {

/// What a connection's streams count of their own, beside the wait rule's
/// counters: merged into ChannelStats when it is read (docs/SPIN.md#counters).
struct StreamCounters {
  std::uint64_t lent_parts = 0;    ///< big parts lent to a pipe (BufferOptions::LargeWrites)
  std::uint64_t unlent_parts = 0;  ///< big parts copied although lending is on
  std::uint64_t ring_sleeps = 0;   ///< a shared-memory read that slept on its doorbell
  std::uint64_t ring_wakes = 0;    ///< doorbells rung and futex wakes sent to a sleeping peer
  std::uint64_t ring_full_waits = 0;  ///< writes that found the ring full and waited for room
};

}  // namespace spinrpc
