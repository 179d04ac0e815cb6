// The shared-memory transport end to end (docs/SHARED-MEMORY.md): a
// SyncRpcChannel spawning the real spinrpc-server offers it a sealed memfd
// as fd 3, and both ends move onto it after the first reply. Checked through
// what each end reports (stats(), getChannelStats), /proc and the bytes that
// come back, never through timings; every wait has a hang guard.
//
// scripted_peer builds its own FrameChannel on fds 0/1 and never looks at
// SPINRPC_SHM, so it stays on pipes; scripted_server goes through
// run_server_main (take_shm_offer) as spinrpc-server does, and is the peer
// here for Calls inside a request.
#include <signal.h>       // ::kill, SIGKILL, SIGSTOP, SIGCONT
#include <sys/stat.h>     // ::stat
#include <sys/wait.h>     // WIFEXITED, WEXITSTATUS
#include <unistd.h>       // ::getpid, ::gettid, ::mkstemp, ::close, ::unlink, environ

#include <algorithm>     // std::count
#include <atomic>        // std::atomic
#include <chrono>        // std::chrono
#include <cstdlib>       // ::mkdtemp
#include <cstddef>       // std::byte, std::size_t
#include <filesystem>    // std::filesystem
#include <fstream>       // std::ifstream
#include <map>           // std::map
#include <sstream>       // std::stringstream
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <thread>        // std::thread
#include <vector>        // std::vector

#include <doctest/doctest.h>
#include <simdjson.h>

#include "client-shim/child_exited.h"
#include "client-shim/sync_rpc_channel.h"
#include "protocol/remote_error.h"
#include "stream/timed_out.h"
#include "tests/support/paths.h"
#include "tests/support/proc.h"

namespace {

using spinrpc::ChildExited;
using spinrpc::SyncRpcChannel;
using spinrpc::SyncRpcOptions;
using spinrpc::test::bin_path;
using spinrpc::test::eventually;
using spinrpc::test::tsgo_path;

constexpr std::string_view kShared = "shared memory";
constexpr std::string_view kDescriptor = "descriptor";
constexpr std::string_view kMovedReason = "shared memory: the client offered a ring and the server took it";
constexpr std::string_view kNotTakenReason =
    "pipes: the server did not take the shared-memory offer (not spinrpc-server, or it refused: SPINRPC_SHM=off, "
    "--shm=off, --async)";
constexpr std::string_view kClientOffReason =
    "pipes: shared memory is off (SPINRPC_SHM=off or the shared_memory option)";

// The server's own view: getChannelStats' transport and transport_reason.
struct ServerTransport {
  std::string transport;
  std::string reason;
};

ServerTransport server_transport(SyncRpcChannel& channel) {
  const std::string json = channel.request("getChannelStats", "");
  INFO("getChannelStats: " << json);
  simdjson::dom::parser parser;
  const simdjson::dom::element stats = parser.parse(json);
  ServerTransport t;
  t.transport = std::string(stats["transport"].get_string().value());
  t.reason = std::string(stats["transport_reason"].get_string().value());
  return t;
}

// fd number → link target of /proc/PID/fd.
std::map<int, std::string> open_fds(int pid) {
  std::map<int, std::string> fds;
  std::error_code ec;
  const std::filesystem::path dir = "/proc/" + std::to_string(pid) + "/fd";
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code link_error;
    const auto target = std::filesystem::read_symlink(it->path(), link_error);
    fds[std::stoi(it->path().filename().string())] = link_error ? std::string() : target.string();
  }
  return fds;
}

bool names_the_ring(const std::string& target) { return target.find("memfd:spinrpc-ring") != std::string::npos; }

// Whether /proc/PID/maps has the ring mapped.
bool maps_the_ring(int pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    if (names_the_ring(line)) return true;
  }
  return false;
}

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> bytes(n);
  std::uint32_t x = seed * 2654435761U + 1;
  for (auto& b : bytes) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::byte>(x);
  }
  return bytes;
}

// This process's environment with `entry` in place of any SPINRPC_SHM: the
// sanitizers' options and the rest still reach the child.
std::vector<std::string> environment_with(const std::string& entry) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).rfind("SPINRPC_SHM=", 0) != 0) env.emplace_back(*e);
  }
  env.push_back(entry);
  return env;
}

// A file for a child's stderr, removed when the test ends.
struct TempFile {
  std::string path;
  TempFile() {
    std::string name = (std::filesystem::temp_directory_path() / "spinrpc-shm-test-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    REQUIRE(fd >= 0);
    ::close(fd);
    path = name;
  }
  ~TempFile() { ::unlink(path.c_str()); }
  std::string text() const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

// The SPINRPC_SHM entry a client with pid `parent` writes to offer the file
// at `path` as fd `fd` (docs/SHARED-MEMORY.md, "Handshake"), written out
// here rather than through the library's writer.
std::string offer_entry(int parent, const std::string& path, int fd) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return "SPINRPC_SHM=fd:" + std::to_string(fd) + ",parent:" + std::to_string(parent) +
         ",inode:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

// A directory of its own holding an executable shell script (`path`) and
// the files it writes, removed when the test ends.
struct Script {
  std::filesystem::path dir;
  std::string path;
  Script() {
    std::string name = (std::filesystem::temp_directory_path() / "spinrpc-shm-script-XXXXXX").string();
    REQUIRE(::mkdtemp(name.data()) != nullptr);
    dir = name;
    path = (dir / "server").string();
  }
  ~Script() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  Script(const Script&) = delete;
  Script& operator=(const Script&) = delete;
  void write(const std::string& body) const {
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  std::string file(const char* name) const { return (dir / name).string(); }
  std::string text(const char* name) const {
    std::ifstream in(file(name), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

// The bytes of one reply frame as spinrpc-server writes it (name and
// payload under 256 bytes: bin8).
std::string reply_frame(std::string_view method, std::string_view payload) {
  std::string f = "\x93\x04\xc4";
  f += static_cast<char>(method.size());
  f += method;
  f += '\xc4';
  f += static_cast<char>(payload.size());
  f += payload;
  return f;
}

// 'sh -c' quoting of one word.
std::string sh_quoted(const std::string& word) {
  std::string q = "'";
  for (const char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// ── The move, seen from both ends ─────────────────────────────────────

TEST_CASE("spinrpc-server takes the offer: both ends report shared memory after the first request") {
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api"});
  CHECK(server.stats().transport == kDescriptor);  // nothing exchanged yet
  CHECK(server.request("echo", "first") == "first");
  const spinrpc::ChannelStats stats = server.stats();
  CHECK(stats.transport == kShared);
  CHECK(stats.transport_reason == kMovedReason);
  const ServerTransport theirs = server_transport(server);
  CHECK(theirs.transport == kShared);
  CHECK(theirs.reason == kMovedReason);
  CHECK(server.request("echo", "second") == "second");
  CHECK(server.close() == 0);
}

TEST_CASE("echoes over the ring come back byte-exact: 0 B, 8 B, 100 KiB, 3 MiB, 16 MiB (larger than the ring)") {
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api"});
  CHECK(server.request("echo", "move") == "move");
  REQUIRE(server.stats().transport == kShared);
  unsigned seed = 1;
  for (const std::size_t size : {std::size_t{0}, std::size_t{8}, std::size_t{100} << 10, std::size_t{3} << 20,
                                 std::size_t{16} << 20, std::size_t{8}, std::size_t{0}}) {
    CAPTURE(size);
    const std::vector<std::byte> sent = pattern(size, seed++);
    CHECK(server.request_binary("echo", sent) == sent);
  }
  CHECK(server.request("echo", "still in step") == "still in step");
  CHECK(server.stats().transport == kShared);
  CHECK(server.close() == 0);
}

TEST_CASE("an Error as the first reply moves the channel as a Response does") {
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api"});
  CHECK_THROWS_AS(server.request("noSuchMethod", "x"), spinrpc::RemoteError);
  CHECK(server.stats().transport == kShared);
  CHECK(server.request("echo", "after the error") == "after the error");
  CHECK(server_transport(server).transport == kShared);
  CHECK(server.close() == 0);
}

TEST_CASE("Calls inside a request go over the ring (scripted_server, run_server_main as spinrpc-server)") {
  SyncRpcChannel server(bin_path("scripted_server"), {});
  int calls = 0;
  server.register_callback("readFile", [&](std::string_view, std::string_view payload) {
    ++calls;
    return "contents of " + std::string(payload);
  });
  server.register_callback("fails", [](std::string_view, std::string_view) -> std::string {
    throw std::runtime_error("no such file");
  });
  // The first exchange holds a Call: the move waits for its Response.
  CHECK(server.request("callback", "readFile a.ts") == "contents of a.ts");
  CHECK(server.stats().transport == kShared);
  CHECK(server.request("callback", "readFile b.ts") == "contents of b.ts");
  CHECK(server.request("callbackTwice", "readFile") == "contents of 1,contents of 2");
  CHECK(server.request("callbackError", "fails").find("no such file") != std::string::npos);
  // A Call whose payload is bigger than the ring, and its answer too.
  const std::string big(std::size_t{3} << 20, 'q');
  CHECK(server.request("callback", "readFile " + big) == "contents of " + big);
  CHECK(calls == 5);
  CHECK(server_transport(server).transport == kShared);
  CHECK(server.stats().transport == kShared);
  CHECK(server.close() == 0);
}

TEST_CASE("scripted_peer, which does not read SPINRPC_SHM, leaves the channel on pipes") {
  SyncRpcChannel peer(bin_path("scripted_peer"), {});
  peer.register_callback("readFile", [](std::string_view, std::string_view payload) { return std::string(payload); });
  CHECK(peer.request("callback", "readFile x") == "x");
  CHECK(peer.stats().transport == kDescriptor);
  CHECK(peer.stats().transport_reason == kNotTakenReason);
  CHECK(peer.request("callback", "readFile y") == "y");
}

// ── Staying on pipes ──────────────────────────────────────────────────

TEST_CASE("shared_memory=false: no offer, both ends stay on pipes and say why") {
  SyncRpcOptions options;
  options.shared_memory = false;
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api"}, options);
  CHECK(server.request("echo", "x") == "x");
  CHECK(server.stats().transport == kDescriptor);
  CHECK(server.stats().transport_reason == kClientOffReason);
  const ServerTransport theirs = server_transport(server);
  CHECK(theirs.transport == kDescriptor);
  // The variable is not set in ctest's environment: nothing was offered.
  CHECK(theirs.reason == "pipes: no shared memory offered (a client that did not spawn this server, or not spinrpc's)");
  CHECK(server.close() == 0);
}

TEST_CASE("SPINRPC_SHM=off in the child's environment: no offer, and the server says SPINRPC_SHM=off") {
  SyncRpcOptions options;
  options.environment = environment_with("SPINRPC_SHM=off");
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api"}, options);
  CHECK(server.request("echo", "x") == "x");
  CHECK(server.stats().transport == kDescriptor);
  CHECK(server.stats().transport_reason == kClientOffReason);
  const ServerTransport theirs = server_transport(server);
  CHECK(theirs.transport == kDescriptor);
  CHECK(theirs.reason == "pipes: SPINRPC_SHM=off");
  CHECK(server.close() == 0);
}

TEST_CASE("--shm=off: the server refuses the offer and both ends stay on pipes") {
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api", "--shm=off"});
  CHECK(server.request("echo", "x") == "x");
  CHECK(server.stats().transport == kDescriptor);
  CHECK(server.stats().transport_reason == kNotTakenReason);
  const ServerTransport theirs = server_transport(server);
  CHECK(theirs.transport == kDescriptor);
  CHECK(theirs.reason == "pipes: --shm=off");
  const std::vector<std::byte> big = pattern(std::size_t{3} << 20, 7);
  CHECK(server.request_binary("echo", big) == big);
  CHECK(server.close() == 0);
}

TEST_CASE("the real tsgo ignores the offer: the channel stays on pipes and works") {
  SyncRpcChannel tsgo(tsgo_path(), {"--api"});
  CHECK(tsgo.request("echo", "hello") == "hello");
  CHECK(tsgo.stats().transport == kDescriptor);
  CHECK(tsgo.stats().transport_reason == kNotTakenReason);
  const std::vector<std::byte> big = pattern(std::size_t{3} << 20, 8);
  CHECK(tsgo.request_binary("echo", big) == big);
  CHECK(tsgo.request("echo", "") == "");
  CHECK(tsgo.stats().transport == kDescriptor);
}

// ── Only the child the client spawned takes the offer ─────────────────

TEST_CASE("a logging wrapper (\"$@\" | tee LOG) in between: the server behind it stays on pipes in silence, the log "
          "holds every reply") {
  // The wrapper is the client's child; spinrpc-server, its child, inherits
  // fd 3 and the variable. The offer names the client, not the wrapper.
  const std::string server_path = bin_path("spinrpc-server");
  const Script wrapper;
  wrapper.write(sh_quoted(server_path) + " \"$@\" 2>" + sh_quoted(wrapper.file("err")) + " | tee " +
                sh_quoted(wrapper.file("log")));
  SyncRpcChannel server(wrapper.path, {"--api"});
  CHECK(server.request("echo", "first") == "first");
  CHECK(server.stats().transport == kDescriptor);
  CHECK(server.stats().transport_reason == kNotTakenReason);
  const ServerTransport theirs = server_transport(server);
  CHECK(theirs.transport == kDescriptor);
  CHECK(theirs.reason.rfind("pipes: the shared memory offered is for a child of pid " + std::to_string(::getpid()) +
                                ", and this server's parent is pid ",
                            0) == 0);
  CHECK(server.request("echo", "second") == "second");
  CHECK(server.close() == 0);
  // Every reply went through the wrapper: the log starts with the first
  // echo and ends with the last, the stats between them.
  const std::string text = wrapper.text("log");
  const std::string first = reply_frame("echo", "first");
  const std::string second = reply_frame("echo", "second");
  CAPTURE(text);
  CHECK(text.rfind(first, 0) == 0);
  CHECK(text.size() > first.size() + second.size());
  CHECK(text.ends_with(second));
  CHECK(wrapper.text("err") == "");
}

TEST_CASE("a wrapper that execs the server leaves it the client's child: it takes the offer") {
  const Script wrapper;
  wrapper.write("exec " + sh_quoted(bin_path("spinrpc-server")) + " \"$@\"");
  SyncRpcChannel server(wrapper.path, {"--api"});
  CHECK(server.request("echo", "first") == "first");
  CHECK(server.stats().transport == kShared);
  CHECK(server_transport(server).transport == kShared);
  CHECK(server.close() == 0);
}

TEST_CASE("an offer whose fd was closed before the server started: one line naming that, no errno text") {
  TempFile stderr_file;
  // The server is still the client's child, but fd 3 is gone at its exec,
  // so the number belongs to whatever the server opens first.
  const std::string script =
      "exec " + sh_quoted(bin_path("spinrpc-server")) + " --api 3<&- 2>" + sh_quoted(stderr_file.path);
  SyncRpcChannel server("/bin/sh", {"-c", script});
  CHECK(server.request("echo", "x") == "x");
  CHECK(server.stats().transport == kDescriptor);
  const std::string what = "fd 3 is not the memory the client offered: the descriptor was closed before this server started";
  CHECK(server_transport(server).reason == "pipes: the shared memory offered was refused: " + what);
  CHECK(server.close() == 0);
  CHECK(stderr_file.text() == "spinrpc-server: shared memory offer refused: " + what + "\n");
}

TEST_CASE("a request that times out over the ring: stats() still says shared memory after the kill") {
  SyncRpcOptions options;
  // Long enough for the first exchange; the second meets a stopped server.
  options.request_timeout = std::chrono::seconds(2);
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api"}, options);
  CHECK(server.request("echo", "move") == "move");
  REQUIRE(server.stats().transport == kShared);
  const spinrpc::ChannelStats before = server.stats();
  REQUIRE(::kill(server.pid(), SIGSTOP) == 0);
  CHECK_THROWS_AS(server.request("echo", "never answered"), spinrpc::TimedOut);
  CHECK(server.pid() == -1);  // killed and reaped
  const spinrpc::ChannelStats after = server.stats();
  CHECK(after.transport == kShared);
  CHECK(after.transport_reason == kMovedReason);
  CHECK(after.waits >= before.waits);
  server.close();
  CHECK(server.stats().transport == kDescriptor);  // all zero after close()
}

// ── Endings ───────────────────────────────────────────────────────────

TEST_CASE("the server killed (SIGKILL) while the client waits in a request over the ring: ChildExited") {
  SyncRpcOptions options;
  // The hang guard: a client that missed the death would throw TimedOut.
  options.request_timeout = spinrpc::test::kHangGuard;
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api"}, options);
  CHECK(server.request("echo", "move") == "move");
  REQUIRE(server.stats().transport == kShared);
  const int pid = server.pid();
  // Stopped, the server cannot answer: the client's next request waits.
  REQUIRE(::kill(pid, SIGSTOP) == 0);
  REQUIRE(eventually([&] { return spinrpc::test::proc_stat_field(pid, 3) == "T"; }));
  const int client_tid = static_cast<int>(::gettid());
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    // Once the requesting thread sleeps on the ring's doorbell (a read of
    // the pipe beside the ring, or a poll of it with the request's
    // deadline) rather than spinning, the kill lands while it waits.
    (void)eventually([&] { return spinrpc::test::thread_state(client_tid) == "S"; });
    killed = ::kill(pid, SIGKILL) == 0;
  });
  try {
    server.request("echo", "never answered");
    FAIL("the request returned from a stopped server");
  } catch (const ChildExited& e) {
    CHECK(e.term_signal() == SIGKILL);
  } catch (const std::exception& e) {
    FAIL("not ChildExited: " << std::string(e.what()));
  }
  killer.join();
  CHECK(killed);
}

TEST_CASE("close() over the ring: the server sees EOF through the closed flag and exits 0") {
  SyncRpcChannel server(bin_path("spinrpc-server"), {"--api"});
  CHECK(server.request("echo", "move") == "move");
  REQUIRE(server.stats().transport == kShared);
  const int status = server.close();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

// ── Descriptors ───────────────────────────────────────────────────────

TEST_CASE("the child gets exactly fds 0, 1, 2 and the ring's memfd as 3; the server closes 3 once it took it") {
  // The child stops itself before it execs the server, so that its
  // descriptors can be read as spawned (the server takes the offer at start).
  const std::string script = "kill -STOP $$; exec " + sh_quoted(bin_path("spinrpc-server")) + " --api";
  SyncRpcChannel server("/bin/sh", {"-c", script});
  const int pid = server.pid();
  REQUIRE(eventually([&] { return spinrpc::test::proc_stat_field(pid, 3) == "T"; }));
  const std::map<int, std::string> spawned = open_fds(pid);
  std::vector<int> numbers;
  for (const auto& [fd, target] : spawned) numbers.push_back(fd);
  CHECK(numbers == std::vector<int>{0, 1, 2, 3});
  REQUIRE(spawned.count(3) == 1);
  CAPTURE(spawned.at(3));
  CHECK(spawned.at(3).rfind("/memfd:spinrpc-ring", 0) == 0);
  CHECK(spawned.at(0).rfind("pipe:", 0) == 0);
  CHECK(spawned.at(1).rfind("pipe:", 0) == 0);
  // The offer in the environment the child started with.
  {
    std::ifstream environ("/proc/" + std::to_string(pid) + "/environ");
    std::string entry;
    int offers = 0;
    while (std::getline(environ, entry, '\0')) {
      if (entry.rfind("SPINRPC_SHM=", 0) == 0) {
        ++offers;
        CHECK(entry == offer_entry(::getpid(), "/proc/" + std::to_string(pid) + "/fd/3", 3));
      }
    }
    CHECK(offers == 1);
  }
  REQUIRE(::kill(pid, SIGCONT) == 0);
  CHECK(server.request("echo", "x") == "x");
  CHECK(server.stats().transport == kShared);
  // Taken: the mapping stays, the descriptor is gone.
  for (const auto& [fd, target] : open_fds(pid)) {
    CAPTURE(fd);
    CAPTURE(target);
    CHECK_FALSE(names_the_ring(target));
  }
  CHECK(maps_the_ring(pid));
  CHECK(server.close() == 0);
}

TEST_CASE("a server offered a fd that is not a memfd leaves it open, stays on pipes, warns in one sentence") {
  TempFile stderr_file;
  // fd 5 is /dev/null: offered by hand, by this process to its child.
  const std::string script = "exec " + sh_quoted(bin_path("spinrpc-server")) + " --api 5</dev/null 2>" +
                             sh_quoted(stderr_file.path);
  SyncRpcOptions options;
  options.shared_memory = false;  // the client offers nothing: the variable below is the only offer
  options.environment = environment_with(offer_entry(::getpid(), "/dev/null", 5));
  SyncRpcChannel server("/bin/sh", {"-c", script}, options);
  CHECK(server.request("echo", "x") == "x");
  CHECK(server.stats().transport == kDescriptor);
  const ServerTransport theirs = server_transport(server);
  CHECK(theirs.transport == kDescriptor);
  CHECK(theirs.reason.rfind("pipes: the shared memory offered was refused: ", 0) == 0);
  CHECK(theirs.reason.find("not a memfd") != std::string::npos);
  const std::map<int, std::string> fds = open_fds(server.pid());
  REQUIRE(fds.count(5) == 1);
  CHECK(fds.at(5) == "/dev/null");
  CHECK(server.close() == 0);
  const std::string warning = stderr_file.text();
  CAPTURE(warning);
  CHECK(std::count(warning.begin(), warning.end(), '\n') == 1);
  CHECK(warning == "spinrpc-server: shared memory offer refused: the offered shared memory (fd 5) is not a memfd\n");
}

TEST_CASE("an offer to another process's child, or a bare fd:N: the server leaves the fd alone and says nothing") {
  for (const std::string& entry : {offer_entry(1, "/dev/null", 5), std::string("SPINRPC_SHM=fd:5")}) {
    CAPTURE(entry);
    TempFile stderr_file;
    const std::string script = "exec " + sh_quoted(bin_path("spinrpc-server")) + " --api 5</dev/null 2>" +
                               sh_quoted(stderr_file.path);
    SyncRpcOptions options;
    options.shared_memory = false;
    options.environment = environment_with(entry);
    SyncRpcChannel server("/bin/sh", {"-c", script}, options);
    CHECK(server.request("echo", "x") == "x");
    const ServerTransport theirs = server_transport(server);
    CHECK(theirs.transport == kDescriptor);
    const std::map<int, std::string> fds = open_fds(server.pid());
    REQUIRE(fds.count(5) == 1);
    CHECK(fds.at(5) == "/dev/null");
    CHECK(server.close() == 0);
    if (entry.find("parent:") != std::string::npos) {
      CHECK(theirs.reason.rfind("pipes: the shared memory offered is for a child of pid 1, ", 0) == 0);
      CHECK(stderr_file.text() == "");
    } else {
      // Not an offer at all: a value nobody but a person writes, said once.
      CHECK(theirs.reason == "pipes: SPINRPC_SHM is not off, auto or a client's offer");
      CHECK(stderr_file.text() == "spinrpc-server: SPINRPC_SHM is not off, auto or a client's offer; ignored\n");
    }
  }
}

}  // namespace
