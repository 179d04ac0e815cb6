// spinrpc-server's transports end to end: a Unix domain socket (--pipe),
// two FIFOs (--fifo-in/--fifo-out), the real tsgo's --pipe, and how each
// ends (client gone, SIGTERM, bad paths), driven by SyncRpcChannel.
#include <fcntl.h>       // ::open
#include <poll.h>        // ::poll
#include <signal.h>      // SIGTERM, SIGINT
#include <sys/socket.h>  // ::socket, ::bind
#include <sys/stat.h>    // ::mkfifo
#include <sys/un.h>      // sockaddr_un
#include <sys/wait.h>    // ::waitpid
#include <unistd.h>      // ::close, ::write

#include <fstream>       // std::ofstream, std::ifstream
#include <iterator>      // std::istreambuf_iterator
#include <future>        // std::async
#include <thread>        // std::this_thread
#include <string>        // std::string
#include <system_error>  // std::system_error
#include <vector>        // std::vector

#include <doctest/doctest.h>

#include "channel/frame_channel.h"
#include "stream/peer_closed.h"
#include "stream/timed_out.h"
#include "transport/endpoint.h"
#include "transport/unix_socket_posix.h"
#include "client-shim/sync_rpc_channel.h"
#include "protocol/frame_encoder.h"
#include "tests/support/paths.h"
#include "tests/transport/server_process.h"
#include "tests/support/fd_channel.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::SyncRpcChannel;
using spinrpc::test::bin_path;
using spinrpc::test::exited_with;
using spinrpc::test::file_exists;
using spinrpc::test::run_server;
using spinrpc::test::ServerProcess;
using spinrpc::test::TempDir;

std::string mebibyte_payload() {
  std::string payload(std::size_t{1} << 20, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7 % 256);
  return payload;
}

void check_echoes(SyncRpcChannel& channel) {
  CHECK(channel.request("echo", "8 bytes!") == "8 bytes!");
  const std::string big = mebibyte_payload();
  CHECK(channel.request("echo", big) == big);
}

// A socket file nobody listens on: what a crashed server leaves behind.
void make_stale_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  const sockaddr_un address = spinrpc::unix_socket_address(path, "cannot make a stale socket at");
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  ::close(fd);
}

TEST_CASE("spinrpc-server on a Unix socket echoes 8 B and 1 MiB and removes the socket when the client leaves") {
  TempDir dir;
  const std::string path = dir / "api.sock";
  ServerProcess server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
  auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path));
  check_echoes(channel);
  CHECK(channel.pid() == -1);
  CHECK(channel.close() == 0);
  const auto end = server.finish();
  CHECK(exited_with(end.status, 0));
  CHECK(end.stderr_text.empty());
  CHECK_FALSE(file_exists(path));
}

TEST_CASE("spinrpc-server on two FIFOs echoes 8 B and 1 MiB and removes the FIFOs it created") {
  TempDir dir;
  const std::string in = dir / "requests", out = dir / "replies";
  ServerProcess server(bin_path("spinrpc-server"), {"--api", "--fifo-in", in, "--fifo-out", out});
  auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::fifos(in, out));
  check_echoes(channel);
  channel.close();
  const auto end = server.finish();
  CHECK(exited_with(end.status, 0));
  CHECK_FALSE(file_exists(in));
  CHECK_FALSE(file_exists(out));
}

TEST_CASE("spinrpc-server on FIFOs serves a client that opens the reply FIFO first and keeps FIFOs that existed") {
  TempDir dir;
  const std::string in = dir / "requests", out = dir / "replies";
  REQUIRE(::mkfifo(in.c_str(), 0600) == 0);
  REQUIRE(::mkfifo(out.c_str(), 0600) == 0);
  ServerProcess server(bin_path("spinrpc-server"), {"--api", "--fifo-in", in, "--fifo-out", out});
  // The order connect() to FIFOs does not use: replies first (blocks until the
  // server opens them for writing), then requests.
  spinrpc::UniqueFd replies(::open(out.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(replies);
  spinrpc::UniqueFd requests(::open(in.c_str(), O_WRONLY | O_CLOEXEC));
  REQUIRE(requests);
  spinrpc::FrameChannel channel = spinrpc::test::fd_channel(std::move(replies), std::move(requests));
  channel.write_frame(spinrpc::MessageType::Request, spinrpc::as_bytes("echo"), spinrpc::as_bytes("hi"));
  const auto reply = channel.read_frame();
  CHECK(reply.type == spinrpc::MessageType::Response);
  CHECK(reply.payload_text() == "hi");
  channel = spinrpc::test::fd_channel(spinrpc::UniqueFd(::open("/dev/null", O_RDONLY)), spinrpc::UniqueFd());
  const auto end = server.finish();
  CHECK(exited_with(end.status, 0));
  CHECK(file_exists(in));
  CHECK(file_exists(out));
}

TEST_CASE("spinrpc-server on FIFOs answers a client that wrote its request and closed the request FIFO before opening the reply FIFO") {
  // The issue's shell client: printf '...' > D/in; cat D/out. The request
  // sits in the FIFO; nobody will open it for writing again.
  TempDir dir;
  const std::string in = dir / "in", out = dir / "out";
  ServerProcess server(bin_path("spinrpc-server"), {"--api", "--fifo-in", in, "--fifo-out", out});
  // Wait until the server holds its request FIFO's reader (a non-blocking
  // open for writing succeeds then), and write through that open.
  spinrpc::UniqueFd requests;
  for (int i = 0; i < 4000 && !requests; ++i) {
    requests = spinrpc::UniqueFd(::open(in.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    if (!requests) std::this_thread::sleep_for(5ms);
  }
  REQUIRE(requests);
  std::vector<std::byte> request;
  spinrpc::append_frame(request, spinrpc::MessageType::Request, spinrpc::as_bytes("echo"), spinrpc::as_bytes("hi"));
  REQUIRE(::write(requests.get(), request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  requests.reset();  // gone for good, before the reply FIFO is opened
  // The reply FIFO, read to EOF with a hang guard: the server must not wait
  // in open(in) for a writer that already left.
  spinrpc::UniqueFd replies(::open(out.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  REQUIRE(replies);
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + 5s;  // hang guard, not a bound
  bool eof = false;
  bool writer_came = false;
  while (!eof && std::chrono::steady_clock::now() < deadline) {
    pollfd p{replies.get(), POLLIN, 0};
    ::poll(&p, 1, 100);
    char buf[256];
    const ssize_t n = ::read(replies.get(), buf, sizeof buf);
    if (n > 0) {
      got.append(buf, static_cast<std::size_t>(n));
      writer_came = true;
    } else if (n == 0 && (writer_came || (p.revents & POLLHUP) != 0)) {
      eof = true;
    }
  }
  std::vector<std::byte> reply;
  spinrpc::append_frame(reply, spinrpc::MessageType::Response, spinrpc::as_bytes("echo"), spinrpc::as_bytes("hi"));
  CHECK(got == std::string(reinterpret_cast<const char*>(reply.data()), reply.size()));
  CHECK(eof);
  const auto end = server.finish(5s);
  CHECK(exited_with(end.status, 0));
  CHECK(end.stderr_text == "");
}

TEST_CASE("SyncRpcChannel::connect to FIFOs gives up in time when nobody opens the reply FIFO for writing") {
  // A stuck or dead server between its two opens: something holds the
  // request FIFO for reading, nobody will open the reply FIFO for writing.
  TempDir dir;
  const std::string in = dir / "in", out = dir / "out";
  REQUIRE(::mkfifo(in.c_str(), 0600) == 0);
  REQUIRE(::mkfifo(out.c_str(), 0600) == 0);
  const spinrpc::UniqueFd stuck_reader(::open(in.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  REQUIRE(stuck_reader);
  spinrpc::SyncRpcOptions options;
  options.connect_timeout = 100ms;
  auto attempt = std::async(std::launch::async, [&] {
    try {
      SyncRpcChannel::connect(spinrpc::Endpoint::fifos(in, out), options);
      return std::string("connected");
    } catch (const std::system_error& e) {
      return std::string(e.what());
    }
  });
  if (attempt.wait_for(5s) != std::future_status::ready) {  // hang guard
    // Release the blocked open so the test can end, then fail.
    const spinrpc::UniqueFd release(::open(out.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    attempt.wait();
    FAIL("connect to FIFOs still waited in open() after 5 s");
  }
  CHECK(attempt.get() == "cannot connect to " + out + ": the server did not open it for writing in time: Connection timed out");
}

// A Unix socket listening at `path` that never accepts (a stopped server):
// connect(2) succeeds until `backlog` is full, and nobody ever reads.
spinrpc::UniqueFd never_accepting_listener(const std::string& path, int backlog) {
  spinrpc::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_un address = spinrpc::unix_socket_address(path, "test");
  REQUIRE(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener.get(), backlog) == 0);
  return listener;
}

TEST_CASE("SyncRpcChannel::connect to a socket gives up in time on a stuck server whose backlog is full") {
  // A listener that never accepts (a stopped server): once its backlog is
  // full, a blocking connect(2) waits forever.
  TempDir dir;
  const std::string path = dir / "stuck.sock";
  const spinrpc::UniqueFd listener = never_accepting_listener(path, 0);
  const sockaddr_un address = spinrpc::unix_socket_address(path, "test");
  std::vector<spinrpc::UniqueFd> queued;
  for (int i = 0; i < 64; ++i) {
    spinrpc::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      REQUIRE(errno == EAGAIN);
      break;
    }
    queued.push_back(std::move(fd));
  }
  spinrpc::SyncRpcOptions options;
  options.connect_timeout = 100ms;
  auto attempt = std::async(std::launch::async, [&] {
    try {
      SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path), options);
      return std::string("connected");
    } catch (const std::system_error& e) {
      return std::string(e.what());
    }
  });
  if (attempt.wait_for(5s) != std::future_status::ready) {  // hang guard
    ::shutdown(listener.get(), SHUT_RDWR);
    queued.clear();
    attempt.wait_for(5s);
    FAIL("connect to a socket still waited in connect() after 5 s");
  }
  CHECK(attempt.get() == "cannot connect to " + path + " within 100 ms: Resource temporarily unavailable");
  // And a server started on that path refuses it: a live (stuck) server holds it.
  const auto refused = run_server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
  CHECK(exited_with(refused.status, 1));
  CHECK(refused.stderr_text.find("a live server is listening there") != std::string::npos);
}

TEST_CASE("Calls reach the client's callbacks over a socket and over FIFOs") {
  TempDir dir;
  SUBCASE("socket") {
    const std::string path = dir / "api.sock";
    ServerProcess server(bin_path("scripted_server"), {"--pipe", path});
    auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path));
    channel.register_callback("readFile", [](std::string_view, std::string_view arg) {
      return "contents of " + std::string(arg);
    });
    CHECK(channel.request("callback", "readFile /a.ts") == "contents of /a.ts");
    CHECK(channel.request("callbackTwice", "readFile") == "contents of 1,contents of 2");
    channel.close();
    CHECK(exited_with(server.finish().status, 0));
  }
  SUBCASE("FIFOs") {
    const std::string in = dir / "requests", out = dir / "replies";
    ServerProcess server(bin_path("scripted_server"), {"--fifo-in", in, "--fifo-out", out});
    auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::fifos(in, out));
    channel.register_callback("readFile", [](std::string_view, std::string_view) -> std::string {
      throw std::runtime_error("no such file");
    });
    CHECK(channel.request("callbackError", "readFile") == "no such file");
    channel.close();
    CHECK(exited_with(server.finish().status, 0));
  }
}

TEST_CASE("spinrpc-server on a socket ends when the client disconnects in the middle of a request") {
  TempDir dir;
  const std::string path = dir / "api.sock";
  SUBCASE("halfway through a frame: unexpected EOF, exit 1") {
    ServerProcess server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
    std::vector<std::byte> frame;
    spinrpc::append_frame(frame, spinrpc::MessageType::Request, spinrpc::as_bytes("echo"),
                          spinrpc::as_bytes("a payload cut short"));
    {
      spinrpc::Streams connection = spinrpc::connect(spinrpc::Endpoint::pipe(path), {});
      // Up to the middle of the payload: EOF inside a field.
      iovec part{frame.data(), frame.size() - 5};
      connection.out->write_all(std::span<iovec>(&part, 1));
    }
    const auto end = server.finish();
    CHECK(exited_with(end.status, 1));
    CHECK(end.stderr_text == "unexpected EOF\n");
    CHECK_FALSE(file_exists(path));
  }
  SUBCASE("while the server waits for a CallResponse") {
    ServerProcess server(bin_path("scripted_server"), {"--pipe", path});
    auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path));
    channel.register_callback("readFile", [&](std::string_view, std::string_view) -> std::string {
      // The client dies inside its callback: the server never gets an answer.
      std::_Exit(0);
    });
    // Run the dying client in a child process so this test survives it.
    const pid_t client = ::fork();
    if (client == 0) {
      try {
        channel.request("callback", "readFile /x");
      } catch (...) {
      }
      std::_Exit(1);
    }
    int status = 0;
    ::waitpid(client, &status, 0);
    CHECK(exited_with(status, 0));  // it died in the callback
    channel.close();                // the parent's copy of the socket
    const auto end = server.finish();
    // A request left unanswered: one line, exit 1 (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
    CHECK(exited_with(end.status, 1));
    CHECK(end.stderr_text == "scripted_server: the client closed the connection during a Call; the request is not answered\n");
    CHECK_FALSE(file_exists(path));
  }
}

TEST_CASE("spinrpc-server removes only the files it created: one put in their place since is left as it is") {
  // Found by a break-it pass: the FIFO (or socket) path removed and a
  // regular file written there mid-session, the server unlinked that file
  // when it ended.
  TempDir dir;
  const auto replace_with_data = [](const std::string& path) {
    REQUIRE(::unlink(path.c_str()) == 0);
    std::ofstream(path) << "precious data";
  };
  const auto content = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  SUBCASE("FIFOs, the client leaves") {
    const std::string in = dir / "requests", out = dir / "replies";
    ServerProcess server(bin_path("spinrpc-server"), {"--api", "--fifo-in", in, "--fifo-out", out});
    auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::fifos(in, out));
    CHECK(channel.request("echo", "hi") == "hi");
    replace_with_data(out);
    channel.close();
    const auto end = server.finish();
    CHECK(exited_with(end.status, 0));
    CHECK(content(out) == "precious data");
    CHECK_FALSE(file_exists(in));  // its own, still there: removed
  }
  SUBCASE("socket, SIGTERM") {
    const std::string path = dir / "api.sock";
    ServerProcess server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
    auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path));
    CHECK(channel.request("echo", "hi") == "hi");
    replace_with_data(path);
    server.kill(SIGTERM);
    const auto end = server.finish();
    CHECK(exited_with(end.status, 128 + SIGTERM));
    CHECK(content(path) == "precious data");
  }
}

TEST_CASE("spinrpc-server refuses two spellings of one FIFO for --fifo-in and --fifo-out, leaving nothing behind") {
  TempDir dir;
  const std::string fifo = dir / "q";
  const std::string same = std::string(dir / "") + "/q";  // one more slash
  const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--fifo-in", fifo, "--fifo-out", same});
  CHECK(exited_with(end.status, 1));
  CHECK(end.stderr_text == "spinrpc-server: cannot use FIFO " + same + ": it is the same FIFO as --fifo-in " + fifo +
                               ", so the server would read its own replies: Invalid argument\n");
  CHECK_FALSE(file_exists(fifo));
}

TEST_CASE("spinrpc-server ends on SIGTERM or SIGINT with a client connected, removing its files") {
  TempDir dir;
  SUBCASE("socket, SIGTERM") {
    const std::string path = dir / "api.sock";
    ServerProcess server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
    auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path));
    CHECK(channel.request("echo", "before") == "before");
    server.kill(SIGTERM);
    const auto end = server.finish();
    CHECK(exited_with(end.status, 128 + SIGTERM));
    CHECK(end.stderr_text == "");  // idle between requests: nothing is cut short
    CHECK_FALSE(file_exists(path));
    CHECK_THROWS_AS(channel.request("echo", "after"), spinrpc::PeerClosed);
  }
  SUBCASE("FIFOs, SIGINT") {
    const std::string in = dir / "requests", out = dir / "replies";
    ServerProcess server(bin_path("spinrpc-server"), {"--api", "--fifo-in", in, "--fifo-out", out});
    auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::fifos(in, out));
    CHECK(channel.request("echo", "before") == "before");
    server.kill(SIGINT);
    const auto end = server.finish();
    CHECK(exited_with(end.status, 128 + SIGINT));
    CHECK(end.stderr_text == "");
    CHECK_FALSE(file_exists(in));
    CHECK_FALSE(file_exists(out));
  }
  SUBCASE("socket, SIGTERM before any client came") {
    const std::string path = dir / "api.sock";
    ServerProcess server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
    auto probe = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path));  // waits until it listens
    server.kill(SIGTERM);
    const auto end = server.finish();
    CHECK(exited_with(end.status, 128 + SIGTERM));
    CHECK_FALSE(file_exists(path));
  }
}

TEST_CASE("spinrpc-server replaces a stale socket file and refuses a path a live server holds") {
  TempDir dir;
  const std::string path = dir / "api.sock";
  make_stale_socket(path);
  ServerProcess first(bin_path("spinrpc-server"), {"--api", "--pipe", path});
  auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path));
  CHECK(channel.request("echo", "first") == "first");

  const auto second = run_server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
  CHECK(exited_with(second.status, 1));
  CHECK(second.stderr_text == "spinrpc-server: cannot listen on " + path +
                                  ": a live server is listening there: Address already in use\n");
  // The refused server left the live one's socket alone.
  CHECK(file_exists(path));
  CHECK(channel.request("echo", "still here") == "still here");
  channel.close();
  CHECK(exited_with(first.finish().status, 0));
}

TEST_CASE("spinrpc-server refuses bad socket paths with one line and leaves nothing behind") {
  TempDir dir;
  SUBCASE("longer than sun_path") {
    const std::string path = dir / std::string(120, 'x');
    const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
    CHECK(exited_with(end.status, 1));
    CHECK(end.stderr_text == "spinrpc-server: cannot listen on " + path +
                                 ": a Unix socket path must have 1 to 107 bytes: File name too long\n");
    CHECK_FALSE(file_exists(path));
  }
  SUBCASE("in a directory that does not exist") {
    const std::string path = dir / "missing/api.sock";
    const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
    CHECK(exited_with(end.status, 1));
    CHECK(end.stderr_text == "spinrpc-server: cannot listen on " + path + ": No such file or directory\n");
  }
  SUBCASE("a regular file, which is not removed") {
    const std::string path = dir / "notes.txt";
    std::ofstream(path) << "keep me";
    const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--pipe", path});
    CHECK(exited_with(end.status, 1));
    CHECK(end.stderr_text == "spinrpc-server: cannot listen on " + path +
                                 ": it exists and is not a socket (not removing it): File exists\n");
    std::ifstream kept(path);
    std::string text;
    std::getline(kept, text);
    CHECK(text == "keep me");
  }
  SUBCASE("a FIFO path that is a regular file") {
    const std::string in = dir / "requests";
    std::ofstream(in) << "data";
    const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--fifo-in", in, "--fifo-out", dir / "replies"});
    CHECK(exited_with(end.status, 1));
    CHECK(end.stderr_text == "spinrpc-server: cannot use FIFO " + in + ": it exists and is not a FIFO: File exists\n");
    CHECK_FALSE(file_exists(dir / "replies"));
  }
  SUBCASE("the reply FIFO refused after the request FIFO was made: the one made is removed") {
    const std::string out = dir / "replies";
    std::ofstream(out) << "data";
    const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--fifo-in", dir / "requests", "--fifo-out", out});
    CHECK(exited_with(end.status, 1));
    CHECK(end.stderr_text == "spinrpc-server: cannot use FIFO " + out + ": it exists and is not a FIFO: File exists\n");
    CHECK_FALSE(file_exists(dir / "requests"));
    const auto missing = run_server(bin_path("spinrpc-server"),
                                    {"--api", "--fifo-in", dir / "requests", "--fifo-out", dir / "missing/replies"});
    CHECK(exited_with(missing.status, 1));
    CHECK_FALSE(file_exists(dir / "requests"));
  }
  SUBCASE("a FIFO that was there before is kept when the other is refused") {
    const std::string in = dir / "requests";
    REQUIRE(::mkfifo(in.c_str(), 0600) == 0);
    const auto end = run_server(bin_path("spinrpc-server"), {"--api", "--fifo-in", in, "--fifo-out", dir / "missing/replies"});
    CHECK(exited_with(end.status, 1));
    CHECK(file_exists(in));
  }
}

TEST_CASE("SyncRpcChannel::connect to a socket gives up after its timeout with an error naming the path") {
  TempDir dir;
  const std::string path = dir / "nobody.sock";
  spinrpc::SyncRpcOptions options;
  options.connect_timeout = 50ms;
  try {
    SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path), options);
    FAIL("connect to a socket succeeded with nobody listening");
  } catch (const std::system_error& e) {
    CHECK(std::string(e.what()) == "cannot connect to " + path + " within 50 ms: No such file or directory");
  }
}

TEST_CASE("SyncRpcChannel talks to the real tsgo over its --pipe socket") {
  TempDir dir;
  const std::string path = dir / "tsgo.sock";
  ServerProcess server(spinrpc::test::tsgo_path(), {"--api", "--cwd", "/some/dir", "--pipe", path});
  auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path));
  check_echoes(channel);
  CHECK(channel.request("initialize", "null") ==
        R"({"useCaseSensitiveFileNames":true,"currentDirectory":"/some/dir"})");
  channel.close();
  CHECK(exited_with(server.finish().status, 0));
  CHECK_FALSE(file_exists(path));
}

}  // namespace

namespace {

TEST_CASE("SyncRpcChannel ends a spawned server that does not answer within request_timeout") {
  spinrpc::SyncRpcOptions options;
  options.request_timeout = 200ms;
  // The deadline covers every request, so the first one asked must be the
  // one that is never answered: a freshly spawned child (under sanitizers,
  // on a busy machine) may take longer than any deadline to answer an echo.
  SyncRpcChannel channel(bin_path("scripted_peer"), {}, options);
  try {
    channel.request("neverAnswer", "");
    FAIL("neverAnswer was answered");
  } catch (const spinrpc::TimedOut& e) {
    CHECK(std::string(e.what()) == "scripted_peer did not answer `neverAnswer` within 200 ms; it was killed");
  }
  CHECK(channel.pid() == -1);  // killed and reaped
  CHECK_THROWS_AS(channel.request("echo", "again"), std::logic_error);
  const int status = channel.close();
  CHECK(spinrpc::test::killed_by(status, SIGKILL));
}

TEST_CASE("A request_timeout that passes in our own callback says so, not only that the server did not answer") {
  spinrpc::SyncRpcOptions options;
  options.request_timeout = 200ms;
  options.spin.spin_us = 0;  // a wait checks the deadline before it reads
  SyncRpcChannel channel(bin_path("scripted_peer"), {}, options);
  channel.register_callback("slow", [](std::string_view, std::string_view) {
    std::this_thread::sleep_for(400ms);  // past the deadline, here, not in the server
    return std::string("done");
  });
  try {
    channel.request("callback", "slow");
    FAIL("the request outlived its deadline");
  } catch (const spinrpc::TimedOut& e) {
    const std::string what = e.what();
    CHECK(what.starts_with("scripted_peer did not answer `callback` within 200 ms, counting "));
    CHECK(what.ends_with(" ms spent in this process's callbacks; it was killed"));
  }
}

TEST_CASE("SyncRpcChannel drops a socket connection whose server does not answer within request_timeout") {
  TempDir dir;
  const std::string path = dir / "api.sock";
  ServerProcess server(bin_path("scripted_server"), {"--pipe", path});
  spinrpc::SyncRpcOptions options;
  options.request_timeout = 100ms;
  auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path), options);
  CHECK_THROWS_WITH_AS(channel.request("neverAnswer", ""),
                       ("the server at " + path +
                        " did not answer `neverAnswer` within 100 ms; the connection was closed")
                           .c_str(),
                       spinrpc::TimedOut);
  server.kill(SIGTERM);
  CHECK(exited_with(server.finish().status, 128 + SIGTERM));
}

}  // namespace

namespace {

// Runs `request` on another thread and returns what it threw; FAILs after
// 10 s (a hang guard, not a timing): the write it makes must be bounded.
template <typename F>
std::string what_it_throws(F request, const char* what) {
  auto attempt = std::async(std::launch::async, [&] {
    try {
      request();
      return std::string("answered");
    } catch (const spinrpc::TimedOut& e) {
      return std::string("TimedOut: ") + e.what();
    } catch (const std::exception& e) {
      return std::string("other: ") + e.what();
    }
  });
  if (attempt.wait_for(10s) != std::future_status::ready) FAIL(what << " still writing after 10 s");
  return attempt.get();
}

TEST_CASE("SyncRpcChannel bounds the write of a request over a socket whose server stops reading") {
  // A listener that never accepts: connect(2) succeeds (the backlog), and
  // the 16 MiB request fills the socket's buffer with nobody reading.
  TempDir dir;
  const std::string path = dir / "deaf.sock";
  const spinrpc::UniqueFd listener = never_accepting_listener(path, 4);
  spinrpc::SyncRpcOptions options;
  options.request_timeout = 300ms;
  auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::pipe(path), options);
  const std::string big(16 << 20, 'x');
  const std::string thrown = what_it_throws([&] { channel.request("echo", big); }, "a socket connection's request");
  CHECK(thrown == "TimedOut: the server at " + path + " did not answer `echo` within 300 ms; the connection was closed");
}

TEST_CASE("SyncRpcChannel bounds the write of a request over FIFOs whose server stops reading") {
  TempDir dir;
  const std::string to_server = dir / "in.fifo";
  const std::string from_server = dir / "out.fifo";
  REQUIRE(::mkfifo(to_server.c_str(), 0600) == 0);
  REQUIRE(::mkfifo(from_server.c_str(), 0600) == 0);
  // A "server" that opens both ends and then reads nothing.
  const spinrpc::UniqueFd server_in(::open(to_server.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  REQUIRE(server_in.get() >= 0);
  auto server_out = std::async(std::launch::async, [&] {
    return spinrpc::UniqueFd(::open(from_server.c_str(), O_WRONLY | O_CLOEXEC));  // waits for the client
  });
  spinrpc::SyncRpcOptions options;
  options.request_timeout = 300ms;
  auto channel = SyncRpcChannel::connect(spinrpc::Endpoint::fifos(to_server, from_server), options);
  REQUIRE(server_out.wait_for(10s) == std::future_status::ready);
  const spinrpc::UniqueFd server_out_fd = server_out.get();
  const std::string big(16 << 20, 'x');
  const std::string thrown = what_it_throws([&] { channel.request("echo", big); }, "a FIFO connection's request");
  CHECK(thrown == "TimedOut: the server at " + to_server + " did not answer `echo` within 300 ms; the connection was closed");
}

}  // namespace
