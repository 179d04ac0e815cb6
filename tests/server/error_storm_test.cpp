// Failures that must stay failures of one request: a client callback that
// throws, and a server handler that throws, 1 000 times in a row each. Every
// one is an error reply carrying its own message (so each reply is the one
// for its request), and afterwards the same session still works. Through
// the client shim and the scripted peer (a spinrpc::Server).
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

#include <doctest/doctest.h>

#include "client-shim/sync_rpc_channel.h"
#include "protocol/remote_error.h"
#include "server_test_util.h"

namespace {

using spinrpc::RemoteError;
using spinrpc::SyncRpcChannel;

constexpr int kStorm = 1000;

// The RemoteError message of one request, or "(no error)" if it succeeded.
std::string error_of(SyncRpcChannel& peer, std::string_view method, std::string_view payload) {
  try {
    return "(no error) " + peer.request(method, payload);
  } catch (const RemoteError& e) {
    return e.what();
  }
}

TEST_CASE("A callback that throws 1000 times in a row gives 1000 error replies and the channel serves on") {
  SyncRpcChannel peer(spinrpc::test::bin_path("scripted_peer"), {});
  const int pid = peer.pid();
  int calls = 0;
  peer.register_callback("failing", [&](std::string_view, std::string_view args) -> std::string {
    ++calls;
    throw std::runtime_error("failure #" + std::to_string(calls) + " for " + std::string(args));
  });
  // The scripted peer's `callback` handler does not catch: the CallError
  // becomes the handler's exception, then the request's Error reply.
  int wrong = 0;
  std::string first_wrong;
  for (int i = 1; i <= kStorm; ++i) {
    const std::string got = error_of(peer, "callback", "failing /f" + std::to_string(i));
    const std::string want = "failure #" + std::to_string(i) + " for /f" + std::to_string(i);
    if (got != want && wrong++ == 0) first_wrong = "#" + std::to_string(i) + ": " + got;
  }
  CAPTURE(first_wrong);
  CHECK(wrong == 0);
  CHECK(calls == kStorm);
  // Same session, same server process, still in step.
  CHECK(peer.pid() == pid);
  CHECK(peer.request("echo", "after the storm") == "after the storm");
  peer.register_callback("failing", [](std::string_view, std::string_view) { return std::string("ok"); });
  CHECK(peer.request("callback", "failing x") == "ok");
  const int status = peer.close();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("A handler that throws 1000 times in a row gives 1000 error replies and the server serves on") {
  SyncRpcChannel peer(spinrpc::test::bin_path("scripted_peer"), {});
  const int pid = peer.pid();
  int wrong = 0;
  std::string first_wrong;
  for (int i = 1; i <= kStorm; ++i) {
    const std::string message = "handler failure #" + std::to_string(i);
    const std::string got = error_of(peer, "throwWith", message);
    if (got != message && wrong++ == 0) first_wrong = "#" + std::to_string(i) + ": " + got;
  }
  CAPTURE(first_wrong);
  CHECK(wrong == 0);
  CHECK(peer.pid() == pid);
  CHECK(peer.request("echo", "after the storm") == "after the storm");
  const int status = peer.close();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("Throwing callbacks, throwing handlers and echoes interleaved 1000 times stay in step") {
  SyncRpcChannel peer(spinrpc::test::bin_path("scripted_peer"), {});
  peer.register_callback("failing", [](std::string_view, std::string_view args) -> std::string {
    throw std::runtime_error("callback failed on " + std::string(args));
  });
  int wrong = 0;
  std::string first_wrong;
  for (int i = 0; i < kStorm; ++i) {
    const std::string n = std::to_string(i);
    std::string got;
    std::string want;
    switch (i % 3) {
      case 0:
        got = error_of(peer, "callback", "failing " + n);
        want = "callback failed on " + n;
        break;
      case 1:
        got = error_of(peer, "throwWith", "handler failed on " + n);
        want = "handler failed on " + n;
        break;
      default:
        got = error_of(peer, "echo", "echo " + n);
        want = "(no error) echo " + n;
        break;
    }
    if (got != want && wrong++ == 0) first_wrong = "#" + n + ": " + got;
  }
  CAPTURE(first_wrong);
  CHECK(wrong == 0);
  CHECK(peer.close() == 0);
}

}  // namespace
