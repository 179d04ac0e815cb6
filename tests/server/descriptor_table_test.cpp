// spinrpc-server's serving thread keeps the process's descriptor table to
// itself (channel/descriptor_table.h): with a second thread sharing it,
// every read(2) and write(2) of the hot path takes a reference on the file.
// Checked with kcmp(2) on the real server, after a session that started its
// helper threads.
#include <string>  // std::string
#include <vector>  // std::vector

#include <doctest/doctest.h>

#include "channel/occupier.h"
#include "client-shim/sync_rpc_channel.h"
#include "tests/support/paths.h"
#include "tests/support/proc.h"
#include "tests/support/sanitizers.h"

namespace {

using spinrpc::SyncRpcChannel;
using spinrpc::test::bin_path;
using spinrpc::test::share_descriptor_table;
using spinrpc::test::tasks_of;

void check_serving_thread_alone(const std::vector<std::string>& args) {
  SyncRpcChannel channel(bin_path("spinrpc-server"), args);
  // Enough echoes for the occupier to start (at the server's first idle
  // moment) where placement may run.
  for (int i = 0; i < 200; ++i) REQUIRE(channel.request("echo", "\"x\"") == "\"x\"");
  const int pid = channel.pid();
  const std::vector<int> tids = tasks_of(pid);
  // The signal watcher at least, beside the serving thread.
  REQUIRE(tids.size() >= 2);
  for (const int tid : tids) {
    if (tid == pid) continue;
    // Under a sanitizer the occupier keeps the table it was born with, the
    // serving thread's (channel/sanitizers.h); the serving thread still
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
  // And the session still ends as it should: EOF on stdin, exit status 0.
  CHECK(channel.close() == 0);
}

}  // namespace

TEST_CASE("spinrpc-server serves from a descriptor table no other thread shares") {
  SUBCASE("defaults: spinning, placement on") { check_serving_thread_alone({"--api"}); }
  SUBCASE("spin off: the signal watcher only") { check_serving_thread_alone({"--api", "--spin-us", "0"}); }
}
