// bench/peers/shm_floor.cpp's ShmFloor, the benchmark's shared-memory floor
// (docs/BENCHMARKING.md#floors), with a real forked child: every round trip
// returns exactly what was sent, and a dead or stopped child makes
// round_trip throw instead of spinning forever. Here because this suite is
// the one that links bench/ code; no time is asserted (the 1 s bound is
// ShmFloor's own, and only keeps a broken child from hanging the test).
#include <doctest/doctest.h>

#include <signal.h>    // ::kill, SIGKILL, SIGSTOP, SIGCONT
#include <sys/wait.h>  // ::waitid, P_PID, WEXITED, WSTOPPED, WNOWAIT

#include <algorithm>  // std::fill
#include <cerrno>     // errno, ESRCH
#include <cstddef>    // std::byte, std::size_t
#include <cstring>    // std::memcmp
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
