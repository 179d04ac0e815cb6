#include <doctest/doctest.h>

#include <chrono>

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
