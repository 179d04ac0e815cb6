// What a following server learns about its peer (channel/peer_process.h),
// checked against processes whose answers we know: this one, a child we
// started, a socket pair and a pipe we made.
#include <doctest/doctest.h>
#include <sched.h>       // sched_getcpu, sched_setaffinity, CPU_*
#include <signal.h>      // ::kill, SIGKILL
#include <sys/socket.h>  // ::socketpair
#include <sys/wait.h>    // ::waitpid
#include <unistd.h>      // ::fork, ::pipe, ::getpid, ::pause, ::_exit

#include "channel/peer_process.h"
#include "channel/unique_fd.h"

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

// A child that holds nothing of ours but what it inherited at fork, and
// closes the pipe's ends it is told to; it waits to be killed.
struct Child {
  pid_t pid = -1;
  explicit Child(Pipe* drop) {
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (drop) {
        drop->read_end.reset();
        drop->write_end.reset();
      }
      for (;;) ::pause();
    }
  }
  ~Child() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

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

TEST_CASE("holds_same_file finds a process holding our pipe, and not one that closed it") {
  Pipe pipe;
  CHECK(spinrpc::holds_same_file(::getpid(), pipe.read_end.get()));
  const Child holder(nullptr);
  CHECK(spinrpc::holds_same_file(holder.pid, pipe.read_end.get()));
  const Child dropper(&pipe);
  // The child closes its copies right after fork; ask until it has (a
  // bound, not a timing).
  bool held = true;
  for (int i = 0; i < 100000 && held; ++i) held = spinrpc::holds_same_file(dropper.pid, pipe.read_end.get());
  CHECK_FALSE(held);
  // Not a pipe: a socket's other end is another inode (socket_peer_pid says who).
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  const UniqueFd a(fds[0]), b(fds[1]);
  CHECK_FALSE(spinrpc::holds_same_file(::getpid(), a.get()));
}

}  // namespace
