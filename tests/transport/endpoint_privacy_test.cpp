// Endpoints spinrpc-server creates are private to its user whatever the
// umask (docs/HARDENING.md, "Endpoints are private"): the socket of --pipe
// in both API layouts, the FIFOs of --fifo-in/--fifo-out; a client of
// another user is refused by its credentials (SO_PEERCRED) even where the
// file's mode would let it in; an existing FIFO others may reach is refused.
#include <sys/socket.h>  // ::socket, ::connect
#include <sys/stat.h>    // ::stat, ::umask, ::mkfifo, ::chmod
#include <sys/un.h>      // sockaddr_un
#include <sys/wait.h>    // ::waitpid
#include <grp.h>         // ::setgroups
#include <unistd.h>      // ::fork, ::setresuid, ::setresgid, ::read, ::_exit

#include <cerrno>   // errno
#include <string>   // std::string
#include <thread>   // std::this_thread

#include <doctest/doctest.h>

#include "client-shim/sync_rpc_channel.h"
#include "transport/unix_socket_posix.h"
#include "tests/support/paths.h"
#include "tests/transport/server_process.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::SyncRpcChannel;
using spinrpc::test::bin_path;
using spinrpc::test::exited_with;
using spinrpc::test::file_exists;
using spinrpc::test::run_server;
using spinrpc::test::ServerProcess;
using spinrpc::test::TempDir;

constexpr uid_t kNobody = 65534;

// Starts the server with umask 000, as a careless parent would leave it.
struct UnderUmask000 {
  UnderUmask000() : saved(::umask(0)) {}
  ~UnderUmask000() { ::umask(saved); }
  mode_t saved;
};

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void wait_for(const std::string& path) {
  for (int i = 0; i < 2000 && !file_exists(path); ++i) std::this_thread::sleep_for(5ms);
  REQUIRE(file_exists(path));
}

// What a process of user nobody gets from `path`: the errno of connect, or
// 0 when connected and then closed by the server (EOF), or -1 when the
// server sent something or the connection stayed open.
int connect_as_nobody(const std::string& path) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0) {
      ::_exit(100);
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un address = spinrpc::unix_socket_address(path, "test");
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) ::_exit(errno);
    ::alarm(10);  // a server that keeps the connection would hang this child
    char byte;
    ::_exit(::read(fd, &byte, 1) == 0 ? 0 : 101);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) != 100);
  return WEXITSTATUS(status) == 101 ? -1 : WEXITSTATUS(status);
}

void check_private_socket(const std::vector<std::string>& args, const std::string& pipe_path,
                          const std::string& socket_path, const TempDir& dir) {
  std::vector<std::string> command{"--api"};
  command.insert(command.end(), args.begin(), args.end());
  command.insert(command.end(), {"--pipe", pipe_path});
  std::optional<ServerProcess> server;
  {
    const UnderUmask000 umask000;
    server.emplace(bin_path("spinrpc-server"), command);
  }
  wait_for(socket_path);
  CHECK(mode_of(socket_path) == 0600);
  if (socket_path != pipe_path) CHECK(mode_of(pipe_path) == 0700);

  if (::geteuid() == 0) {
    // Another user is kept out by the mode alone...
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    CHECK(connect_as_nobody(socket_path) == EACCES);
    // ...and, where the modes let it through, by its credentials.
    if (socket_path != pipe_path) REQUIRE(::chmod(pipe_path.c_str(), 0755) == 0);
    REQUIRE(::chmod(socket_path.c_str(), 0777) == 0);
    CHECK(connect_as_nobody(socket_path) == 0);
  } else {
    WARN_MESSAGE(false, "not root: the second-user half of this test needs root to become nobody");
  }
  auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(socket_path));
  CHECK(channel.request("echo", "mine") == "mine");
  channel.close();
  const auto end = server->finish();
  CHECK(exited_with(end.status, 0));
  if (::geteuid() == 0) {
    CHECK(end.stderr_text.find("spinrpc-server: refused a client on " + socket_path + ": uid 65534 (pid ") == 0);
    CHECK(end.stderr_text.find("is not this server's user (uid 0)\n") != std::string::npos);
  }
  CHECK_FALSE(file_exists(pipe_path));
}

TEST_CASE("--pipe under umask 000, API 7.0: the socket is 0600 and another user's client is refused") {
  TempDir dir;
  check_private_socket({}, dir / "api.sock", dir / "api.sock", dir);
}

TEST_CASE("--pipe under umask 000, API 7.1: a 0700 directory holds a 0600 socket; another user is refused") {
  TempDir dir;
  check_private_socket({"--useCaseSensitiveFileNames=true"}, dir / "api", dir / "api/socket", dir);
}

TEST_CASE("--pipe, API 7.1: a path that exists is refused, as 7.1's server refuses it, and left alone") {
  TempDir dir;
  const std::string path = dir / "there";
  REQUIRE(::mkdir(path.c_str(), 0755) == 0);
  const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--useCaseSensitiveFileNames", "--pipe", path});
  CHECK(exited_with(end.status, 1));
  CHECK(end.stderr_text == "spinrpc-server: cannot listen on " + path +
                               ": cannot create the socket's private directory: File exists\n");
  CHECK(mode_of(path) == 0755);
}

TEST_CASE("FIFOs created under umask 000 are 0600; an existing FIFO other users may reach is refused") {
  TempDir dir;
  const std::string in = dir / "requests", out = dir / "replies";
  {
    std::optional<ServerProcess> server;
    {
      const UnderUmask000 umask000;
      server.emplace(bin_path("spinrpc-server"), std::vector<std::string>{"--api", "--fifo-in", in, "--fifo-out", out});
    }
    wait_for(out);
    CHECK(mode_of(in) == 0600);
    CHECK(mode_of(out) == 0600);
    auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::fifos(in, out));
    CHECK(channel.request("echo", "mine") == "mine");
    channel.close();
    CHECK(exited_with(server->finish().status, 0));
  }
  REQUIRE(::mkfifo(in.c_str(), 0600) == 0);
  REQUIRE(::mkfifo(out.c_str(), 0600) == 0);
  REQUIRE(::chmod(out.c_str(), 0644) == 0);
  const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--fifo-in", in, "--fifo-out", out});
  CHECK(exited_with(end.status, 1));
  CHECK(end.stderr_text.find("spinrpc-server: cannot use FIFO " + out + ": other users may reach it (mode 0644") == 0);
  CHECK(mode_of(out) == 0644);  // left as found
}

}  // namespace
