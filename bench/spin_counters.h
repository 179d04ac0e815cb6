#pragma once

#include <chrono>   // std::chrono::microseconds
#include <cstdint>  // std::uint64_t

#include "client-shim/sync_rpc_channel.h"

namespace spinrpc::bench {

/// The part of a channel's spin counters a benchmark reports
/// (docs/SPIN.md#counters), and the policy that was in force. Counters are
/// totals since the channel opened; subtract two readings for one loop.
struct SpinCounters {
  std::uint64_t waits = 0;
  std::uint64_t spin_hits = 0;    ///< bytes came within the budget
  std::uint64_t spin_misses = 0;  ///< budget spent (or CPU contended), then blocked
  std::uint64_t spin_contended = 0;  ///< of spin_misses: ended early, the CPU was contended
  std::uint64_t suspensions = 0;  ///< adaptive rule switched spinning off
  std::uint64_t spin_us = 0;      ///< µs spent spinning
  std::chrono::microseconds budget{0};
  bool adaptive = false;
};

/// Counters of `later` minus those of `earlier`; policy fields from `later`.
SpinCounters operator-(const SpinCounters& later, const SpinCounters& earlier) noexcept;

/// The client shim's own reader counters (SyncRpcChannel::stats()).
SpinCounters client_spin_counters(const SyncRpcChannel& channel);

/// spinrpc-server's reader counters, asked for with a getChannelStats
/// request (one round trip: call it outside the timed region). Throws
/// std::runtime_error if the reply is not the JSON server/channel_stats_json.h
/// describes; RemoteError from a server without that method (tsgo).
SpinCounters server_spin_counters(SyncRpcChannel& channel);

}  // namespace spinrpc::bench
