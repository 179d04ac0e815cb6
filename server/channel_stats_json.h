#pragma once

#include <string>  // std::string

#include "wait/channel_stats.h"

namespace spinrpc {

/// The stats as one JSON object: every field of for_each_stats_field
/// (wait/channel_stats.h) under its own name, in that order: the counters
/// ("waits", ..., "unlent_parts"), "budget_us", "adaptive", "spinning",
/// "budget_reason", then placement's setting and decision ("placement", ...,
/// "followed_pid"; docs/PLACEMENT.md). getChannelStats answers with it and
/// --stats prints it; the binding's stats() is the same object.
std::string to_json(const ChannelStats& stats);
/// The same JSON appended to `out`: no allocation once `out` has the room.
void append_json(std::string& out, const ChannelStats& stats);

}  // namespace spinrpc
