#include "node/src/live_channels.h"

#include <algorithm>  // std::erase_if

#include "node/src/channel_core.h"

namespace spinrpc::node {

LiveChannels& LiveChannels::get() {
  static auto* live = new LiveChannels;
  return *live;
}

void LiveChannels::add(napi_env env, ChannelCore* core) {
  const std::lock_guard lock(mutex_);
  entries_.emplace_back(env, core);
}

void LiveChannels::remove(ChannelCore* core) {
  const std::lock_guard lock(mutex_);
  std::erase_if(entries_, [core](const auto& e) { return e.second == core; });
}

void LiveChannels::end_all(napi_env env) {
  std::vector<ChannelCore*> mine;
  {
    const std::lock_guard lock(mutex_);
    for (const auto& [owner, core] : entries_) {
      if (owner == env) mine.push_back(core);
    }
  }
  // Outside the lock: ending a channel may run a finalizer that removes one.
  for (ChannelCore* core : mine) core->end_now();
}

}  // namespace spinrpc::node
