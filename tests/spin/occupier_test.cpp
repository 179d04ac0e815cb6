#include <doctest/doctest.h>

#include <sched.h>   // ::sched_getcpu
#include <unistd.h>  // ::getpid

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "channel/occupier.h"
#include "tests/support/cpu_holding_signals.h"
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

TEST_CASE("Occupier takes a slow yield without a context switch for neither a turn nor contention") {
  // While it occupies for 30 ms, a timer signals its thread every 250 µs
  // and the handler keeps that CPU 40 µs: slow yields in which no other
  // task ran. Taken for turns, three in the cycle would make it let go
  // (kTurnsPerCycle). A real task on its CPU meanwhile (ctest -j2) would be
  // a turn, so a few tries are allowed; without the switch check every try
  // lets go.
  if (std::thread::hardware_concurrency() < 2) return;  // it cannot occupy
  Occupier occupier(30ms);
  REQUIRE(occupier.start());
  pid_t tid = 0;
  REQUIRE(spinrpc::test::eventually([&] { return (tid = occupier_tid()) > 0; }));
  spinrpc::test::CpuHoldingSignals signals(tid);
  bool clean = false;
  for (int attempt = 0; attempt < 5 && !clean; ++attempt) {
    const std::uint64_t contentions = occupier.contentions();
    const std::uint64_t shared = occupier.shared();
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
    clean = occupier.contentions() == contentions && occupier.shared() == shared;
  }
  CHECK(clean);
}
