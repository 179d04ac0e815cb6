// batchRequests (API 7.1) against the real spinrpc-server: pages never
// exceed the server's message limit, whatever page the client asks for,
// and an item no page can carry is an error entry naming the limit, never a
// cut reply or a hang. The shapes themselves are compared with 7.1's real
// server in tests/interop/conformance.test.mjs.
#include <string>  // std::string
#include <vector>  // std::vector

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "client-shim/sync_rpc_channel.h"
#include "tests/support/paths.h"

namespace {

using nlohmann::json;
using spinrpc::SyncRpcChannel;

// Fetches every page of `batch`, checking each reply's size; returns the
// responses in order.
json fetch_all(SyncRpcChannel& server, json batch, std::size_t max_reply_bytes, int& pages) {
  json responses = json::array();
  for (pages = 1;; ++pages) {
    const std::string reply = server.request("batchRequests", batch.dump());
    CHECK(reply.size() <= max_reply_bytes);
    const json page = json::parse(reply);
    for (const json& entry : page.at("responses")) responses.push_back(entry);
    if (!page.contains("continuationToken")) return responses;
    batch = json{{"requests", json::array()}, {"continuationToken", page.at("continuationToken")}};
    REQUIRE(pages < 100);
  }
}

TEST_CASE("batchRequests pages fit --max-message-bytes even when the client asks for larger pages") {
  constexpr std::size_t kLimit = 4096;
  SyncRpcChannel server(spinrpc::test::bin_path("spinrpc-server"),
                        {"--api", "--useCaseSensitiveFileNames", "--max-message-bytes", std::to_string(kLimit)});
  json batch{{"requests", json::array()}, {"maxResponseBytesPerPage", 1'000'000}};
  // The request fits the limit; the replies, base64 in MessagePack mode,
  // take a third more and do not fit one page.
  for (int i = 0; i < 10; ++i) {
    batch["requests"].push_back({{"method", "echo"}, {"params", std::string(330, static_cast<char>('a' + i))}});
  }
  int pages = 0;
  const json responses = fetch_all(server, batch, kLimit, pages);
  CHECK(pages > 1);
  REQUIRE(responses.size() == 10);
  for (const json& entry : responses) {
    CHECK(entry.at("method") == "echo");
    CHECK_FALSE(entry.contains("error"));
  }
  server.close();
}

TEST_CASE("a batchRequests item larger than any reply may be is an error entry naming the limit; the rest succeed") {
  constexpr std::size_t kLimit = 4096;
  SyncRpcChannel server(spinrpc::test::bin_path("spinrpc-server"),
                        {"--api", "--useCaseSensitiveFileNames", "--max-message-bytes", std::to_string(kLimit)});
  const json batch{{"requests", json::array({json{{"method", "ping"}},
                                             json{{"method", "echo"}, {"params", std::string(2900, 'x')}},
                                             json{{"method", "ping"}}})}};
  int pages = 0;
  const json responses = fetch_all(server, batch, kLimit, pages);
  REQUIRE(responses.size() == 3);
  CHECK(responses[0] == json{{"method", "ping"}, {"result", "pong"}});
  CHECK(responses[2] == json{{"method", "ping"}, {"result", "pong"}});
  CHECK(responses[1].at("result").is_null());
  const std::string error = responses[1].at("error");
  CHECK(error.find("api: the result of echo is ") == 0);
  CHECK(error.find("the message limit is 4096 bytes: --max-message-bytes") != std::string::npos);
  // The server serves on.
  CHECK(server.request("echo", "after") == "after");
  server.close();
}

TEST_CASE("batchRequests is 7.0's unknown method, in 7.0's words") {
  SyncRpcChannel server(spinrpc::test::bin_path("spinrpc-server"), {"--api"});
  CHECK_THROWS_WITH(server.request("batchRequests", R"({"requests":[]})"),
                    "api: invalid request: unknown API method \"batchRequests\"");
  server.close();
}

}  // namespace
