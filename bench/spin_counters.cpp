#include "bench/spin_counters.h"

#include <simdjson.h>  // simdjson::dom::parser

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

namespace spinrpc::bench {

SpinCounters operator-(const SpinCounters& later, const SpinCounters& earlier) noexcept {
  SpinCounters d = later;
  d.waits -= earlier.waits;
  d.spin_hits -= earlier.spin_hits;
  d.spin_misses -= earlier.spin_misses;
  d.spin_contended -= earlier.spin_contended;
  d.suspensions -= earlier.suspensions;
  d.spin_us -= earlier.spin_us;
  return d;
}

SpinCounters client_spin_counters(const SyncRpcChannel& channel) {
  const ChannelStats s = channel.stats();
  SpinCounters c;
  c.waits = s.waits;
  c.spin_hits = s.spin_hits;
  c.spin_misses = s.spin_misses;
  c.spin_contended = s.spin_contended;
  c.suspensions = s.suspensions;
  c.spin_us = s.spin_us;
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
  const auto u64 = [&](const char* key) {
    std::uint64_t value = 0;
    if (doc[key].get(value) != simdjson::SUCCESS) {
      throw std::runtime_error(std::string("getChannelStats reply lacks \"") + key + "\": " + json);
    }
    return value;
  };
  SpinCounters c;
  c.waits = u64("waits");
  c.spin_hits = u64("spin_hits");
  c.spin_misses = u64("spin_misses");
  c.spin_contended = u64("spin_contended");
  c.suspensions = u64("suspensions");
  c.spin_us = u64("spin_us");
  c.budget = std::chrono::microseconds(static_cast<long long>(u64("budget_us")));
  bool adaptive = false;
  if (doc["adaptive"].get(adaptive) != simdjson::SUCCESS) {
    throw std::runtime_error("getChannelStats reply lacks \"adaptive\": " + json);
  }
  c.adaptive = adaptive;
  return c;
}

}  // namespace spinrpc::bench
