#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "channel/spin_policy.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::AdaptiveSpinController;

constexpr auto kLong = 1500us;
constexpr auto kShort = 200us;

TEST_CASE("AdaptiveSpinController keeps spinning after two long waits and suspends on the third") {
  AdaptiveSpinController ctl(true);
  CHECK(ctl.after_wait(kLong));
  CHECK(ctl.after_wait(kLong));
  CHECK_FALSE(ctl.after_wait(kLong));
  CHECK(ctl.suspensions() == 1);
  CHECK_FALSE(ctl.spinning());
}

TEST_CASE("AdaptiveSpinController restarts the long count when a short wait comes in between") {
  AdaptiveSpinController ctl(true);
  ctl.after_wait(kLong);
  ctl.after_wait(kLong);
  CHECK(ctl.after_wait(kShort));
  CHECK(ctl.after_wait(kLong));
  CHECK(ctl.after_wait(kLong));
  CHECK_FALSE(ctl.after_wait(kLong));
  CHECK(ctl.suspensions() == 1);
}

TEST_CASE("AdaptiveSpinController resumes after three short waits while suspended, not two") {
  AdaptiveSpinController ctl(true);
  for (int i = 0; i < 3; ++i) ctl.after_wait(kLong);
  REQUIRE_FALSE(ctl.spinning());
  CHECK_FALSE(ctl.after_wait(kShort));
  CHECK_FALSE(ctl.after_wait(kShort));
  CHECK(ctl.after_wait(kShort));
  CHECK(ctl.resumptions() == 1);
}

TEST_CASE("AdaptiveSpinController restarts the short count when a long wait comes in between while suspended") {
  AdaptiveSpinController ctl(true);
  for (int i = 0; i < 3; ++i) ctl.after_wait(kLong);
  ctl.after_wait(kShort);
  ctl.after_wait(kShort);
  CHECK_FALSE(ctl.after_wait(kLong));
  CHECK_FALSE(ctl.after_wait(kShort));
  CHECK_FALSE(ctl.after_wait(kShort));
  CHECK(ctl.after_wait(kShort));
  CHECK(ctl.resumptions() == 1);
}

TEST_CASE("AdaptiveSpinController counts a wait of exactly 1 ms as neither long nor short") {
  AdaptiveSpinController ctl(true);
  ctl.after_wait(kLong);
  ctl.after_wait(kLong);
  CHECK(ctl.after_wait(1000us));  // does not reset the long count...
  CHECK_FALSE(ctl.after_wait(kLong));  // ...so this is the third long wait
}

TEST_CASE("AdaptiveSpinController never suspends when the adaptive rule is off") {
  AdaptiveSpinController ctl(false);
  for (int i = 0; i < 10; ++i) CHECK(ctl.after_wait(50ms));
  CHECK(ctl.suspensions() == 0);
}

TEST_CASE("AdaptiveSpinController suspends and resumes repeatedly, counting each switch") {
  AdaptiveSpinController ctl(true);
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 3; ++i) ctl.after_wait(kLong);
    for (int i = 0; i < 3; ++i) ctl.after_wait(kShort);
  }
  CHECK(ctl.suspensions() == 4);
  CHECK(ctl.resumptions() == 4);
  CHECK(ctl.spinning());
}

}  // namespace

namespace {

using namespace std::chrono_literals;
using spinrpc::AdaptiveSpinController;

// Feeds short waits until the controller spins again; returns how many.
unsigned short_waits_to_resume(AdaptiveSpinController& ctl) {
  unsigned count = 0;
  while (!ctl.spinning() && count < 1000) {
    ctl.after_wait(200us);
    ++count;
  }
  return count;
}

TEST_CASE("AdaptiveSpinController suspends at once when a spin gave the CPU away") {
  AdaptiveSpinController ctl(true);
  ctl.after_contention();
  CHECK_FALSE(ctl.spinning());
  CHECK(ctl.suspensions() == 1);
  CHECK(short_waits_to_resume(ctl) == 3);
}

TEST_CASE("AdaptiveSpinController doubles the short waits needed to resume after each repeated contention, up to its cap") {
  AdaptiveSpinController ctl(true);
  std::vector<unsigned> needed;
  for (int i = 0; i < 9; ++i) {
    ctl.after_contention();
    needed.push_back(short_waits_to_resume(ctl));
  }
  CHECK(needed == std::vector<unsigned>{3, 6, 12, 24, 48, 96, 192, 192, 192});
}

TEST_CASE("AdaptiveSpinController forgets earlier contention after 1000 calm spinning waits") {
  AdaptiveSpinController ctl(true);
  ctl.after_contention();
  short_waits_to_resume(ctl);
  ctl.after_contention();
  CHECK(short_waits_to_resume(ctl) == 6);
  for (unsigned i = 0; i < AdaptiveSpinController::kWaitsToForgive; ++i) ctl.after_wait(50us);
  ctl.after_contention();
  CHECK(short_waits_to_resume(ctl) == 3);
}

TEST_CASE("AdaptiveSpinController ignores contention when the adaptive rule is off") {
  AdaptiveSpinController ctl(false);
  ctl.after_contention();
  CHECK(ctl.spinning());
  CHECK(ctl.suspensions() == 0);
}

}  // namespace
