#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "wait/placement_controller.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::PlacementController;
using Mode = PlacementController::Mode;
using Phase = PlacementController::Phase;
using Setting = PlacementController::Setting;

// Synthetic cycle times (write → the peer's next message), from the figures
// in docs/PLACEMENT.md: a blocking peer woken on a halted CPU, the same peer
// woken where we run, a spinning peer.
constexpr auto kApart = 60us;
constexpr auto kTogether = 2500ns;
constexpr auto kSpinningPeer = 1900ns;

// Feeds cycles until the controller leaves `phase` (or a bound is hit);
// `free`/`occupy` is the cycle time it measures in each mode.
unsigned run_until_not(PlacementController& ctl, Phase phase, std::chrono::nanoseconds free,
                       std::chrono::nanoseconds occupy, unsigned bound = 1000000) {
  unsigned n = 0;
  while (ctl.phase() == phase && n < bound) {
    ctl.after_cycle(ctl.mode() == Mode::occupy ? occupy : free);
    ++n;
  }
  return n;
}

void finish_first_probe(PlacementController& ctl, std::chrono::nanoseconds free,
                        std::chrono::nanoseconds occupy) {
  run_until_not(ctl, Phase::probe_free, free, occupy);
  run_until_not(ctl, Phase::probe_occupy, free, occupy);
}

TEST_CASE("PlacementController off never occupies and never probes") {
  PlacementController ctl(Setting::off);
  for (int i = 0; i < 10000; ++i) CHECK(ctl.after_cycle(kApart) == Mode::free);
  CHECK(ctl.after_contention() == Mode::free);
  CHECK(ctl.probes() == 0);
  CHECK(ctl.changes() == 0);
  CHECK(std::string(ctl.reason()) == "off");
}

TEST_CASE("PlacementController probes free first, then occupying, settling cycles not counted") {
  PlacementController ctl(Setting::automatic);
  CHECK(ctl.mode() == Mode::free);
  CHECK(std::string(ctl.reason()) == "probing");
  const unsigned free_cycles = run_until_not(ctl, Phase::probe_free, kApart, kTogether);
  CHECK(free_cycles == PlacementController::kProbeCycles);  // free from the start: no settling
  CHECK(ctl.mode() == Mode::occupy);
  CHECK(ctl.free_estimate() == kApart);
  const unsigned occupy_cycles = run_until_not(ctl, Phase::probe_occupy, kApart, kTogether);
  CHECK(occupy_cycles == PlacementController::kProbeCycles + PlacementController::kSettleCycles);
}

TEST_CASE("PlacementController keeps occupying when a blocking peer gets the co-located cycle") {
  PlacementController ctl(Setting::automatic);
  finish_first_probe(ctl, kApart, kTogether);
  CHECK(ctl.mode() == Mode::occupy);
  CHECK(ctl.phase() == Phase::stay);
  CHECK(ctl.occupy_estimate() == kTogether);
  CHECK(std::string(ctl.reason()) == "occupying pays");
  CHECK(ctl.changes() == 1);  // from the free start to occupy
}

TEST_CASE("PlacementController stays free against a spinning peer, without probing occupying") {
  // Occupying only adds a thread on the spinning peer's CPU: no gain, and
  // the free cycle (under kNothingToWin) says so before any probe.
  PlacementController ctl(Setting::automatic);
  CHECK(run_until_not(ctl, Phase::probe_free, kSpinningPeer, kApart) == PlacementController::kProbeCycles);
  CHECK(ctl.phase() == Phase::stay);
  CHECK(ctl.mode() == Mode::free);
  CHECK(std::string(ctl.reason()) == "nothing to win: the peer answers fast");
  CHECK(ctl.changes() == 0);
  CHECK(ctl.occupy_estimate() == 0ns);
  // Each stay ends in a re-check, not a probe.
  for (unsigned i = 0; i < 4 * PlacementController::kMaxStayCycles; ++i) {
    REQUIRE(ctl.after_cycle(kSpinningPeer) == Mode::free);
    REQUIRE(ctl.phase() == Phase::stay);
  }
  CHECK(ctl.probes() == 1);  // the first free probe only
}

TEST_CASE("PlacementController probes occupying once a fast peer starts blocking") {
  PlacementController ctl(Setting::automatic);
  run_until_not(ctl, Phase::probe_free, kSpinningPeer, kTogether);
  REQUIRE(ctl.phase() == Phase::stay);
  // The peer stops spinning and is woken on the other, halted CPU: within
  // two windows the stay ends and occupying is probed, then kept.
  CHECK(run_until_not(ctl, Phase::stay, kApart, kTogether) <= 2 * PlacementController::kProbeCycles);
  CHECK(ctl.phase() == Phase::probe_occupy);
  CHECK(ctl.free_estimate() == kApart);
  run_until_not(ctl, Phase::probe_occupy, kApart, kTogether);
  CHECK(ctl.mode() == Mode::occupy);
  CHECK(std::string(ctl.reason()) == "occupying pays");
}

TEST_CASE("PlacementController wants a clear gain: within the margin it stays free") {
  PlacementController ctl(Setting::automatic);
  finish_first_probe(ctl, 10us, 8500ns);  // 85 %: not worth a CPU
  CHECK(ctl.mode() == Mode::free);
}

TEST_CASE("PlacementController takes medians: a few slow cycles do not decide") {
  PlacementController ctl(Setting::automatic);
  unsigned i = 0;
  while (ctl.phase() != Phase::stay) {
    const bool occupy = ctl.mode() == Mode::occupy;
    // One cycle in eight is a 900 µs outlier in occupy mode only.
    ctl.after_cycle(occupy ? (++i % 8 == 0 ? 900us : std::chrono::nanoseconds(kTogether)) : std::chrono::nanoseconds(kApart));
  }
  CHECK(ctl.mode() == Mode::occupy);
  CHECK(ctl.occupy_estimate() == kTogether);
}

TEST_CASE("PlacementController ignores cycles of a millisecond or more (the peer was busy or idle)") {
  PlacementController ctl(Setting::automatic);
  for (int i = 0; i < 10000; ++i) ctl.after_cycle(5ms);
  CHECK(ctl.phase() == Phase::probe_free);
  CHECK(ctl.mode() == Mode::free);
  CHECK(ctl.free_estimate() == 0ns);
}

TEST_CASE("PlacementController re-probes after a stay, doubling the stay when the choice holds") {
  PlacementController ctl(Setting::automatic);
  finish_first_probe(ctl, kApart, kTogether);
  REQUIRE(ctl.mode() == Mode::occupy);
  const unsigned first_stay = run_until_not(ctl, Phase::stay, kApart, kTogether);
  CHECK(first_stay == PlacementController::kStayCycles);
  CHECK(ctl.phase() == Phase::probe_free);  // the other mode
  CHECK(ctl.probes() == 2);
  run_until_not(ctl, Phase::probe_free, kApart, kTogether);
  CHECK(ctl.mode() == Mode::occupy);
  CHECK(ctl.changes() == 1);
  const unsigned second_stay = run_until_not(ctl, Phase::stay, kApart, kTogether);
  CHECK(second_stay == 2 * PlacementController::kStayCycles);
}

TEST_CASE("PlacementController changes its mind when the other mode turns out faster") {
  PlacementController ctl(Setting::automatic);
  finish_first_probe(ctl, kApart, kTogether);
  REQUIRE(ctl.mode() == Mode::occupy);
  // The peer starts spinning: free is now the fast one, occupying no better.
  run_until_not(ctl, Phase::stay, kSpinningPeer, kTogether);
  run_until_not(ctl, Phase::probe_free, kSpinningPeer, kTogether);
  CHECK(ctl.mode() == Mode::free);
  CHECK(ctl.changes() == 2);
  CHECK(ctl.free_estimate() == kSpinningPeer);
  CHECK(ctl.occupy_estimate() == kTogether);
}

TEST_CASE("PlacementController lets go at once on contention and backs off longer each time") {
  PlacementController ctl(Setting::automatic);
  finish_first_probe(ctl, kApart, kTogether);
  REQUIRE(ctl.mode() == Mode::occupy);
  CHECK(ctl.after_contention() == Mode::free);
  CHECK(ctl.phase() == Phase::backoff);
  CHECK(std::string(ctl.reason()) == "backoff after contention");
  CHECK(ctl.contentions() == 1);
  CHECK(ctl.changes() == 2);
  const unsigned first = run_until_not(ctl, Phase::backoff, kApart, kTogether);
  CHECK(first == PlacementController::kFirstBackoffCycles);
  CHECK(ctl.phase() == Phase::probe_occupy);
  CHECK(ctl.after_contention() == Mode::free);  // contended again while probing
  const unsigned second = run_until_not(ctl, Phase::backoff, kApart, kTogether);
  CHECK(second == 2 * PlacementController::kFirstBackoffCycles);
  // A contention while free is not the occupier's: nothing changes.
  const auto contentions = ctl.contentions();
  run_until_not(ctl, Phase::probe_occupy, kApart, kTogether);
  REQUIRE(ctl.mode() == Mode::occupy);
  run_until_not(ctl, Phase::stay, kApart, kTogether, PlacementController::kStayCycles / 2);
  CHECK(ctl.contentions() == contentions);
}

TEST_CASE("PlacementController forgives contention after a calm stretch occupying, forced or not") {
  for (const Setting setting : {Setting::automatic, Setting::occupy}) {
    PlacementController ctl(setting);
    if (setting == Setting::automatic) finish_first_probe(ctl, kApart, kTogether);
    REQUIRE(ctl.mode() == Mode::occupy);
    for (int i = 0; i < 3; ++i) {
      ctl.after_contention();
      run_until_not(ctl, Phase::backoff, kApart, kTogether);
      run_until_not(ctl, Phase::probe_occupy, kApart, kTogether);
    }
    REQUIRE(ctl.mode() == Mode::occupy);
    // Three reports in a row: the next backoff is 8 times the first...
    ctl.after_contention();
    CHECK(run_until_not(ctl, Phase::backoff, kApart, kTogether) == 8 * PlacementController::kFirstBackoffCycles);
    run_until_not(ctl, Phase::probe_occupy, kApart, kTogether);
    REQUIRE(ctl.mode() == Mode::occupy);
    // ...but after kStayCycles occupied without one (the probe's cycles
    // count), it is the first again.
    const unsigned probed = setting == Setting::automatic
                                ? PlacementController::kProbeCycles + PlacementController::kSettleCycles
                                : 0;
    for (unsigned i = probed; i < PlacementController::kStayCycles; ++i) ctl.after_cycle(kTogether);
    REQUIRE(ctl.mode() == Mode::occupy);
    ctl.after_contention();
    CHECK(run_until_not(ctl, Phase::backoff, kApart, kTogether) == PlacementController::kFirstBackoffCycles);
  }
}

TEST_CASE("PlacementController ends a stay early when its window contradicts the choice") {
  PlacementController ctl(Setting::automatic);
  // The first probe finds the peer co-located either way: free is kept.
  finish_first_probe(ctl, 9us, 9us);
  REQUIRE(ctl.mode() == Mode::free);
  REQUIRE(ctl.phase() == Phase::stay);
  // Then the peer flees to an idle CPU: one window later, occupying is probed
  // again, long before the stay (kStayCycles) would have ended.
  const unsigned n = run_until_not(ctl, Phase::stay, kApart, kTogether);
  CHECK(n <= 2 * PlacementController::kProbeCycles);
  CHECK(ctl.phase() == Phase::probe_occupy);
  CHECK(ctl.free_estimate() == kApart);
  run_until_not(ctl, Phase::probe_occupy, kApart, kTogether);
  CHECK(ctl.mode() == Mode::occupy);
  // The same the other way: occupying stops paying (the peer spins now).
  const unsigned m = run_until_not(ctl, Phase::stay, kSpinningPeer, kApart);
  CHECK(m <= 2 * PlacementController::kProbeCycles);
  CHECK(ctl.phase() == Phase::probe_free);
}

TEST_CASE("PlacementController moves to the peer after two shared cycles in a row, less often when moves do not hold") {
  PlacementController ctl(Setting::automatic);
  // One shared cycle (a timer, a kernel thread) is not enough; two are.
  CHECK_FALSE(ctl.after_occupied_cycle(true));
  CHECK_FALSE(ctl.after_occupied_cycle(false));
  CHECK_FALSE(ctl.after_occupied_cycle(true));
  CHECK(ctl.after_occupied_cycle(true));
  CHECK(ctl.moves() == 1);
  // The move held: calm from then on, no more moves.
  for (unsigned i = 0; i < 2 * PlacementController::kStayCycles; ++i) CHECK_FALSE(ctl.after_occupied_cycle(false));
  CHECK(ctl.after_occupied_cycle(true) == false);
  CHECK(ctl.after_occupied_cycle(true));  // a held move leaves the gap at its first value
  CHECK(ctl.moves() == 2);
  // Someone else keeps running there (every cycle shared): each move that
  // does not hold doubles the gap before the next.
  unsigned gap = PlacementController::kFirstMoveGap;
  for (int k = 0; k < 5; ++k) {
    unsigned n = 0;
    while (!ctl.after_occupied_cycle(true)) ++n;
    CHECK(n + 1 >= gap);
    gap *= 2;
  }
  CHECK(ctl.moves() == 7);
  // Bounded: never more often than kFirstMoveGap, never rarer than kMaxStayCycles.
  for (int k = 0; k < 20; ++k) {
    unsigned n = 0;
    while (!ctl.after_occupied_cycle(true)) ++n;
    CHECK(n < PlacementController::kMaxStayCycles + 2);
  }
}

// Feeds cycles until the controller leaves `phase` (or a bound is hit),
// with a cycle time for each of the three modes.
unsigned run3_until_not(PlacementController& ctl, Phase phase, std::chrono::nanoseconds free,
                        std::chrono::nanoseconds occupy, std::chrono::nanoseconds block, unsigned bound = 1000000) {
  unsigned n = 0;
  while (ctl.phase() == phase && n < bound) {
    ctl.after_cycle(ctl.mode() == Mode::occupy ? occupy : ctl.mode() == Mode::block ? block : free);
    ++n;
  }
  return n;
}

// A client against tsgo (docs/PLACEMENT.md#block-against-a-server-that-does-not-place):
// spinning 11 µs, occupying no better (Go's threads want the other CPU),
// blocking 10 µs (tsgo's thread woken on the CPU the client leaves).
constexpr auto kTsgoSpun = 11us;
constexpr auto kTsgoBlocked = 10us;

TEST_CASE("PlacementController may block: probes it after occupying and keeps it when no slower") {
  PlacementController ctl(Setting::automatic, true);
  run3_until_not(ctl, Phase::probe_free, kTsgoSpun, kTsgoSpun, kTsgoBlocked);
  CHECK(ctl.phase() == Phase::probe_occupy);
  run3_until_not(ctl, Phase::probe_occupy, kTsgoSpun, kTsgoSpun, kTsgoBlocked);
  CHECK(ctl.phase() == Phase::probe_block);
  CHECK(ctl.mode() == Mode::block);
  run3_until_not(ctl, Phase::probe_block, kTsgoSpun, kTsgoSpun, kTsgoBlocked);
  CHECK(ctl.phase() == Phase::stay);
  CHECK(ctl.mode() == Mode::block);
  CHECK(ctl.block_estimate() == kTsgoBlocked);
  CHECK(std::string(ctl.reason()) == "blocking pays");
  // Occupying that pays still beats blocking that does not beat it.
  PlacementController placed(Setting::automatic, true);
  run3_until_not(placed, Phase::probe_free, kApart, kTogether, kApart);
  run3_until_not(placed, Phase::probe_occupy, kApart, kTogether, kApart);
  run3_until_not(placed, Phase::probe_block, kApart, kTogether, kApart);
  CHECK(placed.mode() == Mode::occupy);
}

TEST_CASE("PlacementController leaves blocking once the peer is woken apart, and re-probes after a stay") {
  PlacementController ctl(Setting::automatic, true);
  for (Phase p : {Phase::probe_free, Phase::probe_occupy, Phase::probe_block}) {
    run3_until_not(ctl, p, kTsgoSpun, kTsgoSpun, kTsgoBlocked);
  }
  REQUIRE(ctl.mode() == Mode::block);
  // A stay that holds ends in probes of the two others, then blocks again.
  CHECK(run3_until_not(ctl, Phase::stay, kTsgoSpun, kTsgoSpun, kTsgoBlocked) == PlacementController::kStayCycles);
  CHECK(ctl.phase() == Phase::probe_free);
  run3_until_not(ctl, Phase::probe_free, kTsgoSpun, kTsgoSpun, kTsgoBlocked);
  CHECK(ctl.phase() == Phase::probe_occupy);
  run3_until_not(ctl, Phase::probe_occupy, kTsgoSpun, kTsgoSpun, kTsgoBlocked);
  CHECK(ctl.mode() == Mode::block);
  // The blocked peer's wake-ups start going to the other, halted CPU: the
  // stay ends within two windows and spinning wins the next round.
  CHECK(run3_until_not(ctl, Phase::stay, kTsgoSpun, kTsgoSpun, kApart) <= 2 * PlacementController::kProbeCycles);
  CHECK(ctl.phase() == Phase::probe_free);
  run3_until_not(ctl, Phase::probe_free, kTsgoSpun, kTsgoSpun, kApart);
  run3_until_not(ctl, Phase::probe_occupy, kTsgoSpun, kTsgoSpun, kApart);
  CHECK(ctl.mode() == Mode::free);
  CHECK(ctl.block_estimate() == kApart);
}

TEST_CASE("PlacementController may block, but not against a peer that answers fast") {
  PlacementController ctl(Setting::automatic, true);
  run3_until_not(ctl, Phase::probe_free, kSpinningPeer, kTogether, kApart);
  CHECK(ctl.mode() == Mode::free);
  CHECK(ctl.phase() == Phase::stay);
  CHECK(ctl.block_estimate() == 0ns);
}

TEST_CASE("PlacementController backoff is bounded") {
  PlacementController ctl(Setting::occupy);
  for (int i = 0; i < 20; ++i) {
    REQUIRE(ctl.mode() == Mode::occupy);
    ctl.after_contention();
    run_until_not(ctl, Phase::backoff, kApart, kTogether);
  }
  ctl.after_contention();
  CHECK(run_until_not(ctl, Phase::backoff, kApart, kTogether) == PlacementController::kMaxStayCycles);
}

TEST_CASE("PlacementController occupy setting occupies without probing, obeying the backoff") {
  PlacementController ctl(Setting::occupy);
  CHECK(ctl.mode() == Mode::occupy);
  CHECK(std::string(ctl.reason()) == "occupy forced by the setting");
  for (int i = 0; i < 5000; ++i) CHECK(ctl.after_cycle(kApart) == Mode::occupy);
  CHECK(ctl.probes() == 0);
  CHECK(ctl.after_contention() == Mode::free);
  run_until_not(ctl, Phase::backoff, kApart, kTogether);
  CHECK(ctl.mode() == Mode::occupy);
}

}  // namespace
