// A server whose client dies: spinrpc-server (and scripted_peer, a
// spinrpc::Server that Calls back) must notice the EOF or EPIPE and exit,
// whatever it was doing, with nothing left behind. The client is a real
// process (sh, then sleep) that writes canned bytes and is SIGKILLed; the
// kernel closing its fds is the only signal the server gets.
#include <fcntl.h>      // ::fcntl, F_GETPIPE_SZ
#include <sys/ioctl.h>  // ::ioctl, FIONREAD
#include <sys/wait.h>   // WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG
#include <unistd.h>     // ::sysconf, _SC_PAGESIZE

#include <optional>  // std::optional
#include <string>    // std::string

#include <doctest/doctest.h>

#include "channel/frame_channel.h"
#include "descriptor/pipe.h"
#include "server_test_util.h"
#include "tests/support/fd_channel.h"

namespace {

using spinrpc::ChildProcess;
using spinrpc::MessageType;
using spinrpc::PipePair;
using spinrpc::UniqueFd;
using spinrpc::make_pipe;
using spinrpc::test::TempFile;
using spinrpc::test::bin_path;
using spinrpc::test::concat;
using spinrpc::test::eventually;
using spinrpc::test::frame_bytes;
using spinrpc::test::kHangGuard;
using spinrpc::test::raw;
using spinrpc::test::read_to_eof;

// How the server ended and what it left.
struct Ending {
  int status = -1;                     // waitpid status
  std::string stderr_text;             // everything it wrote to stderr
  std::optional<std::string> stdout_rest;  // stdout after what the test read; nullopt: never EOF
};

// One server with its client. The server reads the client's stdout and
// writes to a pipe the test reads (or, with client_reads_output, to the
// client's stdin, which the client never reads). The test keeps no pipe end
// but the one it reads from, so EOF and EPIPE are the client's doing alone.
class Session {
 public:
  Session(const std::string& server, const std::vector<std::byte>& client_bytes,
          bool client_reads_output = false)
      : err_("stderr"), input_("client-bytes") {
    input_.write(client_bytes);
    PipePair to_server = make_pipe();
    PipePair from_server = make_pipe();
    server_ = spinrpc::test::spawn_with_stderr(server, {"--api"}, to_server.read_end.get(),
                                               from_server.write_end.get(), err_);
    to_server.read_end.reset();
    from_server.write_end.reset();
    UniqueFd client_stdin = client_reads_output ? std::move(from_server.read_end)
                                                : spinrpc::test::open_dev_null(O_RDONLY);
    client_ = spinrpc::test::spawn_stalling_client(input_, client_stdin.get(),
                                                   to_server.write_end.get());
    to_server.write_end.reset();
    from_server_ = std::move(from_server.read_end);  // empty if the client holds it
    // The test's look at the pipe the client holds; let go of before the
    // client is killed, so that EPIPE is the client's doing alone.
    if (client_reads_output) observer_ = std::move(client_stdin);
  }

  int server_pid() const { return server_.pid(); }

  // With client_reads_output: the pipe to the client holds as many bytes as
  // it can, so a server with more to write is blocked in write(2) or
  // vmsplice(2). Seen
  // through FIONREAD and F_GETPIPE_SZ, which every Linux has (wchan does
  // not name the function on every kernel).
  bool output_pipe_full() const {
    REQUIRE(observer_);
    int queued = 0;
    REQUIRE(::ioctl(observer_.get(), FIONREAD, &queued) == 0);
    const int capacity = ::fcntl(observer_.get(), F_GETPIPE_SZ);
    REQUIRE(capacity > 0);
    // Full by slots: a pipe holds at most one page per slot. The copied
    // frame header takes a slot for a few bytes, and the lent payload
    // (BufferOptions::LargeWrites::lend) starts mid-page, so a full pipe
    // may hold up to two pages less than its capacity.
    return queued > capacity - 2 * static_cast<int>(::sysconf(_SC_PAGESIZE));
  }
  void stop_observing() { observer_.reset(); }
  int from_server_fd() const { return from_server_.get(); }
  UniqueFd take_from_server() { return std::move(from_server_); }

  // The client has written all its bytes (it has exec'ed sleep).
  void wait_until_client_has_written() {
    REQUIRE_MESSAGE(eventually([&] { return spinrpc::test::runs(client_.pid(), "sleep"); }),
                    "the client did not finish writing within the hang guard");
  }

  // SIGKILLs the client and returns how the server ended. Fails (and kills
  // the server) if it still runs after the hang guard.
  Ending kill_client_and_wait() {
    client_.kill(SIGKILL);
    const int client_status = client_.wait();
    CHECK(WIFSIGNALED(client_status));
    const std::optional<int> status = server_.try_wait_for(kHangGuard);
    REQUIRE_MESSAGE(status.has_value(), "the server still runs 5 s after its client was killed");
    Ending ending;
    ending.status = *status;
    ending.stderr_text = err_.read();
    if (from_server_) ending.stdout_rest = read_to_eof(from_server_.get());
    return ending;
  }

 private:
  TempFile err_;          // the server's stderr
  TempFile input_;        // what the client writes
  ChildProcess server_;   // killed and reaped on destruction if still running
  ChildProcess client_;
  UniqueFd from_server_;  // the server's stdout, unless the client holds it
  UniqueFd observer_;     // with client_reads_output: our end of the client's stdin pipe
};

bool exited_with(int status, int code) { return WIFEXITED(status) && WEXITSTATUS(status) == code; }

// [Request, "echo", "hello"] cut inside the payload.
std::vector<std::byte> half_echo() {
  std::vector<std::byte> bytes = frame_bytes(MessageType::Request, "echo", "hello");
  bytes.resize(bytes.size() - 3);
  return bytes;
}

TEST_CASE("spinrpc-server exits 1 with tsgo's \"unexpected EOF\" when its client is killed mid-frame") {
  Session session(bin_path("spinrpc-server"), half_echo());
  session.wait_until_client_has_written();
  const Ending end = session.kill_client_and_wait();
  CHECK(exited_with(end.status, 1));
  CHECK(end.stderr_text == "unexpected EOF\n");
  // Nothing was written, and no process is left holding the server's stdout.
  CHECK(end.stdout_rest == std::string());
}

TEST_CASE("spinrpc-server answers a whole request, then exits 0 when its client is killed") {
  const auto request = frame_bytes(MessageType::Request, "echo", "last words");
  Session session(bin_path("spinrpc-server"), request);
  session.wait_until_client_has_written();
  const Ending end = session.kill_client_and_wait();
  CHECK(exited_with(end.status, 0));
  CHECK(end.stderr_text.empty());
  const auto reply = frame_bytes(MessageType::Response, "echo", "last words");
  CHECK(end.stdout_rest == std::string(reinterpret_cast<const char*>(reply.data()), reply.size()));
}

TEST_CASE("A server waiting for a CallResponse exits when its client is killed") {
  Session session(bin_path("scripted_peer"),
                  frame_bytes(MessageType::Request, "callback", "readFile /a.ts"));
  // The server's Call proves it is inside the handler, waiting in call().
  spinrpc::FrameChannel from_server =
      spinrpc::test::fd_channel(session.take_from_server(), spinrpc::test::open_dev_null(O_WRONLY));
  {
    spinrpc::test::HangGuard guard(session.server_pid());
    const spinrpc::FrameView call = from_server.read_frame();
    CHECK(call.type == MessageType::Call);
    CHECK(call.name_text() == "readFile");
    CHECK(call.payload_text() == "/a.ts");
    REQUIRE_FALSE(guard.stop());
  }
  const Ending end = session.kill_client_and_wait();
  CHECK(exited_with(end.status, 1));
  CHECK(end.stderr_text == "scripted_peer: the client closed the connection during a Call\n");
  // No Response or Error follows the Call, and the server's stdout is closed.
  {
    spinrpc::test::HangGuard guard(session.server_pid());
    CHECK_FALSE(from_server.try_read_frame().has_value());
  }
}

TEST_CASE("A server reading a CallResponse exits with \"unexpected EOF\" when its client dies mid-frame") {
  auto half_answer = frame_bytes(MessageType::CallResponse, "readFile", "contents of /a.ts");
  half_answer.resize(half_answer.size() - 5);
  Session session(bin_path("scripted_peer"),
                  concat({frame_bytes(MessageType::Request, "callback", "readFile /a.ts"),
                          half_answer}));
  session.wait_until_client_has_written();
  const Ending end = session.kill_client_and_wait();
  CHECK(exited_with(end.status, 1));
  CHECK(end.stderr_text == "scripted_peer: unexpected EOF\n");
  const auto call = frame_bytes(MessageType::Call, "readFile", "/a.ts");
  CHECK(end.stdout_rest == std::string(reinterpret_cast<const char*>(call.data()), call.size()));
}

TEST_CASE("spinrpc-server stuck writing to a client that stopped reading says so and exits 1 once it is killed") {
  // A 1 MiB echo: the reply fills the 64 KiB pipe and the server blocks in
  // write(2), since the client holds the read end and never reads.
  const std::string payload(std::size_t{1} << 20, 'x');
  Session session(bin_path("spinrpc-server"), frame_bytes(MessageType::Request, "echo", payload),
                  /*client_reads_output=*/true);
  session.wait_until_client_has_written();
  const bool stuck_in_write = eventually([&] { return session.output_pipe_full(); });
  CHECK_MESSAGE(stuck_in_write, "the server never filled the pipe to its client");
  session.stop_observing();
  const Ending end = session.kill_client_and_wait();
  // EPIPE: a reply the client asked for and never read. tsgo dies of
  // SIGPIPE here (status 141 on stdio; exit 2 and a Go panic over --pipe);
  // spinrpc-server says what happened in one line, exit 1
  // (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
  CHECK(exited_with(end.status, 1));
  CHECK(end.stderr_text == "spinrpc-server: the client closed the connection before reading a reply\n");
}

}  // namespace
