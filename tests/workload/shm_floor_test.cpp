// bench/peers/shm_floor.cpp's ShmFloor, the benchmark's shared-memory floor
// (docs/BENCHMARKING.md#floors), with a real forked child: every round trip
// returns exactly what was sent, a dead or stopped child makes round_trip
// throw instead of spinning forever, and the child never outlives the
// process that made the floor. Here because this suite is
// the one that links bench/ code; no time is asserted (the 1 s bound is
// ShmFloor's own, and only keeps a broken child from hanging the test).
#include <doctest/doctest.h>

#include <signal.h>     // ::kill, SIGKILL, SIGSTOP, SIGCONT
#include <sys/prctl.h>  // ::prctl, PR_SET_CHILD_SUBREAPER
#include <sys/wait.h>   // ::waitid, ::waitpid, P_PID, WEXITED, WSTOPPED, WNOWAIT, WNOHANG
#include <unistd.h>     // ::fork, ::pipe, ::read, ::write, ::close, ::_exit

#include <algorithm>  // std::fill
#include <cerrno>     // errno, ESRCH
#include <cstddef>    // std::byte, std::size_t
#include <cstring>    // std::memcmp
#include <ctime>      // ::nanosleep
#include <stdexcept>  // std::runtime_error, std::invalid_argument
#include <vector>     // std::vector

#include "bench/peers/shm_floor.h"

namespace spinrpc::bench {
namespace {

std::vector<std::byte> pattern(std::size_t bytes, std::size_t seed) {
  std::vector<std::byte> out(bytes);
  for (std::size_t j = 0; j < bytes; ++j) out[j] = static_cast<std::byte>((seed * 131 + j * 7 + (j >> 8)) & 0xff);
  return out;
}

// Blocks until `pid` has reached `state` (WEXITED or WSTOPPED) and leaves it
// waitable (WNOWAIT): the floor reaps it itself.
void wait_until(int pid, int state) {
  siginfo_t info{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(pid), &info, state | WNOWAIT) == 0);
}

TEST_CASE("ShmFloor returns exactly the bytes sent over 1000 round trips of 8 and of 4096 bytes") {
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{4096}}) {
    CAPTURE(bytes);
    ShmFloor floor(bytes);
    REQUIRE(floor.child_pid() > 0);
    std::vector<std::byte> reply(bytes);
    for (std::size_t i = 0; i < 1000; ++i) {
      CAPTURE(i);
      const std::vector<std::byte> message = pattern(bytes, i);
      std::fill(reply.begin(), reply.end(), std::byte{0xee});
      floor.round_trip(message, reply);
      REQUIRE(std::memcmp(reply.data(), message.data(), bytes) == 0);
    }
  }
}

TEST_CASE("ShmFloor's destructor stops and reaps its child") {
  int pid = -1;
  {
    ShmFloor floor(64);
    pid = floor.child_pid();
    const std::vector<std::byte> message = pattern(64, 1);
    std::vector<std::byte> reply(64);
    floor.round_trip(message, reply);
  }
  // Reaped: the pid no longer names a process (not even a zombie).
  CHECK(::kill(pid, 0) == -1);
  CHECK(errno == ESRCH);
}

TEST_CASE("ShmFloor's round_trip throws when its child was killed with SIGKILL, and reaps it") {
  ShmFloor floor(4096);
  const std::vector<std::byte> message = pattern(4096, 2);
  std::vector<std::byte> reply(4096);
  floor.round_trip(message, reply);
  const int pid = floor.child_pid();
  REQUIRE(::kill(pid, SIGKILL) == 0);
  wait_until(pid, WEXITED);
  CHECK_THROWS_WITH_AS(floor.round_trip(message, reply), "the shared-memory floor's child died (killed by signal 9)",
                       std::runtime_error);
  CHECK(floor.child_pid() == -1);
  CHECK_THROWS_WITH_AS(floor.round_trip(message, reply),
                       "the shared-memory floor's child did not answer an earlier round trip", std::runtime_error);
}

TEST_CASE("ShmFloor's round_trip throws when its child stops answering, and its destructor still ends it") {
  int pid = -1;
  {
    ShmFloor floor(8);
    pid = floor.child_pid();
    const std::vector<std::byte> message = pattern(8, 3);
    std::vector<std::byte> reply(8);
    REQUIRE(::kill(pid, SIGSTOP) == 0);
    wait_until(pid, WSTOPPED);
    CHECK_THROWS_WITH_AS(floor.round_trip(message, reply), "the shared-memory floor's child has not answered in 1 s",
                         std::runtime_error);
    CHECK(floor.child_pid() == pid);
    REQUIRE(::kill(pid, SIGCONT) == 0);
  }
  CHECK(::kill(pid, 0) == -1);
  CHECK(errno == ESRCH);
}

TEST_CASE("ShmFloor's child dies with the process that made the floor, which never stopped it") {
  // This process becomes the subreaper, so the orphaned echo child is
  // reparented to it and can be waited for here.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t owner = ::fork();
  REQUIRE(owner >= 0);
  if (owner == 0) {
    // The floor's owner: makes the floor, has one echo (so the child is
    // past its prctl and spinning), hands over its child's pid, and ends
    // without the destructor (no stop word).
    ::close(fds[0]);
    try {
      auto* floor = new ShmFloor(8);
      const std::vector<std::byte> message = pattern(8, 5);
      std::vector<std::byte> reply(8);
      floor->round_trip(message, reply);
      const int pid = floor->child_pid();
      if (::write(fds[1], &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) ::_exit(2);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  int echo_child = -1;
  const ssize_t got = ::read(fds[0], &echo_child, sizeof echo_child);
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(owner, &status, 0) == owner);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == static_cast<ssize_t>(sizeof echo_child));
  // Bounded (10 s) so that a child that survives fails the test instead of hanging it.
  pid_t done = 0;
  for (int naps = 0; naps < 10000 && done == 0; ++naps) {
    done = ::waitpid(echo_child, &status, WNOHANG);
    if (done == 0) {
      const timespec nap{0, 1'000'000};
      ::nanosleep(&nap, nullptr);
    }
  }
  if (done == 0) {
    ::kill(echo_child, SIGKILL);
    ::waitpid(echo_child, &status, 0);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  REQUIRE(done == echo_child);
  CAPTURE(status);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("ShmFloor's round_trip rejects a message of another size") {
  ShmFloor floor(16);
  const std::vector<std::byte> message = pattern(8, 4);
  std::vector<std::byte> reply(16);
  CHECK_THROWS_WITH_AS(floor.round_trip(message, reply),
                       "the shared-memory floor carries messages of 16 bytes, not 8 (reply room 16)",
                       std::invalid_argument);
}

}  // namespace
}  // namespace spinrpc::bench
