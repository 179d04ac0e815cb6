// The other direction: the server dies or exits in the middle of a request,
// and the client shim must throw ChildExited naming the exit status or the
// signal, after which close() still works and reports the same status.
// tests/client-shim already covers tsgo SIGKILLed between requests, an exit
// from inside a handler (exitNow) and a child that closes its output; these
// add deaths during a Call and while the request is still being written.
#include <signal.h>    // ::kill, SIGKILL, SIGTERM
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG

#include <stdexcept>  // std::logic_error
#include <string>     // std::string

#include <doctest/doctest.h>

#include "client-shim/child_exited.h"
#include "client-shim/sync_rpc_channel.h"
#include "server_test_util.h"

namespace {

using spinrpc::ChildExited;
using spinrpc::SyncRpcChannel;

template <class E, class F>
std::optional<E> thrown_by(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  return std::nullopt;
}

// The scripted peer calls back; the callback signals the server and waits
// until it is dead (a zombie: our child, not yet reaped), then answers. The
// answer meets a closed pipe (EPIPE) or the next read meets EOF.
void check_signal_during_call(int signal, const std::string& expected) {
  SyncRpcChannel peer(spinrpc::test::bin_path("scripted_peer"), {});
  bool died = false;
  peer.register_callback("readFile", [&](std::string_view, std::string_view) {
    REQUIRE(::kill(peer.pid(), signal) == 0);
    died = spinrpc::test::eventually([&] { return spinrpc::test::is_zombie(peer.pid()); });
    return std::string("too late");
  });
  std::optional<ChildExited> e;
  {
    spinrpc::test::HangGuard guard(peer.pid());
    e = thrown_by<ChildExited>([&] { peer.request("callback", "readFile /a.ts"); });
    REQUIRE_FALSE(guard.stop());
  }
  CHECK(died);
  REQUIRE(e.has_value());
  CHECK(std::string(e->what()) == expected);
  CHECK(e->term_signal() == signal);
  CHECK_FALSE(e->exit_code().has_value());
  CHECK(peer.pid() == -1);  // ChildExited reaped it
  CHECK_THROWS_AS(peer.request("echo", "again"), std::logic_error);
  const int status = peer.close();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == signal);
  CHECK(peer.close() == -1);
}

TEST_CASE("A server SIGKILLed while it waits for a CallResponse is ChildExited naming signal 9") {
  check_signal_during_call(SIGKILL, "scripted_peer was killed by signal 9");
}

TEST_CASE("A server SIGTERMed while it waits for a CallResponse is ChildExited naming signal 15") {
  check_signal_during_call(SIGTERM, "scripted_peer was killed by signal 15");
}

TEST_CASE("A server that exits while the request is still being written is ChildExited naming its status") {
  // It reads 100 bytes of a 4 MiB request and exits 7: the shim's write,
  // blocked on the full pipe, fails with EPIPE.
  SyncRpcChannel child("sh", {"-c", "head -c 100 >/dev/null; exit 7"});
  const std::string payload(std::size_t{4} << 20, 'r');
  std::optional<ChildExited> e;
  {
    spinrpc::test::HangGuard guard(child.pid());
    e = thrown_by<ChildExited>([&] { child.request("echo", payload); });
    REQUIRE_FALSE(guard.stop());
  }
  REQUIRE(e.has_value());
  CHECK(std::string(e->what()) == "sh exited with status 7");
  CHECK(e->exit_code() == 7);
  const int status = child.close();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
}

TEST_CASE("A server killed while the shim is still writing a big request is ChildExited naming signal 9") {
  // The server reads until the shim is deep inside a 4 MiB write, then dies.
  SyncRpcChannel child("sh", {"-c", "head -c 200000 >/dev/null; kill -9 $$"});
  const std::string payload(std::size_t{4} << 20, 'k');
  std::optional<ChildExited> e;
  {
    spinrpc::test::HangGuard guard(child.pid());
    e = thrown_by<ChildExited>([&] { child.request("echo", payload); });
    REQUIRE_FALSE(guard.stop());
  }
  REQUIRE(e.has_value());
  CHECK(std::string(e->what()) == "sh was killed by signal 9");
  const int status = child.close();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

}  // namespace
