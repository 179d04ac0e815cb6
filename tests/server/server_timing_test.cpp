// ServerTiming: what --timing collects and getServerTiming answers. The
// exact JSON comes from fixed inputs; its shape (keys, their order, how
// numbers and timestamps look) is compared with the real tsgo's reply.
#include <chrono>   // std::chrono
#include <regex>    // std::regex_replace
#include <string>   // std::string

#include <doctest/doctest.h>

#include "client-shim/sync_rpc_channel.h"
#include "server/server_timing.h"
#include "tests/support/paths.h"  // tsgo_path

namespace {

using namespace std::chrono_literals;
using spinrpc::ServerTiming;

// 2026-01-01T00:00:00.123Z plus `ms` milliseconds.
std::chrono::system_clock::time_point at(long long ms) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(1767225600123LL + ms));
}

TEST_CASE("ServerTiming without --timing answers tsgo's fixed disabled reply and records nothing") {
  ServerTiming timing(false);
  timing.record("echo", 5us, at(0));
  CHECK(timing.snapshot_json() ==
        R"({"enabled":false,"totals":{"requestCount":0,"totalProcessingTimeMs":0},"recentRequests":[]})");
}

TEST_CASE("ServerTiming sums float64 milliseconds and lists requests oldest first") {
  ServerTiming timing(true);
  CHECK(timing.snapshot_json() ==
        R"({"enabled":true,"totals":{"requestCount":0,"totalProcessingTimeMs":0},"recentRequests":[]})");
  timing.record("echo", 100ns, at(0));
  timing.record("initialize", 200ns, at(7));
  CHECK(timing.snapshot_json() ==
        R"({"enabled":true,"totals":{"requestCount":2,"totalProcessingTimeMs":0.00030000000000000003},)"
        R"("recentRequests":[{"method":"echo","processingTimeMs":0.0001,"timestamp":1767225600123},)"
        R"({"method":"initialize","processingTimeMs":0.0002,"timestamp":1767225600130}]})");
}

TEST_CASE("ServerTiming keeps the 5 most recent requests and counts them all") {
  ServerTiming timing(true);
  for (int i = 0; i < 7; ++i) timing.record("m" + std::to_string(i), 1ms, at(i));
  const std::string json(timing.snapshot_json());
  CHECK(json.find(R"("requestCount":7,"totalProcessingTimeMs":7})") != std::string::npos);
  CHECK(json.find(R"("m1")") == std::string::npos);
  const std::size_t m2 = json.find(R"("m2")");
  const std::size_t m6 = json.find(R"("m6")");
  REQUIRE(m2 != std::string::npos);
  REQUIRE(m6 != std::string::npos);
  CHECK(m2 < m6);
  CHECK(json.find(R"("timestamp":1767225600129})") != std::string::npos);
}

TEST_CASE("ServerTiming::reset clears totals and recent requests") {
  ServerTiming timing(true);
  timing.record("echo", 1ms, at(0));
  timing.reset();
  CHECK(timing.snapshot_json() ==
        R"({"enabled":true,"totals":{"requestCount":0,"totalProcessingTimeMs":0},"recentRequests":[]})");
  timing.record("echo", 2ms, at(1));
  CHECK(std::string(timing.snapshot_json()).find(R"("requestCount":1,"totalProcessingTimeMs":2})") !=
        std::string::npos);
}

TEST_CASE("ServerTiming's reply has the shape of the real tsgo's --timing reply") {
  // Numbers differ run to run; everything else must not.
  const auto shape = [](const std::string& json) {
    return std::regex_replace(json, std::regex(R"(-?[0-9][0-9.e+-]*)"), "N");
  };
  spinrpc::SyncRpcChannel tsgo(spinrpc::test::tsgo_path(), {"--api", "--timing"});
  tsgo.request("echo", "x");
  tsgo.request("initialize", "null");
  const std::string theirs = tsgo.request("getServerTiming", "");
  CHECK(tsgo.close() == 0);

  ServerTiming ours(true);
  ours.record("echo", 771ns, at(0));
  ours.record("initialize", 12345ns, at(1));
  CAPTURE(theirs);
  CHECK(shape(std::string(ours.snapshot_json())) == shape(theirs));
}

}  // namespace
