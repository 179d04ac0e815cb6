#include "bench/harness/spin_counters.h"

#include <simdjson.h>  // simdjson::dom::parser

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

namespace spinrpc::bench {

SpinCounters operator-(const SpinCounters& later, const SpinCounters& earlier) noexcept {
  SpinCounters d = later;
  for (std::size_t i = 0; i < d.values.size(); ++i) d.values[i] -= earlier.values[i];
  return d;
}

SpinCounters& operator+=(SpinCounters& sum, const SpinCounters& more) noexcept {
  for (std::size_t i = 0; i < sum.values.size(); ++i) sum.values[i] += more.values[i];
  return sum;
}

SpinCounters client_spin_counters(const SyncRpcChannel& channel) {
  const ChannelStats s = channel.stats();
  SpinCounters c;
  for (std::size_t i = 0; i < kChannelCounters.size(); ++i) c.values[i] = s.*kChannelCounters[i].member;
  c.budget = s.budget;
  c.adaptive = s.adaptive;
  return c;
}

SpinCounters server_spin_counters(SyncRpcChannel& channel) {
  const std::string json = channel.request("getChannelStats", "");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) {
    throw std::runtime_error("getChannelStats replied with invalid JSON: " + json);
  }
  const auto lacks = [&](std::string_view key) {
    return std::runtime_error("getChannelStats reply lacks \"" + std::string(key) + "\": " + json);
  };
  const auto u64 = [&](std::string_view key) {
    std::uint64_t value = 0;
    if (doc[key].get(value) != simdjson::SUCCESS) throw lacks(key);
    return value;
  };
  SpinCounters c;
  for (std::size_t i = 0; i < kChannelCounters.size(); ++i) c.values[i] = u64(kChannelCounters[i].name);
  c.budget = std::chrono::microseconds(static_cast<long long>(u64("budget_us")));
  bool adaptive = false;
  if (doc["adaptive"].get(adaptive) != simdjson::SUCCESS) throw lacks("adaptive");
  c.adaptive = adaptive;
  return c;
}

}  // namespace spinrpc::bench
