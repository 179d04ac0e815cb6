// AwayFromCpu: the thread leaves the CPU at once and its affinity mask is
// put back exactly as found (docs/PLACEMENT.md#two-spinners-on-one-cpu).
#include <doctest/doctest.h>
#include <sched.h>  // sched_getaffinity, sched_setaffinity, sched_getcpu, CPU_*

#include "wait/occupier.h"

namespace {

using spinrpc::AwayFromCpu;

cpu_set_t current_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  return set;
}

// Outside a test case (doctest::skip): no REQUIRE.
int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

// Restores the test thread's mask whatever a case does to it.
struct MaskRestorer {
  cpu_set_t saved = current_mask();
  ~MaskRestorer() { sched_setaffinity(0, sizeof saved, &saved); }
};

TEST_CASE("AwayFromCpu moves the thread off a CPU and then restores its mask" *
          doctest::skip(allowed_cpus() < 2)) {
  const MaskRestorer restorer;
  const cpu_set_t before = current_mask();
  const int here = sched_getcpu();
  REQUIRE(CPU_ISSET(here, &before));
  {
    const AwayFromCpu away(here);
    CHECK(away.active());
    CHECK(sched_getcpu() != here);  // the kernel migrated us before returning
    const cpu_set_t during = current_mask();
    CHECK_FALSE(CPU_ISSET(here, &during));
    CHECK(CPU_COUNT(&during) == CPU_COUNT(&before) - 1);
  }
  const cpu_set_t after = current_mask();
  CHECK(CPU_EQUAL(&after, &before));
}

TEST_CASE("AwayFromCpu leaves a mask someone else set while it lived" * doctest::skip(allowed_cpus() < 2)) {
  const MaskRestorer restorer;
  const int here = sched_getcpu();
  cpu_set_t theirs;
  CPU_ZERO(&theirs);
  {
    const AwayFromCpu away(here);
    REQUIRE(away.active());
    // The user's tool pins the thread meanwhile (taskset -p, or another
    // thread's sched_setaffinity): to the CPU it had left, a mask that is
    // neither the narrowed one nor the one found (with 2 CPUs or more).
    CPU_SET(here, &theirs);
    REQUIRE(sched_setaffinity(0, sizeof theirs, &theirs) == 0);
  }
  const cpu_set_t after = current_mask();
  CHECK(CPU_EQUAL(&after, &theirs));
}

TEST_CASE("AwayFromCpu changes nothing for a CPU outside the mask, an invalid CPU, or a one-CPU mask") {
  const MaskRestorer restorer;
  const cpu_set_t before = current_mask();
  {
    const AwayFromCpu away(-1);
    CHECK_FALSE(away.active());
  }
  {
    const AwayFromCpu away(CPU_SETSIZE);
    CHECK_FALSE(away.active());
  }
  int outside = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && outside < 0; ++cpu) {
    if (!CPU_ISSET(cpu, &before)) outside = cpu;
  }
  if (outside >= 0) {
    const AwayFromCpu away(outside);
    CHECK_FALSE(away.active());
    const cpu_set_t during = current_mask();
    CHECK(CPU_EQUAL(&during, &before));
  }
  // Pinned to one CPU: leaving it would leave no CPU at all.
  const int here = sched_getcpu();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(here, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  {
    const AwayFromCpu away(here);
    CHECK_FALSE(away.active());
    CHECK(sched_getcpu() == here);
  }
  const cpu_set_t after = current_mask();
  CHECK(CPU_EQUAL(&after, &one));
}

}  // namespace
