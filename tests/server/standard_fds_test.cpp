// spinrpc-server with fds 0-2 in the states a parent can hand a child, and
// the endings a signal or a leaving client make (issue 14, kinds 1, 2, 4, 5):
// descriptors left as found on every exit path, stderr lines that arrive
// whole or never block serving, quiet signals, a clear word for what was cut
// short. Real processes on real pipes; every wait has the 5 s hang guard.
#include <fcntl.h>     // ::fcntl, O_NONBLOCK, F_GETPIPE_SZ
#include <poll.h>      // ::poll
#include <signal.h>    // SIGTERM, SIGINT
#include <spawn.h>     // ::posix_spawn
#include <sys/ioctl.h>  // ::ioctl, FIONREAD
#include <sys/wait.h>  // ::waitpid, WIFEXITED, WEXITSTATUS
#include <unistd.h>    // ::write, ::read

#include <algorithm>  // std::min
#include <chrono>    // std::chrono::steady_clock
#include <optional>  // std::optional
#include <string>    // std::string
#include <vector>    // std::vector


#include <doctest/doctest.h>

#include "descriptor/glibc_extensions.h"
#include "descriptor/pipe.h"
#include "server_test_util.h"

extern char** environ;

namespace {

using spinrpc::MessageType;
using spinrpc::PipePair;
using spinrpc::UniqueFd;
using spinrpc::make_pipe;
using spinrpc::test::bin_path;
using spinrpc::test::eventually;
using spinrpc::test::frame_bytes;
using spinrpc::test::kHangGuard;
using spinrpc::test::raw;
using spinrpc::test::read_to_eof;

bool nonblocking(int fd) { return (::fcntl(fd, F_GETFL) & O_NONBLOCK) != 0; }
void set_nonblocking(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  REQUIRE(::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK)) == 0);
}

// A process with exactly the given fds as 0, 1 and 2 (-1: closed) and
// `env` added to the environment. Reaped (SIGKILL first) on destruction.
class Process {
 public:
  Process(const std::vector<std::string>& argv, int in, int out, int err,
          const std::vector<std::string>& env = {}) {
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    const int wanted[3] = {in, out, err};
    // Copies above 2 first, so that one dup2 cannot clobber another's source.
    std::vector<UniqueFd> copies;
    for (int target = 0; target < 3; ++target) {
      if (wanted[target] < 0) {
        ::posix_spawn_file_actions_addclose(&actions, target);
        continue;
      }
      copies.push_back(UniqueFd(::fcntl(wanted[target], F_DUPFD_CLOEXEC, 10)));
      ::posix_spawn_file_actions_adddup2(&actions, copies.back().get(), target);
    }
    spinrpc::spawn_actions_close_from(&actions, 3);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    for (const std::string& e : env) env_strings.push_back(e);
    std::vector<char*> envp;
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    REQUIRE(::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data()) == 0);
    ::posix_spawn_file_actions_destroy(&actions);
  }
  ~Process() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int pid() const { return pid_; }
  void signal(int sig) const { REQUIRE(::kill(pid_, sig) == 0); }
  // The wait status, or std::nullopt if it still runs after the hang guard.
  std::optional<int> wait() {
    const bool ended = eventually([&] {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
      return status_.has_value();
    });
    return ended ? status_ : std::nullopt;
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Reads `bytes` bytes from the blocking fd `fd`, within the hang guard.
bool read_reply(int fd, std::size_t bytes) {
  std::size_t got = 0;
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  while (got < bytes && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0) continue;
    char buf[256];
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, bytes - got));
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return got == bytes;
}

bool exited_with(const std::optional<int>& status, int code) {
  return status && WIFEXITED(*status) && WEXITSTATUS(*status) == code;
}

void write_all(int fd, const std::vector<std::byte>& bytes) {
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

// Fills the pipe whose write end is `fd` to the brim (non-blocking writes
// until EAGAIN), leaving the fd's flags as they were.
void fill_pipe(int fd) {
  const bool was = nonblocking(fd);
  set_nonblocking(fd, true);
  const std::string chunk(4096, '#');
  while (::write(fd, chunk.data(), chunk.size()) > 0) {
  }
  REQUIRE(errno == EAGAIN);
  std::string one(1, '#');
  while (::write(fd, one.data(), 1) > 0) {
  }
  set_nonblocking(fd, was);
}

// Reads `fd` to EOF, dropping the first `skip` bytes (the filler).
std::string drain_after(int fd, std::size_t skip) {
  const std::optional<std::string> all = read_to_eof(fd);
  REQUIRE_MESSAGE(all.has_value(), "stderr never reached EOF");
  REQUIRE(all->size() >= skip);
  return all->substr(skip);
}

std::size_t pipe_capacity(int fd) { return static_cast<std::size_t>(::fcntl(fd, F_GETPIPE_SZ)); }

// ── kind 2: stderr in unusual states ─────────────────────────────────────

TEST_CASE("A fatal line reaches a non-blocking stderr pipe that is full for a moment") {
  // The example: input 0x92, stderr an inherited non-blocking pipe
  // that is full when the line is written. The reader drains it a little
  // later; the whole line must be there, then EOF, exit 1.
  for (const bool nonblock : {true, false}) {
    CAPTURE(nonblock);
    PipePair in = make_pipe();
    PipePair err = make_pipe();
    fill_pipe(err.write_end.get());
    const std::size_t filler = pipe_capacity(err.write_end.get());
    set_nonblocking(err.write_end.get(), nonblock);
    UniqueFd devnull = spinrpc::test::open_dev_null(O_WRONLY);
    Process server({bin_path("spinrpc-server"), "--api"}, in.read_end.get(), devnull.get(),
                   err.write_end.get());
    in.read_end.reset();
    err.write_end.reset();
    write_all(in.write_end.get(), raw({0x92}));
    in.write_end.reset();
    // Let the server meet the full pipe before anyone reads it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string text = drain_after(err.read_end.get(), filler);
    CHECK(text == "api: invalid request: expected fixed 3-element array (0x93), received: 0x92\n");
    CHECK(exited_with(server.wait(), 1));
  }
}

TEST_CASE("A usage message of 100 000+ bytes reaches a full non-blocking stderr whole") {
  PipePair err = make_pipe();
  fill_pipe(err.write_end.get());
  const std::size_t filler = pipe_capacity(err.write_end.get());
  set_nonblocking(err.write_end.get(), true);
  UniqueFd devnull_in = spinrpc::test::open_dev_null(O_RDONLY);
  UniqueFd devnull_out = spinrpc::test::open_dev_null(O_WRONLY);
  const std::string bogus = "--" + std::string(100000, 'x');
  Process server({bin_path("spinrpc-server"), "--api", bogus}, devnull_in.get(), devnull_out.get(),
                 err.write_end.get());
  err.write_end.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string text = drain_after(err.read_end.get(), filler);
  const std::string first = "spinrpc-server: flag provided but not defined: -" + bogus.substr(2) + "\n\nusage:";
  CHECK(text.substr(0, first.size()) == first);
  CHECK(text.size() > 102000);
  CHECK(text.back() == '\n');
  CHECK(text.find("Besides tsgo's methods") != std::string::npos);  // the usage's last paragraph
  CHECK(exited_with(server.wait(), 2));
}

TEST_CASE("A warning never blocks serving when stderr is a full pipe nobody reads") {
  // A bad TSGO_SYNC_SPIN_US is reported while the server goes on serving;
  // stderr is a full blocking pipe that is never read until the end. The
  // echo must be answered (a blocking write of the warning would hang here).
  PipePair in = make_pipe();
  PipePair out = make_pipe();
  PipePair err = make_pipe();
  fill_pipe(err.write_end.get());
  Process server({bin_path("spinrpc-server"), "--api"}, in.read_end.get(), out.write_end.get(),
                 err.write_end.get(), {"TSGO_SYNC_SPIN_US=" + std::string(10000, '9') + "x"});
  in.read_end.reset();
  out.write_end.reset();
  err.write_end.reset();
  write_all(in.write_end.get(), frame_bytes(MessageType::Request, "echo", "hi"));
  in.write_end.reset();
  const std::optional<std::string> reply = read_to_eof(out.read_end.get());
  const auto want = frame_bytes(MessageType::Response, "echo", "hi");
  REQUIRE_MESSAGE(reply.has_value(), "no reply: the server blocked writing its warning");
  CHECK(*reply == std::string(reinterpret_cast<const char*>(want.data()), want.size()));
  CHECK(exited_with(server.wait(), 0));
}

TEST_CASE("A long warning written while serving is cut to one piece with a marker") {
  PipePair in = make_pipe();
  PipePair err = make_pipe();
  UniqueFd devnull = spinrpc::test::open_dev_null(O_WRONLY);
  const std::string value(10000, '7');
  Process server({bin_path("spinrpc-server"), "--api"}, in.read_end.get(), devnull.get(),
                 err.write_end.get(), {"TSGO_SYNC_SPIN_US=-" + value});
  in.read_end.reset();
  err.write_end.reset();
  in.write_end.reset();
  const std::optional<std::string> text = read_to_eof(err.read_end.get());
  REQUIRE(text.has_value());
  CHECK(text->rfind("spinrpc: ignoring TSGO_SYNC_SPIN_US=\"-777", 0) == 0);
  CHECK(text->find(" bytes, cut]\n") != std::string::npos);
  CHECK(exited_with(server.wait(), 0));
}

TEST_CASE("spinrpc-server started with fds 0, 1 and 2 closed ends as with /dev/null there") {
  // Go's runtime opens /dev/null on a closed standard fd; so does the
  // server, so that a socket it opens never becomes its stderr or stdout.
  Process server({bin_path("spinrpc-server"), "--api"}, -1, -1, -1);
  CHECK(exited_with(server.wait(), 0));  // stdin /dev/null: EOF between messages
}

TEST_CASE("spinrpc-server whose stdout is /dev/full or stdin a directory names the fd and the error in one line, exit 1") {
  // tsgo panics on the failed write (exit 2) and says `read /dev/stdin: is
  // a directory` (docs/PROTOCOL.md#os-errors).
  struct Case {
    const char* name;
    const char* in_path;
    int in_flags;
    const char* out_path;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"stdout /dev/full", nullptr, 0, "/dev/full", "spinrpc-server: cannot write to fd 1: No space left on device\n"},
      {"stdin a directory", "/", O_RDONLY | O_DIRECTORY, "/dev/null", "spinrpc-server: cannot read from fd 0: Is a directory\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    PipePair requests = make_pipe();
    UniqueFd in = c.in_path ? UniqueFd(::open(c.in_path, c.in_flags | O_CLOEXEC)) : std::move(requests.read_end);
    REQUIRE(in);
    UniqueFd out(::open(c.out_path, O_WRONLY | O_CLOEXEC));
    REQUIRE(out);
    PipePair err = make_pipe();
    Process server({bin_path("spinrpc-server"), "--api"}, in.get(), out.get(), err.write_end.get());
    in.reset();
    out.reset();
    err.write_end.reset();
    if (!c.in_path) {
      write_all(requests.write_end.get(), raw({0x93, 0x01, 0xc4, 0x04, 'e', 'c', 'h', 'o', 0xc4, 0x02, 'h', 'i'}));
    }
    const std::optional<std::string> text = read_to_eof(err.read_end.get());
    REQUIRE(text.has_value());
    CHECK(*text == c.expected);
    CHECK(exited_with(server.wait(), 1));
  }
}

// ── kind 1: descriptors left as found ───────────────────────────────────

TEST_CASE("stdin's O_NONBLOCK is left as found on EOF, on an error and on SIGTERM/SIGINT, spinning or not") {
  // The example: a dup of the pipe read end the server got as stdin
  // (what a parent or a terminal shares with it); after the server ends, its
  // flags must be as they were, however it ended.
  for (const bool found_nonblocking : {false, true}) {
    for (const char* spin : {"--spin-us=100", "--spin-us=0"}) {
      for (const int how : {0, 1, SIGTERM, SIGINT}) {  // 0: EOF, 1: malformed input
        CAPTURE(found_nonblocking);
        CAPTURE(spin);
        CAPTURE(how);
        PipePair in = make_pipe();
        PipePair out = make_pipe();
        set_nonblocking(in.read_end.get(), found_nonblocking);
        const UniqueFd kept = UniqueFd::duplicate(in.read_end.get());
        UniqueFd devnull = spinrpc::test::open_dev_null(O_WRONLY);
        Process server({bin_path("spinrpc-server"), "--api", spin}, in.read_end.get(),
                       out.write_end.get(), devnull.get());
        in.read_end.reset();
        out.write_end.reset();
        // An echo answered proves the reader is up, and the signal handlers
        // with it: a signal sent before them is lost when the server was
        // started with it ignored (a background job of a non-interactive
        // shell is), and the server would wait for input forever.
        write_all(in.write_end.get(), frame_bytes(MessageType::Request, "echo", "x"));
        REQUIRE(read_reply(out.read_end.get(), frame_bytes(MessageType::Response, "echo", "x").size()));
        if (how == 0) in.write_end.reset();
        if (how == 1) write_all(in.write_end.get(), raw({0x92}));
        if (how > 1) server.signal(how);
        const std::optional<int> status = server.wait();
        REQUIRE(status.has_value());
        CHECK(nonblocking(kept.get()) == found_nonblocking);
      }
    }
  }
}

// ── kind 4: quiet when nothing is wrong ─────────────────────────────────

struct Signalled {
  std::optional<int> status;
  std::string stderr_text;
};

// Starts the server on pipes, writes `input` (keeping stdin open), reads
// `expect_reply` bytes of reply, sends `sig`, and returns the ending.
Signalled signal_server(const std::vector<std::byte>& input, std::size_t expect_reply, int sig) {
  PipePair in = make_pipe();
  PipePair out = make_pipe();
  PipePair err = make_pipe();
  Process server({bin_path("spinrpc-server"), "--api"}, in.read_end.get(), out.write_end.get(),
                 err.write_end.get());
  in.read_end.reset();
  out.write_end.reset();
  err.write_end.reset();
  if (!input.empty()) write_all(in.write_end.get(), input);
  std::string got;
  while (got.size() < expect_reply) {
    char buf[256];
    const ssize_t n = ::read(out.read_end.get(), buf, sizeof buf);
    REQUIRE(n > 0);
    got.append(buf, static_cast<std::size_t>(n));
  }
  // The server has read what it was sent once the reply is out; a partial
  // frame, once the pipe holds none of it (FIONREAD on either end counts
  // the bytes not yet read), however slow the server is (TSan).
  REQUIRE(eventually([&] {
    int unread = 0;
    return ::ioctl(in.write_end.get(), FIONREAD, &unread) == 0 && unread == 0;
  }));
  REQUIRE(eventually([&] { return spinrpc::test::catches_signal(server.pid(), sig); }));
  server.signal(sig);
  Signalled result;
  result.status = server.wait();
  const std::optional<std::string> text = read_to_eof(err.read_end.get());
  result.stderr_text = text.value_or("(no EOF on stderr)");
  return result;
}

TEST_CASE("SIGTERM and SIGINT end an idle server without a word, exit 143/130") {
  for (const int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    // Idle before any request, and idle after one was answered.
    for (const bool after_echo : {false, true}) {
      CAPTURE(after_echo);
      const auto echo = frame_bytes(MessageType::Request, "echo", "hi");
      const auto reply = frame_bytes(MessageType::Response, "echo", "hi");
      const Signalled end = signal_server(after_echo ? echo : std::vector<std::byte>{},
                                          after_echo ? reply.size() : 0, sig);
      REQUIRE(end.status.has_value());
      CHECK(WIFEXITED(*end.status));
      CHECK(WEXITSTATUS(*end.status) == 128 + sig);
      CHECK(end.stderr_text == "");
    }
  }
}

TEST_CASE("A SIGTERM sent as soon as the server blocks it ends the server with 143, even started with it ignored") {
  // SIGTERM ignored at spawn, as for a background job of a non-interactive
  // shell: a signal that came before the handler was installed used to be
  // lost there, and the server waited for input forever. Blocked first thing
  // in main, it waits, pending, for the handler (app/shutdown_on_signal.h).
  PipePair in = make_pipe();
  PipePair out = make_pipe();
  PipePair err = make_pipe();
  struct sigaction ignore {}, saved {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGTERM, &ignore, &saved) == 0);
  Process server({bin_path("spinrpc-server"), "--api"}, in.read_end.get(), out.write_end.get(), err.write_end.get());
  ::sigaction(SIGTERM, &saved, nullptr);
  in.read_end.reset();
  out.write_end.reset();
  err.write_end.reset();
  REQUIRE(eventually([&] { return spinrpc::test::blocks_signal(server.pid(), SIGTERM); }));
  server.signal(SIGTERM);
  const std::optional<int> status = server.wait();
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 143);
  CHECK(read_to_eof(out.read_end.get()).value_or("(no EOF)") == "");
  CHECK(read_to_eof(err.read_end.get()).value_or("(no EOF)") == "");
}

TEST_CASE("A signal that cuts a partial frame short says so in one line") {
  const Signalled end = signal_server(raw({0x93, 0x01, 0xc4, 0x04, 'e', 'c'}), 0, SIGTERM);
  REQUIRE(end.status.has_value());
  CHECK(WEXITSTATUS(*end.status) == 143);
  CHECK(end.stderr_text == "spinrpc-server: SIGTERM received while a message was arriving; it is cut short\n");
}

// ── kind 5: truncation gets a clear word ───────────────────────────────

TEST_CASE("A client that leaves at a field boundary inside a message gets one line and exit 1") {
  // tsgo exits 0 silently here; a half-sent request is data nobody answers
  // (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
  for (const auto& input : {raw({0x93, 0x01, 0xc4}), raw({0x93}), raw({0x93, 0x01, 0xc4, 0x04, 'e', 'c', 'h', 'o'})}) {
    PipePair in = make_pipe();
    PipePair err = make_pipe();
    UniqueFd devnull = spinrpc::test::open_dev_null(O_WRONLY);
    Process server({bin_path("spinrpc-server"), "--api"}, in.read_end.get(), devnull.get(),
                   err.write_end.get());
    in.read_end.reset();
    err.write_end.reset();
    write_all(in.write_end.get(), input);
    in.write_end.reset();
    const std::optional<std::string> text = read_to_eof(err.read_end.get());
    REQUIRE(text.has_value());
    CHECK(text->rfind("unexpected EOF: the peer closed the connection after " + std::to_string(input.size()) +
                          (input.size() == 1 ? " byte" : " bytes") + " of a message, at a field boundary",
                      0) == 0);
    CHECK(text->find('\n') == text->size() - 1);
    CHECK(exited_with(server.wait(), 1));
  }
}

}  // namespace
