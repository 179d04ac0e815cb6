// The spin policy at both ends of a real session: SyncRpcChannel's options
// and environment, and spinrpc-server's flags, read back through stats()
// and getChannelStats.
#include <cstdlib>  // std::getenv, ::setenv, ::unsetenv
#include <string>   // std::string
#include <vector>   // std::vector

#include <doctest/doctest.h>
#include <simdjson.h>

#include "client-shim/sync_rpc_channel.h"
#include "tests/support/paths.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::SyncRpcChannel;
using spinrpc::SyncRpcOptions;
using spinrpc::test::bin_path;

SyncRpcOptions with_spin(long long us, bool adaptive) {
  SyncRpcOptions options;
  options.spin.spin_us = us;
  options.spin.adaptive = adaptive;
  return options;
}

void echo_many(SyncRpcChannel& channel, int count) {
  for (int i = 0; i < count; ++i) {
    const std::string payload = "ping " + std::to_string(i);
    REQUIRE(channel.request("echo", payload) == payload);
  }
}

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) ::unsetenv(name_);
    else ::setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

TEST_CASE("SyncRpcChannel with a fixed budget ends every wait as a spin hit, a spin miss or an occupied wait") {
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api", "--spin-us", "100", "--adaptive=0"},
                         with_spin(100, false));
  echo_many(channel, 300);
  const auto stats = channel.stats();
  CHECK(stats.budget == 100us);
  CHECK_FALSE(stats.adaptive);
  CHECK(stats.waits >= 300);
  // Placement (auto by default) blocks at once in the cycles it occupies.
  CHECK(stats.spin_hits + stats.spin_misses + stats.occupied_waits == stats.waits);
  CHECK(stats.plain_waits == 0);
  CHECK(stats.budget_reason == "--spin-us 100");
}

TEST_CASE("SyncRpcChannel with budget 0 waits in plain blocking reads") {
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api", "--spin-us", "0"}, with_spin(0, true));
  echo_many(channel, 50);
  const auto stats = channel.stats();
  CHECK(stats.waits >= 50);
  CHECK(stats.plain_waits == stats.waits);
  CHECK(stats.spin_hits + stats.spin_misses + stats.blocked_while_suspended == 0);
}

TEST_CASE("SyncRpcChannel takes its budget from TSGO_SYNC_SPIN_US when its options leave it unset") {
  ScopedEnv budget("TSGO_SYNC_SPIN_US", "37");
  ScopedEnv adaptive("TSGO_SYNC_SPIN_ADAPTIVE", "0");
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"});
  echo_many(channel, 5);
  const auto stats = channel.stats();
  CHECK(stats.budget == 37us);
  CHECK_FALSE(stats.adaptive);
  CHECK(stats.budget_reason == "TSGO_SYNC_SPIN_US=37");
}

TEST_CASE("spinrpc-server answers getChannelStats with its own spin counters and policy") {
  ScopedEnv budget("TSGO_SYNC_SPIN_US", "55");  // the server inherits it
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"}, with_spin(0, true));
  echo_many(channel, 20);
  const std::string json = channel.request("getChannelStats", "");
  simdjson::dom::parser parser;
  const simdjson::dom::element stats = parser.parse(json);
  CHECK(stats["budget_us"].get_uint64().value() == 55);
  CHECK(std::string(stats["budget_reason"].get_string().value()) == "TSGO_SYNC_SPIN_US=55");
  CHECK(stats["waits"].get_uint64().value() >= 21);
  const std::uint64_t waits = stats["waits"].get_uint64().value();
  const std::uint64_t sum = stats["spin_hits"].get_uint64().value() +
                            stats["spin_misses"].get_uint64().value() +
                            stats["blocked_while_suspended"].get_uint64().value() +
                            stats["plain_waits"].get_uint64().value() +
                            stats["occupied_waits"].get_uint64().value();
  CHECK(sum == waits);
}

TEST_CASE("spinrpc-server lets --spin-us beat TSGO_SYNC_SPIN_US") {
  ScopedEnv budget("TSGO_SYNC_SPIN_US", "55");
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api", "--spin-us", "0"}, with_spin(0, true));
  simdjson::dom::parser parser;
  const simdjson::dom::element stats = parser.parse(channel.request("getChannelStats", ""));
  CHECK(stats["budget_us"].get_uint64().value() == 0);
  CHECK(std::string(stats["budget_reason"].get_string().value()) == "--spin-us 0");
}

}  // namespace
