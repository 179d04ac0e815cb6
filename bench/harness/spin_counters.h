#pragma once

#include <array>    // std::array
#include <chrono>   // std::chrono::microseconds
#include <cstdint>  // std::uint64_t

#include "wait/channel_stats.h"
#include "client-shim/sync_rpc_channel.h"

namespace spinrpc::bench {

/// A channel's spin counters (every one of kChannelCounters, in its order;
/// docs/SPIN.md#counters) and the policy that was in force. Counters are totals since the channel
/// opened; subtract two readings for one loop. Trivially copyable, so a
/// forked client can send it back as raw bytes.
struct SpinCounters {
  std::array<std::uint64_t, kChannelCounters.size()> values{};  ///< kChannelCounters order
  std::chrono::microseconds budget{0};
  bool adaptive = false;
};

/// Counters of `later` minus those of `earlier`; policy fields from `later`.
SpinCounters operator-(const SpinCounters& later, const SpinCounters& earlier) noexcept;
/// Adds `more`'s counters to `sum` (pairs running side by side).
SpinCounters& operator+=(SpinCounters& sum, const SpinCounters& more) noexcept;

/// The client shim's own reader counters (SyncRpcChannel::stats()).
SpinCounters client_spin_counters(const SyncRpcChannel& channel);

/// spinrpc-server's reader counters, asked for with a getChannelStats
/// request (one round trip: call it outside the timed region). Throws
/// std::runtime_error if the reply is not the JSON server/channel_stats_json.h
/// describes; RemoteError from a server without that method (tsgo).
SpinCounters server_spin_counters(SyncRpcChannel& channel);

}  // namespace spinrpc::bench
