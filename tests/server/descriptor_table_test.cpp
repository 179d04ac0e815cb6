// spinrpc-server's serving thread keeps the process's descriptor table to
// itself (descriptor/descriptor_table.h): with a second thread sharing it,
// every read(2) and write(2) of the hot path takes a reference on the file.
// Checked with kcmp(2) on the real server, after a session that started its
// helper threads.
#include <unistd.h>  // ::write

#include <chrono>       // std::chrono::milliseconds
#include <optional>     // std::optional
#include <string>       // std::string
#include <vector>       // std::vector

#include <doctest/doctest.h>

#include "wait/occupier.h"
#include "descriptor/pipe.h"
#include "client-shim/child_process.h"
#include "client-shim/sync_rpc_channel.h"
#include "server_test_util.h"
#include "tests/support/paths.h"
#include "tests/support/proc.h"
#include "tests/support/sanitizers.h"

namespace {

using spinrpc::ChildProcess;
using spinrpc::PipePair;
using spinrpc::SyncRpcChannel;
using spinrpc::UniqueFd;
using spinrpc::test::bin_path;
using spinrpc::test::read_until;
using spinrpc::test::share_descriptor_table;
using spinrpc::test::tasks_of;

// Checks that no thread of server `pid` shares its main (serving) thread's
// descriptor table.
void check_tables(int pid) {
  const std::vector<int> tids = tasks_of(pid);
  // The signal watcher at least, beside the serving thread.
  REQUIRE(tids.size() >= 2);
  for (const int tid : tids) {
    if (tid == pid) continue;
    // Under a sanitizer the occupier keeps the table it was born with, the
    // serving thread's (descriptor/sanitizers.h); the serving thread still
    // shares none with the signal watcher.
    if (spinrpc::test::kUnderSanitizer &&
        spinrpc::test::read_proc_text(pid, ("task/" + std::to_string(tid) + "/comm").c_str()) ==
            spinrpc::Occupier::kThreadName) {
      continue;
    }
    const auto shared = share_descriptor_table(pid, tid);
    if (!shared) {
      MESSAGE("kcmp(2) is not allowed here: not checked");
      return;
    }
    CHECK_FALSE(*shared);
  }
}

void check_serving_thread_alone(const std::vector<std::string>& args) {
  SyncRpcChannel channel(bin_path("spinrpc-server"), args);
  // Enough echoes for the occupier to start (at the server's first idle
  // moment) where placement may run.
  for (int i = 0; i < 200; ++i) REQUIRE(channel.request("echo", "\"x\"") == "\"x\"");
  check_tables(channel.pid());
  // And the session still ends as it should: EOF on stdin, exit status 0.
  CHECK(channel.close() == 0);
}

}  // namespace

TEST_CASE("spinrpc-server serves from a descriptor table no other thread shares") {
  SUBCASE("defaults: spinning, placement on") { check_serving_thread_alone({"--api"}); }
  SUBCASE("spin off: the signal watcher only") { check_serving_thread_alone({"--api", "--spin-us", "0"}); }
}

TEST_CASE("spinrpc-server --async serves from a descriptor table no other thread shares") {
  // The same table for tsgo's other protocol: JSON-RPC behind
  // Content-Length headers, on raw pipes.
  PipePair in = spinrpc::make_pipe();
  PipePair out = spinrpc::make_pipe();
  ChildProcess server = ChildProcess::spawn(bin_path("spinrpc-server"), {"--api", "--async"},
                                            in.read_end.get(), out.write_end.get());
  in.read_end = UniqueFd();
  out.write_end = UniqueFd();
  for (int id = 1; id <= 200; ++id) {
    const std::string body =
        "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) + ",\"method\":\"echo\",\"params\":\"x\"}";
    const std::string message = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    REQUIRE(::write(in.write_end.get(), message.data(), message.size()) == static_cast<ssize_t>(message.size()));
    std::string reply;
    REQUIRE(read_until(out.read_end.get(), reply, "\"id\":" + std::to_string(id) + ",\"result\":\"x\"}"));
  }
  check_tables(server.pid());
  in.write_end = UniqueFd();  // EOF: the session ends
  CHECK(server.try_wait_for(std::chrono::milliseconds(spinrpc::test::kHangGuard)) == std::optional<int>(0));
}
