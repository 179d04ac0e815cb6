// SyncRpcChannel against real children: the real tsgo (the reference
// server), the scripted peer built on spinrpc::Server (Calls in both
// directions, failures on purpose), and sh scripts that write canned bytes
// a correct server never sends.
#include <fcntl.h>     // ::fcntl, ::open, F_DUPFD_CLOEXEC, F_GETPIPE_SZ
#include <signal.h>    // ::kill, ::sigaction, SIGKILL, SIGPIPE
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG
#include <unistd.h>    // ::access, ::close, ::dup2, ::pipe

#include <chrono>        // std::chrono::milliseconds
#include <cstdint>       // std::uint64_t
#include <filesystem>    // std::filesystem::directory_iterator, read_symlink
#include <fstream>       // std::ifstream
#include <initializer_list>  // std::initializer_list
#include <iostream>      // std::cout
#include <set>           // std::set
#include <stdexcept>     // std::logic_error, std::runtime_error
#include <string>
#include <thread>       // std::this_thread::yield        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error, std::errc, std::error_code
#include <utility>       // std::move, std::pair
#include <vector>        // std::vector

#include <doctest/doctest.h>
#include <simdjson.h>  // simdjson::dom::parser, for getServerTiming's JSON

#include "descriptor/unique_fd.h"
#include "client-shim/child_exited.h"
#include "client-shim/sync_rpc_channel.h"
#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"
#include "tests/support/count_allocations.h"
#include "tests/support/paths.h"

namespace {

using spinrpc::ByteView;
using spinrpc::ChildExited;
using spinrpc::ProtocolError;
using spinrpc::RemoteError;
using spinrpc::SyncRpcChannel;
using spinrpc::SyncRpcOptions;
using spinrpc::test::bin_path;
using spinrpc::test::tsgo_path;

// A child that writes `bytes` (printf's octal escapes) to its stdout, then
// reads its stdin to EOF and exits 0: the bytes a misbehaving server sends.
SyncRpcChannel canned_bytes(const std::string& bytes) {
  return SyncRpcChannel("sh", {"-c", "printf '" + bytes + "'; exec cat >/dev/null"});
}

// Runs `f`, which must throw E; returns the exception for closer checks.
template <class E, class F>
E thrown_by(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  FAIL("the expected exception was not thrown");
  throw std::logic_error("unreachable");
}

std::vector<std::byte> bytes_0_to_255() {
  std::vector<std::byte> bytes(256);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i);
  return bytes;
}

// What a /proc/.../fd/N link points to ("pipe:[123]", a path); empty if the
// fd closed meanwhile.
std::string link_target(const std::string& link) {
  std::error_code error;
  const std::filesystem::path target = std::filesystem::read_symlink(link, error);
  return error ? std::string() : target.string();
}

// SigIgn from /proc/<pid>/status: the mask of ignored signals, bit n-1 for signal n.
unsigned long long ignored_signals(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigIgn:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  }
  FAIL("no SigIgn line in /proc/" << pid << "/status");
  return 0;
}

void set_sigpipe(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  ::sigemptyset(&action.sa_mask);
  REQUIRE(::sigaction(SIGPIPE, &action, nullptr) == 0);
}

// doctest cannot print a function pointer, so the comparison happens here.
bool sigpipe_is(void (*handler)(int)) {
  struct sigaction action {};
  REQUIRE(::sigaction(SIGPIPE, nullptr, &action) == 0);
  return action.sa_handler == handler;
}

// ── Against the real tsgo ─────────────────────────────────────────────

TEST_CASE("SyncRpcChannel gets a small payload back unchanged from tsgo's echo") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  CHECK(tsgo.request("echo", "hello, tsgo") == "hello, tsgo");
  CHECK(tsgo.request("echo", R"({"a":[1,2,3]})") == R"({"a":[1,2,3]})");
}

TEST_CASE("SyncRpcChannel gets an empty payload back from tsgo's echo") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  CHECK(tsgo.request("echo", "").empty());
  CHECK(tsgo.request_bytes("echo", {}).empty());
}

TEST_CASE("SyncRpcChannel gets every byte value 0..255 back from tsgo's echo as binary") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  const std::vector<std::byte> bytes = bytes_0_to_255();
  CHECK(tsgo.request_binary("echo", bytes) == bytes);
}

TEST_CASE("SyncRpcChannel gets a 1 MiB payload back unchanged from tsgo's echo") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  std::vector<std::byte> big(std::size_t{1} << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>(i * 7 % 256);
  CHECK(tsgo.request_binary("echo", big) == big);
  // The channel is still in step after a reply far bigger than its buffer.
  CHECK(tsgo.request("echo", "after") == "after");
}

// The capacity of the pipe process `pid` has as its fd `fd`, through a new
// open file description of it (/proc/PID/fd), or -1.
int pipe_capacity_of(int pid, int fd) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const spinrpc::UniqueFd end(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
  return end ? ::fcntl(end.get(), F_GETPIPE_SZ) : -1;
}

TEST_CASE("SyncRpcChannel grows the pipe tsgo writes into once a reply bigger than it comes") {
  // tsgo writes a reply with one write(2) and sleeps whenever the pipe is
  // full (BufferOptions::grow_read_pipe).
  long max_size = 0;
  if (std::ifstream f("/proc/sys/fs/pipe-max-size"); !(f >> max_size)) max_size = 0;
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  CHECK(tsgo.request("echo", "small") == "small");
  const int before = pipe_capacity_of(tsgo.pid(), 1);
  REQUIRE(before > 0);
  std::vector<std::byte> big(std::size_t{1} << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>(i * 13 % 256);
  CHECK(tsgo.request_binary("echo", big) == big);
  const int after = pipe_capacity_of(tsgo.pid(), 1);
  if (max_size >= 1 << 20) {
    // Header and name make the frame just over 1 MiB: grown to the cap.
    CHECK(after == 1 << 20);
  } else {
    MESSAGE("pipe-max-size is below 1 MiB here: whether the pipe grew is not checked");
  }
  // The pipe is the same pipe, now bigger: the channel is still in step.
  CHECK(tsgo.request("echo", "after") == "after");
}

TEST_CASE("SyncRpcChannel leaves the pipe tsgo writes into as it is while replies fit") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  CHECK(tsgo.request("echo", "small") == "small");
  const int before = pipe_capacity_of(tsgo.pid(), 1);
  std::vector<std::byte> fits(std::size_t{32} << 10, std::byte{7});
  CHECK(tsgo.request_binary("echo", fits) == fits);
  CHECK(pipe_capacity_of(tsgo.pid(), 1) == before);
}

TEST_CASE("SyncRpcChannel receives tsgo's initialize reply with the --cwd directory verbatim") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api", "--cwd", "/some/dir"});
  CHECK(tsgo.request("initialize", "null") ==
        R"({"useCaseSensitiveFileNames":true,"currentDirectory":"/some/dir"})");
}

TEST_CASE("SyncRpcChannel reads tsgo's getServerTiming counts, and resetServerTiming zeroes them") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api", "--timing"});
  constexpr std::uint64_t kEchoes = 7;
  for (std::uint64_t i = 0; i < kEchoes; ++i) tsgo.request("echo", "e" + std::to_string(i));

  simdjson::dom::parser parser;
  {
    const std::string json = tsgo.request("getServerTiming", "");
    CAPTURE(json);
    const simdjson::dom::element timing = parser.parse(json);
    CHECK(timing["enabled"].get_bool().value());
    CHECK(timing["totals"]["requestCount"].get_uint64().value() == kEchoes);
    CHECK(timing["totals"]["totalProcessingTimeMs"].is_number());
    const simdjson::dom::array recent = timing["recentRequests"].get_array();
    CHECK(recent.size() <= 5);
    CHECK(recent.size() == 5);  // 7 requests, tsgo keeps the 5 most recent
    for (const simdjson::dom::element entry : recent) {
      CHECK(entry["method"].get_string().value() == "echo");
      CHECK(entry["processingTimeMs"].is_number());
      CHECK(entry["timestamp"].is_number());
    }
  }

  CHECK(tsgo.request("resetServerTiming", "") == "null");
  {
    const std::string json = tsgo.request("getServerTiming", "");
    CAPTURE(json);
    const simdjson::dom::element timing = parser.parse(json);
    CHECK(timing["enabled"].get_bool().value());
    CHECK(timing["totals"]["requestCount"].get_uint64().value() == 0);
    CHECK(timing["totals"]["totalProcessingTimeMs"].get_double().value() == 0.0);
    CHECK(timing["recentRequests"].get_array().size() == 0);
  }
}

TEST_CASE("SyncRpcChannel returns tsgo's Error message as RemoteError for an unknown method") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  CHECK_THROWS_WITH_AS(tsgo.request("nope", "{}"),
                       R"(api: invalid request: unknown API method "nope")", RemoteError);
  // An Error leaves the session in step: tsgo serves on, and so do we.
  CHECK(tsgo.request("echo", "still here") == "still here");
}

TEST_CASE("SyncRpcChannel throws ChildExited naming signal 9 when tsgo is killed mid-session") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  CHECK(tsgo.request("echo", "before") == "before");
  REQUIRE(::kill(tsgo.pid(), SIGKILL) == 0);

  const ChildExited e = thrown_by<ChildExited>([&] { tsgo.request("echo", "after"); });
  CHECK(std::string(e.what()) == std::filesystem::path(tsgo_path()).filename().string() + " was killed by signal 9");
  CHECK(e.term_signal() == SIGKILL);
  CHECK_FALSE(e.exit_code().has_value());
  CHECK(tsgo.pid() == -1);  // reaped
  // The channel is unusable now; close() still reports how the child ended.
  CHECK_THROWS_AS(tsgo.request("echo", "again"), std::logic_error);
  const int status = tsgo.close();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("SyncRpcChannel::close returns status 0 once tsgo exits on EOF, and -1 after that") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  CHECK(tsgo.request("echo", "x") == "x");
  CHECK(tsgo.pid() > 0);
  CHECK(tsgo.close() == 0);
  CHECK(tsgo.pid() == -1);
  CHECK(tsgo.close() == -1);
  CHECK_THROWS_WITH_AS(tsgo.request("echo", "x"), "SyncRpcChannel::request after close()",
                       std::logic_error);
}

TEST_CASE("SyncRpcChannel::request_bytes allocates nothing per small request in steady state") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  const std::string payload = "sixteen bytes!!!";
  for (int i = 0; i < 10; ++i) tsgo.request_bytes("echo", spinrpc::as_bytes(payload));

  constexpr int kRequests = 1000;
  int wrong_replies = 0;  // counted, not CHECKed: doctest's own bookkeeping allocates
  spinrpc::test::start_counting_allocations();
  for (int i = 0; i < kRequests; ++i) {
    const ByteView reply = tsgo.request_bytes("echo", spinrpc::as_bytes(payload));
    if (spinrpc::as_text(reply) != payload) ++wrong_replies;
  }
  spinrpc::test::stop_counting_allocations();
  CHECK(wrong_replies == 0);
  CHECK(spinrpc::test::counted_allocations() == 0);
}

// ── Spawning and closing ──────────────────────────────────────────────

TEST_CASE("SyncRpcChannel throws std::system_error naming the executable when it is not found") {
  for (const std::string executable :
       {"spinrpc-no-such-executable", "/nonexistent/spinrpc/no-such-server"}) {
    CAPTURE(executable);
    const std::system_error e =
        thrown_by<std::system_error>([&] { SyncRpcChannel child(executable, {"--api"}); });
    CHECK(e.code() == std::errc::no_such_file_or_directory);
    CHECK(std::string(e.what()).find("cannot spawn " + executable) != std::string::npos);
  }
}

TEST_CASE("SyncRpcChannel keeps an fd opened without close-on-exec out of the child") {
  // A pipe made with plain pipe(2), as careless code elsewhere would.
  int raw[2];
  REQUIRE(::pipe(raw) == 0);
  const spinrpc::UniqueFd leaky_read(raw[0]);
  const spinrpc::UniqueFd leaky_write(raw[1]);
  const std::string leaky_pipe = link_target("/proc/self/fd/" + std::to_string(raw[1]));
  REQUIRE(leaky_pipe.rfind("pipe:", 0) == 0);

  SyncRpcOptions options;
  options.close_grace = std::chrono::milliseconds(0);
  SyncRpcChannel child("sleep", {"30"}, options);
  // Compared by what they point to, not by number: while it starts, the
  // child's dynamic loader briefly holds fds of its own (ld.so.cache, libc).
  const std::string fd_dir = "/proc/" + std::to_string(child.pid()) + "/fd/";
  std::set<std::string> targets;
  for (const auto& entry : std::filesystem::directory_iterator(fd_dir)) {
    targets.insert(link_target(entry.path().string()));
  }
  CAPTURE(leaky_pipe);
  CHECK(targets.count(leaky_pipe) == 0);
  CHECK(link_target(fd_dir + "0").rfind("pipe:", 0) == 0);
  CHECK(link_target(fd_dir + "1").rfind("pipe:", 0) == 0);
}

// Runs `body` with the standard fds in `fds` closed, and puts them back
// (also when it throws). Output written meanwhile is lost, so checks come
// after.
template <typename Body>
void with_closed(std::initializer_list<int> fds, Body body) {
  std::cout.flush();
  std::vector<std::pair<int, int>> saved;  // {copy, fd}; copy -1 if it was closed already
  for (const int fd : fds) saved.emplace_back(::fcntl(fd, F_DUPFD_CLOEXEC, 3), fd);
  for (const int fd : fds) ::close(fd);
  const auto restore = [&] {
    for (const auto& [copy, fd] : saved) {
      if (copy < 0) continue;
      ::dup2(copy, fd);
      ::close(copy);
    }
  };
  try {
    body();
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

TEST_CASE("SyncRpcChannel talks to tsgo when this process runs with stdin closed") {
  // The pipe for the child's stdin then got fd 0: the spawn must still
  // hand it over as the child's fd 0 without close-on-exec.
  const std::string tsgo_executable = tsgo_path();
  std::string reply;
  int status = -1;
  with_closed({STDIN_FILENO}, [&] {
    SyncRpcChannel tsgo(tsgo_executable, {"--api"});
    reply = tsgo.request("echo", "through fd 0");
    status = tsgo.close();
  });
  CHECK(reply == "through fd 0");
  CHECK(status == 0);
}

TEST_CASE("SyncRpcChannel with stdout and stderr closed: no pipe end lands on them, and close() ends the child on EOF") {
  // The pipes used to get fds 1 and 2: the child inherited a write end of
  // its own stdin as its fd 2, so it never saw EOF and close() had to
  // SIGKILL it after the grace, and this process's "stderr" fed the child.
  const std::string tsgo_executable = tsgo_path();
  std::string reply;
  bool stdio_closed_meanwhile = false;
  int status = -1;
  with_closed({STDOUT_FILENO, STDERR_FILENO}, [&] {
    SyncRpcOptions options;
    options.close_grace = std::chrono::milliseconds(5000);
    SyncRpcChannel tsgo(tsgo_executable, {"--api"}, options);
    reply = tsgo.request("echo", "with 1 and 2 closed");
    stdio_closed_meanwhile = ::fcntl(STDOUT_FILENO, F_GETFD) == -1 && ::fcntl(STDERR_FILENO, F_GETFD) == -1;
    status = tsgo.close();
  });
  CHECK(reply == "with 1 and 2 closed");
  CHECK(stdio_closed_meanwhile);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("SyncRpcChannel ignores SIGPIPE if it was at SIG_DFL but starts the child with SIG_DFL") {
  set_sigpipe(SIG_DFL);
  SyncRpcOptions options;
  options.close_grace = std::chrono::milliseconds(0);
  SyncRpcChannel child("sleep", {"30"}, options);
  CHECK(sigpipe_is(SIG_IGN));
  const unsigned long long sigpipe_bit = 1ULL << (SIGPIPE - 1);
  CHECK((ignored_signals(child.pid()) & sigpipe_bit) == 0);
}

TEST_CASE("SyncRpcChannel leaves SIGPIPE alone with keep_sigpipe_disposition") {
  set_sigpipe(SIG_DFL);
  SyncRpcOptions options;
  options.keep_sigpipe_disposition = true;
  options.close_grace = std::chrono::milliseconds(0);
  {
    SyncRpcChannel child("sleep", {"30"}, options);
    CHECK(sigpipe_is(SIG_DFL));
  }
  // The other tests write to children that may be dead.
  set_sigpipe(SIG_IGN);
}

TEST_CASE("SyncRpcChannel::close SIGKILLs a child that does not exit on EOF within close_grace") {
  SyncRpcOptions options;
  options.close_grace = std::chrono::milliseconds(10);
  SyncRpcChannel child("sleep", {"30"}, options);
  const int status = child.close();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("A moved-to SyncRpcChannel serves on and the moved-from one owns nothing") {
  SyncRpcChannel first(tsgo_path(), {"--api"});
  SyncRpcChannel second(std::move(first));
  CHECK(second.request("echo", "moved") == "moved");
  CHECK(first.pid() == -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the subject
  CHECK(first.close() == -1);
  CHECK_THROWS_AS(first.request("echo", "x"), std::logic_error);

  SyncRpcChannel third(tsgo_path(), {"--api"});
  third = std::move(second);  // ends third's own child first
  CHECK(third.request("echo", "assigned") == "assigned");
  CHECK(third.close() == 0);
}

// ── Canned bytes a correct server never sends ─────────────────────────

TEST_CASE("A Response named for another method is a ProtocolError naming both names") {
  SyncRpcChannel child = canned_bytes(R"(\223\004\304\001x\304\001y)");  // Response "x", "y"
  CHECK_THROWS_WITH_AS(child.request("echo", "hi"),
                       "name mismatch for response: expected `echo`, got `x`", ProtocolError);
  CHECK_THROWS_AS(child.request("echo", "hi"), std::logic_error);
  CHECK(child.close() == 0);  // sh's cat exits 0 on EOF
}

TEST_CASE("An Error named for another method is a ProtocolError naming both names") {
  SyncRpcChannel child = canned_bytes(R"(\223\005\304\001x\304\001y)");  // Error "x", "y"
  CHECK_THROWS_WITH_AS(child.request("echo", "hi"),
                       "name mismatch for response: expected `echo`, got `x`", ProtocolError);
}

TEST_CASE("A client's message type sent by the server is a ProtocolError naming the type") {
  SyncRpcChannel child = canned_bytes(R"(\223\001\304\004echo\304\001y)");  // Request "echo"
  CHECK_THROWS_WITH_AS(
      child.request("echo", "hi"),
      "unexpected Request message (type 1) from sh while the `echo` request was open",
      ProtocolError);
}

TEST_CASE("A malformed frame from the child is a ProtocolError naming the child and the byte") {
  SyncRpcChannel child = canned_bytes(R"(\222\004)");
  CHECK_THROWS_WITH_AS(
      child.request("echo", "hi"),
      "sh sent an invalid frame: expected fixed 3-element array (0x93), received: 0x92",
      ProtocolError);
}

TEST_CASE("A child that closes its output but runs on is ChildExited saying it still runs") {
  SyncRpcOptions options;
  options.close_grace = std::chrono::milliseconds(10);
  SyncRpcChannel child("sh", {"-c", "exec >&-; exec sleep 30"}, options);
  const ChildExited e = thrown_by<ChildExited>([&] { child.request("echo", "hi"); });
  CHECK(std::string(e.what()) == "sh closed its output and is still running");
  CHECK_FALSE(e.wait_status().has_value());
  CHECK(child.pid() > 0);
  // sleep ignores its stdin's EOF: close() has to kill it.
  const int status = child.close();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("A child that closes its input but runs on is ChildExited saying so, not that it closed its output") {
  SyncRpcOptions options;
  options.close_grace = std::chrono::milliseconds(10);
  SyncRpcChannel child("sh", {"-c", "exec 0<&-; exec sleep 30"}, options);
  // Until its stdin is closed (a bound, not a timing): a request written
  // before would wait for a reply that never comes.
  const std::string fd0 = "/proc/" + std::to_string(child.pid()) + "/fd/0";
  for (int i = 0; i < 100000 && ::access(fd0.c_str(), F_OK) == 0; ++i) std::this_thread::yield();
  REQUIRE(::access(fd0.c_str(), F_OK) != 0);
  const ChildExited e = thrown_by<ChildExited>([&] { child.request("echo", "hi"); });
  CHECK(std::string(e.what()) == "sh closed its input and is still running");
  CHECK(e.where() == spinrpc::PeerClosed::Where::writing);
  CHECK_FALSE(e.wait_status().has_value());
  const int status = child.close();
  CHECK(WIFSIGNALED(status));
}

// ── Calls in both directions, through the scripted peer ───────────────

TEST_CASE("SyncRpcChannel answers the server's Call with the registered callback's result") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  std::string seen_name;
  peer.register_callback("readFile", [&](std::string_view name, std::string_view path) {
    seen_name = name;
    return "contents of " + std::string(path);
  });
  CHECK(peer.request("callback", "readFile /src/a.ts") == "contents of /src/a.ts");
  CHECK(seen_name == "readFile");
  CHECK(peer.close() == 0);
}

TEST_CASE("SyncRpcChannel answers several Calls within one request in order") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  int calls = 0;
  peer.register_callback("count", [&](std::string_view, std::string_view arg) {
    ++calls;
    return "#" + std::string(arg) + "/" + std::to_string(calls);
  });
  CHECK(peer.request("callbackTwice", "count") == "#1/1,#2/2");
  CHECK(peer.request("callbackTwice", "count") == "#1/3,#2/4");
}

TEST_CASE("A callback that throws reaches the server's handler as RemoteError with its message") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  peer.register_callback("failing", [](std::string_view, std::string_view) -> std::string {
    throw std::runtime_error("no such file: /missing.ts");
  });
  CHECK(peer.request("callbackError", "failing") == "no such file: /missing.ts");
  CHECK(peer.request("echo", "in step") == "in step");
}

TEST_CASE("A Call for an unregistered callback gets a CallError whose message names it") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  CHECK(peer.request("callbackError", "nosuch") ==
        "unknown callback: `nosuch`. Please make sure to register it on the JavaScript side before invoking it.");
}

TEST_CASE("A callback that throws something other than std::exception still gets a CallError") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  peer.register_callback("odd",
                         [](std::string_view, std::string_view) -> std::string { throw 42; });
  CHECK(peer.request("callbackError", "odd") ==
        R"(callback "odd" threw an exception not derived from std::exception)");
}

TEST_CASE("A callback that calls request() on its own channel is refused with a CallError") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  peer.register_callback("reenter", [&](std::string_view, std::string_view) {
    return peer.request("echo", "nested");
  });
  CHECK(peer.request("callbackError", "reenter") ==
        "SyncRpcChannel::request from inside a callback: one request is open at a time");
  CHECK(peer.request("echo", "in step") == "in step");
}

TEST_CASE("A callback may register another name, not replace one registered already") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  peer.register_callback("adds", [&](std::string_view, std::string_view) {
    peer.register_callback("added", [](std::string_view, std::string_view) { return std::string("added ran"); });
    return std::string("adds ran");
  });
  CHECK(peer.request("callback", "adds") == "adds ran");
  CHECK(peer.request("callback", "added") == "added ran");
  // Replacing the one running would destroy it mid-call: refused, and the
  // server gets the refusal as CallError.
  peer.register_callback("replaces", [&](std::string_view, std::string_view) {
    peer.register_callback("replaces", [](std::string_view, std::string_view) { return std::string("new"); });
    return std::string("old");
  });
  CHECK(peer.request("callbackError", "replaces") ==
        "SyncRpcChannel::register_callback from inside a callback: \"replaces\" is registered already and may be "
        "the one running");
  CHECK(peer.request("echo", "in step") == "in step");
}

TEST_CASE("A handler that throws becomes RemoteError on the client while the server serves on") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  CHECK_THROWS_WITH_AS(peer.request("throwingHandler", ""), "handler failed on purpose",
                       RemoteError);
  CHECK(peer.request("echo", "still serving") == "still serving");
}

TEST_CASE("SyncRpcChannel gets the scripted peer's 1 MiB reply intact") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  const std::vector<std::byte> reply = peer.request_binary("bigReply", {});
  REQUIRE(reply.size() == std::size_t{1} << 20);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < reply.size(); ++i) {
    if (reply[i] != static_cast<std::byte>(i % 251)) ++wrong;
  }
  CHECK(wrong == 0);
  CHECK(peer.request("echo", "after") == "after");
}

TEST_CASE("The server exiting mid-request is ChildExited naming exit status 3") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  const ChildExited e = thrown_by<ChildExited>([&] { peer.request("exitNow", ""); });
  CHECK(std::string(e.what()) == "scripted_peer exited with status 3");
  CHECK(e.exit_code() == 3);
  const spinrpc::PeerClosed& as_peer_closed = e;  // callers may catch the channel's type
  CHECK_FALSE(as_peer_closed.inside_field());
  const int status = peer.close();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
}

}  // namespace
