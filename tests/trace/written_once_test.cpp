// Each trace is written once (docs/TRACE.md, "When it is written"): a
// closed channel's file at close() and never again, the exit writer only
// for channels still open, and a process's own name for every file, so a
// forked child and its parent never share one. trace_exit_peer is the
// traced process; it exits through exit(), so its exit writer runs.
#include <sys/stat.h>  // ::mkdir
#include <unistd.h>    // ::getpid

#include <filesystem>  // std::filesystem
#include <sstream>     // std::istringstream
#include <string>      // std::string
#include <vector>      // std::vector

#include <doctest/doctest.h>

#include "tests/support/paths.h"
#include "tests/support/proc.h"
#include "tests/trace/run_shell.h"
#include "tests/trace/scratch_dir.h"
#include "tests/trace/trace_rules.h"

namespace {

using spinrpc::test::bin_path;
using spinrpc::test::eventually;
using spinrpc::test::load_trace;
using spinrpc::test::quoted;
using spinrpc::test::read_text;
using spinrpc::test::run_shell;
using spinrpc::test::ScratchDir;
using spinrpc::test::TraceFile;

// trace_exit_peer with `args` after the server and the pattern; its exit
// status, stdout and stderr.
struct PeerRun {
  int status = 0;
  std::string out;
  std::string err;
};

PeerRun run_peer(const ScratchDir& dir, const std::string& pattern, const std::string& args) {
  const std::string out = dir / "stdout.txt";
  const auto [status, err] = run_shell(quoted(bin_path("trace_exit_peer")) + " " + quoted(bin_path("spinrpc-server")) +
                                           " " + quoted(pattern) + " " + args + " >" + quoted(out),
                                       dir);
  PeerRun run{status, read_text(out), err};
  std::filesystem::remove(out);
  return run;
}

// The number after `word` in `text` ("pid 123": 123), or -1.
int number_after(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    int n = -1;
    if (w == word && in >> n) return n;
  }
  return -1;
}

std::int64_t requests_written(const TraceFile& file, std::size_t channel = 0) {
  return file.spinrpc().at("channels").at(channel).at("requests_written").get<std::int64_t>();
}

TEST_CASE("a trace moved away after close() is not written again at exit, and no line is printed") {
  ScratchDir dir;
  const PeerRun run = run_peer(dir, dir / "t.json", "moved " + quoted(dir / "moved.json"));
  CHECK(run.err == "");
  REQUIRE(run.status == 0);
  const int pid = number_after(run.out, "pid");
  REQUIRE(pid > 0);
  // The client's file is where it was moved, whole; at its old name, nothing.
  CHECK_FALSE(std::filesystem::exists(dir / ("t." + std::to_string(pid) + ".json")));
  const TraceFile moved = load_trace(dir / "moved.json");
  CHECK(moved.spinrpc().at("pid") == pid);
  CHECK(requests_written(moved) == 1);
  // Beside it the server's file, and nothing else.
  const std::vector<std::string> files = dir.files();
  CHECK(files.size() == 2);
}

TEST_CASE("a trace whose directory was removed after close() gives no line at exit") {
  ScratchDir dir;
  REQUIRE(::mkdir((dir / "sub").c_str(), 0700) == 0);
  const PeerRun run = run_peer(dir, dir / "sub/t.json", "removed");
  CHECK(run.err == "");
  CHECK(run.status == 0);
  CHECK(dir.files().empty());
}

TEST_CASE("a forked child and its parent, one pattern without %p: each its own file, neither written by the other") {
  ScratchDir dir;
  const PeerRun run = run_peer(dir, dir / "t.json", "fork");
  CHECK(run.err == "");
  REQUIRE(run.status == 0);
  const int parent = number_after(run.out, "parent");
  const int child = number_after(run.out, "child");
  const int server = number_after(run.out, "server");
  REQUIRE(parent > 0);
  REQUIRE(child > 0);
  REQUIRE(server > 0);
  // The child's exit wrote nothing of its parent's.
  CHECK(run.out.find(" parent-file-before-exit absent\n") != std::string::npos);
  const auto file_of = [&](int pid) { return dir / ("t." + std::to_string(pid) + ".json"); };
  // The parent's server writes as it ends, on the EOF of the parent's exit.
  REQUIRE(eventually([&] { return std::filesystem::exists(file_of(server)); }));
  // The parent's, the child's, and their two servers': four files.
  CHECK(dir.files().size() == 4);
  const TraceFile parent_file = load_trace(file_of(parent));
  const TraceFile child_file = load_trace(file_of(child));
  CHECK(parent_file.spinrpc().at("pid") == parent);
  CHECK(child_file.spinrpc().at("pid") == child);
  // Each has its own channel alone: the child's holds none of its parent's.
  REQUIRE(parent_file.spinrpc().at("channels").size() == 1);
  REQUIRE(child_file.spinrpc().at("channels").size() == 1);
  CHECK(requests_written(parent_file) == 2);
  CHECK(requests_written(child_file) == 1);
  CHECK(requests_written(load_trace(file_of(server))) == 2);
}

}  // namespace
