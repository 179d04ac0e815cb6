// What a following server learns about its peer (descriptor/peer_process.h),
// checked against processes whose answers we know: this one, a child we
// started, a socket pair and a pipe we made.
#include <doctest/doctest.h>
#include <sched.h>       // sched_getcpu, sched_setaffinity, CPU_*
#include <signal.h>      // ::kill, SIGKILL
#include <sys/socket.h>  // ::socketpair
#include <sys/wait.h>    // ::waitpid
#include <unistd.h>      // ::fork, ::pipe, ::getpid, ::getppid, ::pause

#include "descriptor/peer_process.h"
#include "descriptor/unique_fd.h"

namespace {

using spinrpc::UniqueFd;

struct Pipe {
  UniqueFd read_end, write_end;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    read_end = UniqueFd(fds[0]);
    write_end = UniqueFd(fds[1]);
  }
};

// A child that holds what it inherited at fork, less the pipe ends it is
// told to close; it waits to be killed.
struct Child {
  pid_t pid = -1;
  Child(Pipe* pipe, bool close_read, bool close_write) {
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (pipe && close_read) pipe->read_end.reset();
      if (pipe && close_write) pipe->write_end.reset();
      for (;;) ::pause();
    }
  }
  ~Child() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

// Asks until `want` (the child closes its copies right after fork): a
// bound, not a timing.
bool settles_to(bool want, const Child& child, int fd) {
  bool held = !want;
  for (int i = 0; i < 100000 && held != want; ++i) held = spinrpc::holds_write_end(child.pid, fd);
  return held == want;
}

TEST_CASE("last_cpu_of names the CPU a thread runs on, -1 for no process") {
  // This thread runs while it asks: field 39 is its current CPU. Pinned,
  // so that no migration falls between the two reads.
  cpu_set_t saved;
  CPU_ZERO(&saved);
  REQUIRE(sched_getaffinity(0, sizeof saved, &saved) == 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  CHECK(spinrpc::last_cpu_of(::getpid()) == sched_getcpu());
  sched_setaffinity(0, sizeof saved, &saved);
  CHECK(spinrpc::last_cpu_of(0) == -1);
  CHECK(spinrpc::last_cpu_of(1 << 30) == -1);  // above pid_max
}

TEST_CASE("socket_peer_pid names the process that made a socket pair, 0 for a pipe") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  const UniqueFd a(fds[0]), b(fds[1]);
  CHECK(spinrpc::socket_peer_pid(a.get()) == ::getpid());
  Pipe pipe;
  CHECK(spinrpc::socket_peer_pid(pipe.read_end.get()) == 0);
}

TEST_CASE("holds_write_end finds the process that writes to our pipe, not one holding only its read end") {
  Pipe pipe;
  CHECK(spinrpc::holds_write_end(::getpid(), pipe.read_end.get()));
  const Child both(&pipe, false, false);
  CHECK(spinrpc::holds_write_end(both.pid, pipe.read_end.get()));
  // A wrapper that started us without exec holds the read end it handed down.
  const Child reader(&pipe, false, true);
  CHECK(settles_to(false, reader, pipe.read_end.get()));
  const Child writer(&pipe, true, false);
  CHECK(spinrpc::holds_write_end(writer.pid, pipe.read_end.get()));
  const Child none(&pipe, true, true);
  CHECK(settles_to(false, none, pipe.read_end.get()));
  // Not a pipe: a socket's other end is another inode (socket_peer_pid says who).
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  const UniqueFd a(fds[0]), b(fds[1]);
  CHECK_FALSE(spinrpc::holds_write_end(::getpid(), a.get()));
}

TEST_CASE("parent_of names a process's parent, -1 for no process") {
  CHECK(spinrpc::parent_of(::getpid()) == ::getppid());
  const Child child(nullptr, false, false);
  CHECK(spinrpc::parent_of(child.pid) == ::getpid());
  CHECK(spinrpc::parent_of(1 << 30) == -1);
}

}  // namespace
