#include <doctest/doctest.h>

#include <fstream>  // std::ifstream
#include <string>   // std::string

#include "channel/cpu_load_probe.h"

namespace {

using spinrpc::CpuLoadProbe;

TEST_CASE("CpuLoadProbe reads the runnable count from a /proc/loadavg line") {
  CHECK(CpuLoadProbe::runnable_in("0.61 1.49 1.66 3/345 9043\n") == 3);
  CHECK(CpuLoadProbe::runnable_in("12.00 8.00 4.00 17/2048 1") == 17);
  CHECK(CpuLoadProbe::runnable_in("0.61 1.49 1.66 3") == -1);       // no total
  CHECK(CpuLoadProbe::runnable_in("0.61 1.49 1.66 /345 1") == -1);  // no count
  CHECK(CpuLoadProbe::runnable_in("0.61 1.49") == -1);
  CHECK(CpuLoadProbe::runnable_in("") == -1);
}

TEST_CASE("CpuLoadProbe parses this machine's /proc/loadavg, which counts the reading thread") {
  std::ifstream file("/proc/loadavg");
  std::string line;
  REQUIRE(std::getline(file, line));
  CHECK(CpuLoadProbe::runnable_in(line) >= 1);
}

}  // namespace
