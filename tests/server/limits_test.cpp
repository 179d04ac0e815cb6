// The max message size on both ends (Limits::kDefaultMaxMessageBytes,
// 256 MiB, unless configured): a frame announcing more is refused as soon as
// its length field arrives, before any buffer is sized for it and without
// waiting for bytes that will never come. The peers keep their output open
// (sleep, or the test holding the pipe), so waiting would hang: each wait
// has a hang guard that kills the peer and so fails the test instead.
#include <signal.h>    // SIGKILL
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG
#include <unistd.h>    // ::write

#include <algorithm>  // std::count
#include <fstream>    // std::ifstream
#include <vector>     // std::vector
#include <stdexcept>  // std::logic_error
#include <string>     // std::string

#include <doctest/doctest.h>

#include "descriptor/pipe.h"
#include "client-shim/sync_rpc_channel.h"
#include "protocol/protocol_error.h"
#include "server_test_util.h"
#include "tests/support/sanitizers.h"

namespace {

using spinrpc::ProtocolError;
using spinrpc::SyncRpcChannel;
using spinrpc::SyncRpcOptions;

// VmPeak of this process, in KiB: the largest address space it ever had.
// A buffer sized for a 4 GiB frame raises it by 4 GiB even if no page of it
// is touched, so it shows a reservation that RSS would not.
long vm_peak_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmPeak:", 0) == 0) return std::stol(line.substr(7));
  }
  FAIL("no VmPeak in /proc/self/status");
  return 0;
}

// A child that writes `octal` (printf escapes) and then sleeps, its stdout
// open, ignoring its stdin.
SyncRpcChannel canned_then_stall(const std::string& octal) {
  SyncRpcOptions options;
  options.close_grace = std::chrono::milliseconds(0);  // sleep never exits on EOF
  return SyncRpcChannel("sh", {"-c", "printf '" + octal + "'; exec sleep 60"}, options);
}

// Requests once under a hang guard; returns the ProtocolError's text, or
// what happened instead.
std::string refusal_of(SyncRpcChannel& child) {
  std::string outcome = "(no exception)";
  spinrpc::test::HangGuard guard(child.pid());
  try {
    child.request("echo", "x");
  } catch (const ProtocolError& e) {
    outcome = e.what();
  } catch (const std::exception& e) {
    outcome = std::string("(not a ProtocolError) ") + e.what();
  }
  if (guard.stop()) outcome = "(hang guard fired: the shim waited) " + outcome;
  return outcome;
}

TEST_CASE("SyncRpcChannel refuses a payload announcing 0xffffffff bytes at once, allocating nothing for it") {
  // [Response, "echo", bin32 length 0xffffffff] and no payload: 13 header
  // bytes + 0xffffffff = 4294967308.
  SyncRpcChannel child = canned_then_stall(R"(\223\004\304\004echo\306\377\377\377\377)");
  const long peak_before = vm_peak_kib();
  CHECK(refusal_of(child) ==
        "sh sent an invalid frame: message of 4294967308 bytes exceeds the limit of "
        "268435456 bytes (max message size)");
  CHECK(vm_peak_kib() - peak_before < 64 * 1024);
  CHECK_THROWS_AS(child.request("echo", "x"), std::logic_error);
  const int status = child.close();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("SyncRpcChannel refuses a name announcing 0xffffffff bytes at once, allocating nothing for it") {
  // [Response, bin32 length 0xffffffff: 7 + 0xffffffff bytes, then at least
  // the payload's marker: 4294967303.
  SyncRpcChannel child = canned_then_stall(R"(\223\004\306\377\377\377\377)");
  const long peak_before = vm_peak_kib();
  CHECK(refusal_of(child) ==
        "sh sent an invalid frame: message of 4294967303 bytes exceeds the limit of "
        "268435456 bytes (max message size)");
  CHECK(vm_peak_kib() - peak_before < 64 * 1024);
}

TEST_CASE("SyncRpcChannel refuses a reply announcing 256 MiB + 1 bytes at its header") {
  // [Response, "echo", bin32 256 MiB - 12]: 13 + (256 MiB - 12) = 256 MiB + 1 bytes.
  SyncRpcChannel over = canned_then_stall(R"(\223\004\304\004echo\306\017\377\377\364)");
  CHECK(refusal_of(over) ==
        "sh sent an invalid frame: message of 268435457 bytes exceeds the limit of "
        "268435456 bytes (max message size)");
}

TEST_CASE("SyncRpcChannel with max_message_bytes 1000 takes a 911-byte reply and refuses a 2011-byte one") {
  SyncRpcOptions options;
  options.channel.limits.max_message_bytes = 1000;
  const std::string path = spinrpc::test::bin_path("scripted_peer");
  SyncRpcChannel peer(path, {}, options);
  // [Response, "echo", bin16 P]: 11 header bytes + P.
  const std::string small(900, 's');
  CHECK(peer.request("echo", small) == small);
  CHECK_THROWS_WITH_AS(peer.request("echo", std::string(2000, 'b')),
                       // The shim names the child as spawned (ChildExited: its last component).
                       (path + " sent an invalid frame: message of 2011 bytes exceeds the "
                               "limit of 1000 bytes (max message size)").c_str(),
                       ProtocolError);
  CHECK_THROWS_AS(peer.request("echo", "x"), std::logic_error);
  // The peer wrote its whole reply into the pipe and waits for the next
  // request: closing its stdin ends it cleanly.
  CHECK(peer.close() == 0);
}

TEST_CASE("spinrpc-server with --max-message-bytes 1000 refuses a 5011-byte frame at its header, stdin still open") {
  spinrpc::test::TempFile err("stderr");
  spinrpc::PipePair to_server = spinrpc::make_pipe();
  spinrpc::PipePair from_server = spinrpc::make_pipe();
  spinrpc::ChildProcess server = spinrpc::test::spawn_with_stderr(
      spinrpc::test::bin_path("spinrpc-server"), {"--api", "--max-message-bytes", "1000"},
      to_server.read_end.get(), from_server.write_end.get(), err);
  to_server.read_end.reset();
  from_server.write_end.reset();
  // [Request, "echo", bin16 5000]: 11 + 5000 bytes; only the header is sent,
  // and the test keeps the write end open: waiting for the rest would hang.
  const auto header = spinrpc::test::raw({0x93, 0x01, 0xc4, 0x04, 'e', 'c', 'h', 'o', 0xc5, 0x13, 0x88});
  REQUIRE(::write(to_server.write_end.get(), header.data(), header.size()) ==
          static_cast<ssize_t>(header.size()));
  const std::optional<int> status = server.try_wait_for(spinrpc::test::kHangGuard);
  REQUIRE_MESSAGE(status.has_value(), "spinrpc-server still waits for the payload of a refused frame");
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 1);
  CHECK(err.read() ==
        "api: invalid request: message of 5011 bytes exceeds the limit of 1000 bytes (max message size)\n");
  CHECK(spinrpc::test::read_to_eof(from_server.read_end.get()) == std::string());
}

// Skipped under sanitizers: their shadow memory needs more address space
// than the limit leaves.
TEST_CASE("spinrpc-server that cannot allocate a frame within its limit says so in one line and exits 1, in both protocols" *
          doctest::skip(spinrpc::test::kUnderAddressSanitizer || spinrpc::test::kUnderThreadSanitizer)) {
  // Under `ulimit -v` a 200 MiB frame (under the default 256 MiB limit)
  // cannot be allocated: std::bad_alloc had ended the server with SIGABRT
  // (status 134; found by a break-it pass).
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::vector<std::byte> input;
  };
  const std::uint32_t body = 200u << 20;
  const std::string async_input = "Content-Length: " + std::to_string(body) + "\r\n\r\n{\"a\"";
  const std::vector<Case> cases{
      {"sync", {"--api"},
       spinrpc::test::concat({spinrpc::test::raw({0x93, 0x01, 0xc4, 0x04, 'e', 'c', 'h', 'o', 0xc6,
                                                  static_cast<int>(body >> 24), static_cast<int>((body >> 16) & 0xff), 0, 0}),
                              spinrpc::test::raw({'a', 'b', 'c'})})},
      {"async", {"--api", "--async"},
       {reinterpret_cast<const std::byte*>(async_input.data()),
        reinterpret_cast<const std::byte*>(async_input.data() + async_input.size())}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::vector<std::byte>& input = c.input;
    spinrpc::test::TempFile err("stderr");
    spinrpc::PipePair to_server = spinrpc::make_pipe();
    spinrpc::PipePair from_server = spinrpc::make_pipe();
    std::vector<std::string> args{"-c", "ulimit -v 150000 && exec \"$0\" \"$@\"", spinrpc::test::bin_path("spinrpc-server")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    spinrpc::ChildProcess server = spinrpc::test::spawn_with_stderr("/bin/sh", args, to_server.read_end.get(),
                                                                     from_server.write_end.get(), err);
    to_server.read_end.reset();
    from_server.write_end.reset();
    REQUIRE(::write(to_server.write_end.get(), input.data(), input.size()) == static_cast<ssize_t>(input.size()));
    to_server.write_end.reset();
    const std::optional<int> status = server.try_wait_for(spinrpc::test::kHangGuard);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 1);
    const std::string text = err.read();
    CHECK(text.rfind("spinrpc-server: cannot allocate ", 0) == 0);
    CHECK(text.find("bytes to read a message of ") != std::string::npos);
    CHECK(text.find("Cannot allocate memory\n") != std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  }
}

}  // namespace
