#pragma once

#include <string>  // std::string

#include "wait/channel_stats.h"

namespace spinrpc {

/// The stats as one JSON object: every counter of kChannelCounters under
/// its own name, in that order ("waits", "spin_hits", ..., "spin_time_us"),
/// then "budget_us", "adaptive", "spinning", "budget_reason", and the
/// placement decision: "placement", "placement_setting_reason",
/// "placement_mode", "placement_decision", "free_cycle_ns",
/// "occupy_cycle_ns", "block_cycle_ns", "cpu", "occupier_cpu", "occupier_avoided_cpu", "followed_pid" (docs/PLACEMENT.md).
/// getChannelStats answers with it and --stats prints it.
std::string to_json(const ChannelStats& stats);
/// The same JSON appended to `out`: no allocation once `out` has the room.
void append_json(std::string& out, const ChannelStats& stats);

}  // namespace spinrpc
