// ChannelCore, the binding's C++ core, against the real servers: the path
// the addon takes per request (encode into a scratch buffer, request, read
// the reply view) allocates nothing in steady state; timing counts, the
// closed state and the exit path behave as the JavaScript surface needs.
#include <signal.h>    // ::kill
#include <sys/wait.h>  // WIFSIGNALED, WTERMSIG

#include <cerrno>       // errno, ESRCH
#include <cstring>      // std::memcpy
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <doctest/doctest.h>

#include "node/src/channel_core.h"
#include "tests/support/count_allocations.h"
#include "tests/support/paths.h"

namespace {

using spinrpc::ByteView;
using spinrpc::SyncRpcOptions;
using spinrpc::node::ChannelClosed;
using spinrpc::node::ChannelCore;
using spinrpc::test::bin_path;
using spinrpc::test::tsgo_path;

// What the addon does with a JavaScript string: its UTF-8 bytes go into the
// core's scratch buffers, and the request is sent from there.
ByteView request_as_addon(ChannelCore& core, std::string_view method, std::string_view payload) {
  const std::span<char> name = core.method_buffer(method.size() + 1);
  std::memcpy(name.data(), method.data(), method.size());
  const std::span<char> bytes = core.payload_buffer(payload.size() + 1);
  std::memcpy(bytes.data(), payload.data(), payload.size());
  return core.request({name.data(), method.size()},
                      spinrpc::as_bytes(std::string_view(bytes.data(), payload.size())));
}

void check_no_allocation_per_request(const std::string& server) {
  CAPTURE(server);
  ChannelCore core(server, {"--api"}, SyncRpcOptions{}, /*collect_timing=*/true);
  const std::string payload = "sixteen bytes!!!";
  for (int i = 0; i < 10; ++i) request_as_addon(core, "echo", payload);

  constexpr int kRequests = 1000;
  int wrong_replies = 0;  // counted, not CHECKed: doctest's own bookkeeping allocates
  spinrpc::test::start_counting_allocations();
  for (int i = 0; i < kRequests; ++i) {
    // The string path (requestSync) and the zero-copy binary path
    // (requestBinarySync with a Uint8Array) in turn.
    const ByteView reply = i % 2 == 0 ? request_as_addon(core, "echo", payload)
                                      : core.request("echo", spinrpc::as_bytes(payload));
    if (spinrpc::as_text(reply) != payload) ++wrong_replies;
    if (core.last_bytes_received() != payload.size()) ++wrong_replies;
  }
  spinrpc::test::stop_counting_allocations();
  CHECK(wrong_replies == 0);
  CHECK(spinrpc::test::counted_allocations() == 0);
}

TEST_CASE("ChannelCore allocates nothing per small request in steady state") {
  check_no_allocation_per_request(bin_path("spinrpc-server"));
  check_no_allocation_per_request(tsgo_path());
}

TEST_CASE("ChannelCore counts payload bytes only with collect_timing, as the TS 7 channel") {
  ChannelCore timed(bin_path("spinrpc-server"), {"--api"}, SyncRpcOptions{}, true);
  CHECK(timed.last_bytes_sent() == 0);
  request_as_addon(timed, "echo", "hello");
  CHECK(timed.last_bytes_sent() == 5);
  CHECK(timed.last_bytes_received() == 5);
  // An Error reply: what was sent is counted, nothing received.
  CHECK_THROWS(request_as_addon(timed, "noSuchMethod", "null"));
  CHECK(timed.last_bytes_sent() == 4);
  CHECK(timed.last_bytes_received() == 0);

  ChannelCore untimed(bin_path("spinrpc-server"), {"--api"}, SyncRpcOptions{}, false);
  request_as_addon(untimed, "echo", "hello");
  CHECK(untimed.last_bytes_sent() == 0);
  CHECK(untimed.last_bytes_received() == 0);
}

TEST_CASE("ChannelCore gives back a scratch buffer grown past the retained size") {
  ChannelCore core(bin_path("spinrpc-server"), {"--api"}, SyncRpcOptions{}, false);
  const std::string big(ChannelCore::kRetainedScratchBytes + 1, 'x');
  CHECK(request_as_addon(core, "echo", big).size() == big.size());
  // The next request needs a fresh buffer again: it was released.
  spinrpc::test::start_counting_allocations();
  request_as_addon(core, "echo", "small");
  spinrpc::test::stop_counting_allocations();
  CHECK(spinrpc::test::counted_allocations() > 0);
}

TEST_CASE("ChannelCore after close() throws ChannelClosed with the TS 7 channel's text") {
  ChannelCore core(bin_path("spinrpc-server"), {"--api"}, SyncRpcOptions{}, false);
  CHECK(core.close() == 0);
  CHECK(core.closed());
  CHECK(core.close() == -1);
  CHECK_THROWS_WITH_AS(request_as_addon(core, "echo", "x"), "SyncRpcChannel is closed",
                       ChannelClosed);
}

TEST_CASE("ChannelCore::end_now kills and reaps the child at once") {
  SyncRpcOptions options;
  options.close_grace = std::chrono::milliseconds(60'000);  // end_now must not wait for it
  // A child that ignores EOF on its stdin: only a signal ends it.
  ChannelCore core("sh", {"-c", "trap '' TERM; exec sleep 60"}, options, false);
  const int pid = core.pid();
  REQUIRE(pid > 0);
  core.end_now();
  CHECK(core.closed());
  CHECK(core.pid() == -1);
  // Reaped: the pid no longer names a process of ours (not even a zombie).
  errno = 0;
  CHECK(::kill(pid, 0) == -1);
  CHECK(errno == ESRCH);
}

}  // namespace
