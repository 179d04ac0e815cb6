#include <doctest/doctest.h>

#include <fcntl.h>   // O_NONBLOCK
#include <sched.h>   // ::sched_getcpu, ::sched_setscheduler
#include <unistd.h>  // ::getpid, ::pipe2, ::read, ::close

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "wait/occupier.h"
#include "tests/support/cpu_holding_signals.h"
#include "tests/support/sanitizers.h"
#include "tests/support/proc.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::Occupier;

// The tid of this process's occupier thread (named Occupier::kThreadName);
// 0 if there is none.
pid_t occupier_tid() {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name == Occupier::kThreadName) return static_cast<pid_t>(std::stoi(task.path().filename().string()));
  }
  return 0;
}

}  // namespace

// Skipped under TSan, which defers a signal to its next safe point.
TEST_CASE("Occupier takes a slow yield without a context switch for neither a turn nor contention" * doctest::skip(spinrpc::test::kUnderThreadSanitizer)) {
  // While it occupies for 30 ms, a timer signals its thread every 250 µs
  // and the handler keeps that CPU 40 µs: slow yields in which no other
  // task ran, counted in stolen(). Taken for turns, three in a cycle would
  // make it let go (kTurnsPerCycle) within a millisecond, and stolen()
  // would stay 0. Real tasks on its CPU meanwhile are turns and contention
  // as before, so where it may (root) the test makes the thread SCHED_FIFO,
  // which no ordinary task preempts (a busy loop on every CPU made it let go
  // at its first yield otherwise), and allows a few pokes.
  if (std::thread::hardware_concurrency() < 2) return;  // it cannot occupy
  Occupier occupier(30ms);
  REQUIRE(occupier.start());
  pid_t tid = 0;
  REQUIRE(spinrpc::test::eventually([&] { return (tid = occupier_tid()) > 0; }));
  sched_param fifo{};
  fifo.sched_priority = 1;
  const bool realtime = ::sched_setscheduler(tid, SCHED_FIFO, &fifo) == 0;
  spinrpc::test::CpuHoldingSignals signals(tid);
  for (int attempt = 0; attempt < 5 && occupier.stolen() == 0; ++attempt) {
    const std::uint64_t contentions = occupier.contentions();
    const std::uint64_t occupied = occupier.occupied_us();
    signals.start(250us);
    REQUIRE(occupier.poke(::sched_getcpu()));
    // It occupies until 30 ms after the poke, or lets go, then sleeps: wait
    // for that (it ran, and the occupied time stops growing), not for a
    // duration.
    REQUIRE(spinrpc::test::eventually([&] {
      const std::uint64_t before = occupier.occupied_us();
      std::this_thread::sleep_for(5ms);
      const bool ran = before > occupied || occupier.contentions() != contentions;
      return ran && occupier.occupied_us() == before;
    }));
    signals.stop();
  }
  if (realtime) {
    const sched_param normal{};
    ::sched_setscheduler(tid, SCHED_OTHER, &normal);
  }
  CHECK(occupier.stolen() > 0);
}

TEST_CASE("The occupier thread leaves the process's descriptor table and keeps none of its files" * doctest::skip(spinrpc::test::kUnderSanitizer)) {
  // A table shared with a second thread costs the reader's every read(2)
  // and write(2) a reference on the file (descriptor/descriptor_table.h). The
  // occupier leaves it at birth, and holds no copy of what was open then,
  // stderr included: a pipe's write end, open here and on fd 2 when it
  // started, closed here and fd 2 given back its file, gives the pipe's
  // reader EOF at once, as in a process without the thread (a kept copy of
  // fd 2 made a reader of a program's stderr wait until the channel
  // closed; found by a break-it pass). Under a sanitizer it keeps the table.
  int fds[2];
  REQUIRE(::pipe2(fds, O_NONBLOCK) == 0);
  const int saved_stderr = ::dup(2);
  REQUIRE(saved_stderr >= 0);
  REQUIRE(::dup2(fds[1], 2) == 2);
  Occupier occupier(1ms);
  const bool started = occupier.start();
  pid_t tid = 0;
  if (started) {
    REQUIRE(spinrpc::test::eventually([&] { return (tid = occupier_tid()) > 0; }));
    if (spinrpc::test::share_descriptor_table(::getpid(), tid)) {
      CHECK(spinrpc::test::eventually([&] { return spinrpc::test::share_descriptor_table(::getpid(), tid) == false; }));
    } else {
      MESSAGE("kcmp(2) is not allowed here: the table itself not checked");
    }
    CHECK(occupier.poke(::sched_getcpu()));
  }
  REQUIRE(::dup2(saved_stderr, 2) == 2);
  ::close(saved_stderr);
  if (!started) {  // fewer than 2 CPUs allowed: no thread
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  ::close(fds[1]);
  char byte;
  CHECK(::read(fds[0], &byte, 1) == 0);
  ::close(fds[0]);
}
