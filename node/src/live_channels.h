#pragma once

#include <napi.h>

#include <mutex>    // std::mutex
#include <utility>  // std::pair
#include <vector>   // std::vector

namespace spinrpc::node {

class ChannelCore;

/// Every live ChannelCore with the environment (main thread or worker)
/// that owns it, so that an environment's teardown ends its channels.
/// Process-wide and never destroyed, so a finalizer that runs late in
/// teardown still finds it. Any thread.
class LiveChannels {
 public:
  static LiveChannels& get();
  void add(napi_env env, ChannelCore* core);
  void remove(ChannelCore* core);
  /// Ends every channel of `env` that is still open.
  void end_all(napi_env env);

 private:
  std::mutex mutex_;
  std::vector<std::pair<napi_env, ChannelCore*>> entries_;
};

}  // namespace spinrpc::node
