#include <doctest/doctest.h>

#include <fstream>  // std::ifstream
#include <string>   // std::string, std::to_string

#include <unistd.h>  // ::gettid, ::getpid

#include "wait/cpu_load_probe.h"

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

TEST_CASE("CpuLoadProbe reads a thread's state from its /proc stat line") {
  CHECK(CpuLoadProbe::running_in_stat("4242 (spinrpc-occupy) R 1 4240 4240 0 -1"));
  CHECK_FALSE(CpuLoadProbe::running_in_stat("4242 (spinrpc-occupy) S 1 4240"));
  // The name may hold spaces and parentheses: the state follows the last ')'.
  CHECK(CpuLoadProbe::running_in_stat("7 (a) S (b) R 1 2"));
  CHECK_FALSE(CpuLoadProbe::running_in_stat("7 (R) S 1 2"));
  CHECK_FALSE(CpuLoadProbe::running_in_stat("7 (x)"));
  CHECK_FALSE(CpuLoadProbe::running_in_stat("no state here"));
  CHECK_FALSE(CpuLoadProbe::running_in_stat(""));
}

TEST_CASE("CpuLoadProbe's stat parser says running for the thread reading its own stat") {
  const std::string path = "/proc/self/task/" + std::to_string(::gettid()) + "/stat";
  std::ifstream file(path);
  std::string line;
  REQUIRE(std::getline(file, line));
  CHECK(CpuLoadProbe::running_in_stat(line));
}

}  // namespace
