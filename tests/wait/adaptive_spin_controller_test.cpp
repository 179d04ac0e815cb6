#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "wait/spin_policy.h"

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

// Feeds short waits until the controller spins again, answering its
// spare-CPU samples with `spare_cpu` as SpinReader does (one per wait); returns
// how many waits it took (1000: it did not resume).
unsigned short_waits_to_resume(AdaptiveSpinController& ctl, bool spare_cpu = true) {
  unsigned count = 0;
  while (!ctl.spinning() && count < 1000) {
    ctl.after_wait(200us);
    if (ctl.wants_spare_cpu_sample()) ctl.after_spare_cpu_sample(spare_cpu);
    ++count;
  }
  return count;
}

TEST_CASE("AdaptiveSpinController suspends at once when a spin gave the CPU away") {
  AdaptiveSpinController ctl(true);
  ctl.after_contention();
  CHECK_FALSE(ctl.spinning());
  CHECK(ctl.suspensions() == 1);
  // 3 short waits, then a second spare-CPU sample on the next wait.
  CHECK(short_waits_to_resume(ctl) == 4);
}

TEST_CASE("AdaptiveSpinController doubles the short waits needed to resume after each repeated contention, up to its cap") {
  AdaptiveSpinController ctl(true);
  std::vector<unsigned> needed;
  for (int i = 0; i < 9; ++i) {
    ctl.after_contention();
    needed.push_back(short_waits_to_resume(ctl));
  }
  CHECK(needed == std::vector<unsigned>{4, 7, 13, 25, 49, 97, 193, 193, 193});
}

TEST_CASE("AdaptiveSpinController forgets earlier contention after 1000 calm spinning waits") {
  AdaptiveSpinController ctl(true);
  ctl.after_contention();
  short_waits_to_resume(ctl);
  ctl.after_contention();
  CHECK(short_waits_to_resume(ctl) == 7);
  for (unsigned i = 0; i < AdaptiveSpinController::kWaitsToForgive; ++i) ctl.after_wait(50us);
  ctl.after_contention();
  CHECK(short_waits_to_resume(ctl) == 4);
}

TEST_CASE("AdaptiveSpinController stays suspended after contention while the CPUs are oversubscribed") {
  AdaptiveSpinController ctl(true);
  ctl.after_contention();
  CHECK(short_waits_to_resume(ctl, false) == 1000);
  CHECK_FALSE(ctl.spinning());
  CHECK(ctl.resumptions() == 0);
  // Each refusal counts as a contention: 3 waits + 3 samples, 6 + 3, 12 + 3,
  // ... up to the cap of 192 + 3 (1000 waits: 6 + 9 + 15 + 27 + 51 + 99 +
  // 195 * 3 = 792, then 208 more into the next round).
  CHECK(ctl.resumptions_refused() == 10);
  CHECK(ctl.suspensions() == 1);
}

// Suspends for contention and feeds the 3 short waits after which the
// controller asks for spare-CPU samples.
void start_sampling(AdaptiveSpinController& ctl) {
  ctl.after_contention();
  for (int i = 0; i < 3; ++i) ctl.after_wait(kShort);
  REQUIRE(ctl.wants_spare_cpu_sample());
}

TEST_CASE("AdaptiveSpinController resumes after contention once two samples find a spare CPU") {
  AdaptiveSpinController ctl(true);
  start_sampling(ctl);
  ctl.after_spare_cpu_sample(true);
  ctl.after_wait(kShort);
  ctl.after_spare_cpu_sample(false);
  CHECK_FALSE(ctl.spinning());
  ctl.after_wait(kShort);
  ctl.after_spare_cpu_sample(true);
  CHECK(ctl.spinning());
  CHECK_FALSE(ctl.wants_spare_cpu_sample());
  CHECK(ctl.resumptions() == 1);
  CHECK(ctl.resumptions_refused() == 0);
}

TEST_CASE("AdaptiveSpinController resumes after sparse traffic without asking for spare-CPU samples") {
  AdaptiveSpinController ctl(true);
  for (int i = 0; i < 3; ++i) ctl.after_wait(kLong);
  REQUIRE_FALSE(ctl.spinning());
  for (int i = 0; i < 3; ++i) {
    ctl.after_wait(kShort);
    CHECK_FALSE(ctl.wants_spare_cpu_sample());
  }
  CHECK(ctl.spinning());
}

TEST_CASE("AdaptiveSpinController drops its spare-CPU samples at a long wait and counts again") {
  AdaptiveSpinController ctl(true);
  start_sampling(ctl);
  ctl.after_spare_cpu_sample(true);
  ctl.after_wait(kLong);
  CHECK_FALSE(ctl.wants_spare_cpu_sample());
  ctl.after_spare_cpu_sample(true);  // not asked for: ignored
  CHECK_FALSE(ctl.spinning());
  CHECK(short_waits_to_resume(ctl) == 4);
}

TEST_CASE("AdaptiveSpinController ignores contention when the adaptive rule is off") {
  AdaptiveSpinController ctl(false);
  ctl.after_contention();
  CHECK(ctl.spinning());
  CHECK(ctl.suspensions() == 0);
}

}  // namespace
