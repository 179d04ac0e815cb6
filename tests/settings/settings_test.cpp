#include <sched.h>  // ::sched_getaffinity, ::sched_setaffinity, CPU_*
#include <unistd.h>  // ::getpid

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "descriptor/pipe.h"
#include "settings/settings.h"
#include "stream/fd_input_stream_posix.h"
#include "wait/spin_reader.h"
#include "descriptor/unique_fd.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::CpuAllowance;
using spinrpc::SpinOverrides;
using spinrpc::cgroup_quota_cpus;
using spinrpc::resolve_spin_policy;

// An environment made of a map, so tests never touch the process's own.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  spinrpc::EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

const CpuAllowance kTwoCpus{2, "sched_getaffinity"};
const CpuAllowance kOneCpu{1, "sched_getaffinity"};

TEST_CASE("resolve_spin_policy defaults to a 100 us adaptive budget on two CPUs") {
  FakeEnv env;
  std::string warnings;
  const auto policy = resolve_spin_policy({}, env.lookup(), kTwoCpus, warnings);
  CHECK(policy.budget == 100us);
  CHECK(policy.adaptive);
  CHECK(policy.reason == "default");
  CHECK(warnings.empty());
}

TEST_CASE("resolve_spin_policy takes TSGO_SYNC_SPIN_US and TSGO_SYNC_SPIN_ADAPTIVE from the environment") {
  FakeEnv env{{{"TSGO_SYNC_SPIN_US", "40"}, {"TSGO_SYNC_SPIN_ADAPTIVE", "0"}}};
  std::string warnings;
  const auto policy = resolve_spin_policy({}, env.lookup(), kTwoCpus, warnings);
  CHECK(policy.budget == 40us);
  CHECK_FALSE(policy.adaptive);
  CHECK(policy.reason == "TSGO_SYNC_SPIN_US=40");
}

TEST_CASE("resolve_spin_policy lets a flag beat the environment") {
  FakeEnv env{{{"TSGO_SYNC_SPIN_US", "40"}, {"TSGO_SYNC_SPIN_ADAPTIVE", "0"}}};
  std::string warnings;
  const auto policy = resolve_spin_policy(SpinOverrides{0, true, std::nullopt}, env.lookup(), kTwoCpus, warnings);
  CHECK(policy.budget == 0us);
  CHECK(policy.adaptive);
  CHECK(policy.reason == "--spin-us 0");
}

TEST_CASE("resolve_spin_policy warns once naming the variable and uses the default for a bad value") {
  for (const char* bad : {"-5", "abc", "", "12us", "1e3"}) {
    CAPTURE(bad);
    FakeEnv env{{{"TSGO_SYNC_SPIN_US", bad}, {"TSGO_SYNC_SPIN_ADAPTIVE", "maybe"}}};
    std::string warnings;
    const auto policy = resolve_spin_policy({}, env.lookup(), kTwoCpus, warnings);
    CHECK(policy.budget == 100us);
    CHECK(policy.adaptive);
    CHECK(warnings == "spinrpc: ignoring TSGO_SYNC_SPIN_US=\"" + std::string(bad) +
                                "\": expected a non-negative number of microseconds\n"
                                "spinrpc: ignoring TSGO_SYNC_SPIN_ADAPTIVE=\"maybe\": expected 1 or 0\n");
  }
}

TEST_CASE("resolve_spin_policy warns about a negative option as about a bad variable, and the environment decides") {
  FakeEnv env{{{"TSGO_SYNC_SPIN_US", "40"}}};
  std::string warnings;
  auto policy = resolve_spin_policy(SpinOverrides{-5, std::nullopt, std::nullopt}, env.lookup(), kTwoCpus, warnings);
  CHECK(policy.budget == 40us);
  CHECK(policy.reason == "TSGO_SYNC_SPIN_US=40");
  CHECK(warnings ==
        "spinrpc: ignoring SyncRpcOptions::spin.spin_us=\"-5\": expected a non-negative number of microseconds\n");

  FakeEnv empty;
  warnings.clear();
  policy = resolve_spin_policy(SpinOverrides{-1, std::nullopt, std::nullopt}, empty.lookup(), kTwoCpus, warnings);
  CHECK(policy.budget == 100us);
  CHECK(policy.reason == "default");
  CHECK(warnings.find("spin.spin_us=\"-1\"") != std::string::npos);
}

TEST_CASE("the command line, the environment and the options share one parser and one warning") {
  using spinrpc::SpinSetting;
  CHECK(spinrpc::parse_spin_us("0") == 0);
  CHECK(spinrpc::parse_spin_us("250") == 250);
  for (const char* bad : {"-5", "abc", "", "12us", "1e3", " 5"}) CHECK_FALSE(spinrpc::parse_spin_us(bad).has_value());
  CHECK(spinrpc::parse_spin_adaptive("1") == true);
  CHECK(spinrpc::parse_spin_adaptive("false") == false);
  CHECK_FALSE(spinrpc::parse_spin_adaptive("yes").has_value());
  CHECK(spinrpc::ignored_spin_setting(SpinSetting::budget_us, "--spin-us", "x") ==
        "ignoring --spin-us=\"x\": expected a non-negative number of microseconds");
  CHECK(spinrpc::ignored_spin_setting(SpinSetting::adaptive, "--adaptive", "2") ==
        "ignoring --adaptive=\"2\": expected 1 or 0");
}

TEST_CASE("resolve_spin_policy defaults the budget to 0 with fewer than two CPUs and says why") {
  FakeEnv env;
  std::string warnings;
  auto policy = resolve_spin_policy({}, env.lookup(), kOneCpu, warnings);
  CHECK(policy.budget == 0us);
  CHECK(policy.reason == "default 0: 1 CPU available (sched_getaffinity)");

  policy = resolve_spin_policy({}, env.lookup(), CpuAllowance{1.5, "cgroup cpu.max"}, warnings);
  CHECK(policy.budget == 0us);
  CHECK(policy.reason == "default 0: 1.5 CPU available (cgroup cpu.max)");
}

TEST_CASE("resolve_spin_policy spins on one CPU when the environment or a flag asks explicitly") {
  FakeEnv env{{{"TSGO_SYNC_SPIN_US", "100"}}};
  std::string warnings;
  CHECK(resolve_spin_policy({}, env.lookup(), kOneCpu, warnings).budget == 100us);
  FakeEnv empty;
  CHECK(resolve_spin_policy(SpinOverrides{30, std::nullopt, std::nullopt}, empty.lookup(), kOneCpu, warnings).budget == 30us);
}

// A cgroup v2 tree on disk: /proc/self/cgroup's line and the cpu.max files.
class FakeCgroupTree {
 public:
  explicit FakeCgroupTree(const std::string& member_of) {
    root_ = std::filesystem::temp_directory_path() /
            ("spinrpc-cgroup-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter_));
    std::filesystem::create_directories(root_ / ("." + member_of));
    std::ofstream(root_ / "membership") << "0::" << member_of << "\n";
  }
  ~FakeCgroupTree() { std::filesystem::remove_all(root_); }
  void cpu_max(const std::string& cgroup, const std::string& text) const {
    std::ofstream(root_ / ("." + cgroup) / "cpu.max") << text << "\n";
  }
  std::optional<double> quota() const {
    return cgroup_quota_cpus((root_ / "membership").string(), root_.string());
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path root_;
};

TEST_CASE("cgroup_quota_cpus: the smallest quota on the way up decides, the process's own or an ancestor's") {
  const FakeCgroupTree tree("/user.slice/ci.scope/job");
  CHECK_FALSE(tree.quota().has_value());  // no cpu.max anywhere: no quota
  tree.cpu_max("/user.slice/ci.scope/job", "max 100000");
  tree.cpu_max("/user.slice/ci.scope", "max 100000");
  tree.cpu_max("/user.slice", "max 100000");
  CHECK_FALSE(tree.quota().has_value());
  // The case: the quota sits on an ancestor, the own cgroup says max.
  tree.cpu_max("/user.slice/ci.scope", "150000 100000");
  REQUIRE(tree.quota().has_value());
  CHECK(*tree.quota() == doctest::Approx(1.5));
  // A smaller one further up wins; so does a smaller own one.
  tree.cpu_max("/user.slice", "50000 100000");
  CHECK(*tree.quota() == doctest::Approx(0.5));
  tree.cpu_max("/user.slice/ci.scope/job", "20000 100000");
  CHECK(*tree.quota() == doctest::Approx(0.2));
}

TEST_CASE("cgroup_quota_cpus: the root cgroup, cgroup v1 and unreadable files give no quota") {
  const FakeCgroupTree root("/");
  CHECK_FALSE(root.quota().has_value());
  CHECK_FALSE(cgroup_quota_cpus("/nonexistent/cgroup", "/nonexistent").has_value());
  const FakeCgroupTree tree("/a");
  tree.cpu_max("/a", "garbage");
  CHECK_FALSE(tree.quota().has_value());
}

// Pins this thread to one of the CPUs it may use (whichever: CPU 0 need not
// be among them) and restores the mask afterwards. available_cpus() then
// reads the real sched_getaffinity(2); a cgroup quota below one CPU, which
// some machines have, may make the answer smaller still, and must then be
// named as the source.
TEST_CASE("available_cpus counts at most one CPU once this thread is pinned to one, naming the source") {
  cpu_set_t before;
  CPU_ZERO(&before);
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &before)) ++first;
  REQUIRE(first < CPU_SETSIZE);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);
  const CpuAllowance cpus = spinrpc::available_cpus();
  REQUIRE(::sched_setaffinity(0, sizeof before, &before) == 0);

  CAPTURE(cpus.cpus);
  CAPTURE(cpus.source);
  CHECK(cpus.cpus > 0);
  CHECK(cpus.cpus <= 1);
  CHECK(cpus.source == (cpus.cpus == 1 ? "sched_getaffinity" : "cgroup cpu.max"));
  FakeEnv env;
  std::string warnings;
  const auto policy = resolve_spin_policy({}, env.lookup(), cpus, warnings);
  CHECK(policy.budget == 0us);
  CHECK(policy.reason.find(" CPU available (" + cpus.source + ")") != std::string::npos);
  // Placement is on by default, but with nothing to spend there is no
  // occupier either: the reader says so and never starts one.
  CHECK(policy.placement == spinrpc::PlacementController::Setting::automatic);
  spinrpc::PipePair pipe = spinrpc::make_pipe();
  const spinrpc::SpinReader reader(std::make_unique<spinrpc::FdInputStream>(std::move(pipe.read_end), false, false),
                                   policy);
  CHECK(reader.stats().placement == "off");
  CHECK(reader.stats().placement_setting_reason == "budget 0: nothing to spend");
  CHECK(reader.stats().occupier_cpu == -1);
}

TEST_CASE("available_cpus counts every CPU in the affinity mask unless a cgroup quota is smaller") {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  REQUIRE(::sched_getaffinity(0, sizeof mask, &mask) == 0);
  const CpuAllowance cpus = spinrpc::available_cpus();
  CAPTURE(cpus.source);
  if (cpus.source == "sched_getaffinity") {
    CHECK(cpus.cpus == CPU_COUNT(&mask));
  } else {
    CHECK(cpus.source == "cgroup cpu.max");
    CHECK(cpus.cpus < CPU_COUNT(&mask));
    CHECK(cpus.cpus > 0);
  }
}

TEST_CASE("placement: auto by default, SPINRPC_PLACEMENT next, the option first; a bad value warns") {
  using Setting = spinrpc::PlacementController::Setting;
  std::string warnings;
  FakeEnv empty;
  auto policy = resolve_spin_policy({}, empty.lookup(), kTwoCpus, warnings);
  CHECK(policy.placement == Setting::automatic);
  CHECK(policy.placement_reason == "default");
  FakeEnv off{{{"SPINRPC_PLACEMENT", "off"}}};
  policy = resolve_spin_policy({}, off.lookup(), kTwoCpus, warnings);
  CHECK(policy.placement == Setting::off);
  CHECK(policy.placement_reason == "SPINRPC_PLACEMENT=off");
  policy = resolve_spin_policy(SpinOverrides{std::nullopt, std::nullopt, Setting::occupy}, off.lookup(), kTwoCpus,
                               warnings);
  CHECK(policy.placement == Setting::occupy);
  CHECK(policy.placement_reason == "--placement=occupy");
  CHECK(warnings.empty());
  FakeEnv bad{{{"SPINRPC_PLACEMENT", "sometimes"}}};
  policy = resolve_spin_policy({}, bad.lookup(), kTwoCpus, warnings);
  CHECK(policy.placement == Setting::automatic);
  CHECK(warnings == "spinrpc: ignoring SPINRPC_PLACEMENT=\"sometimes\": expected auto, off or occupy\n");
  CHECK(spinrpc::parse_placement("auto") == Setting::automatic);
  CHECK(spinrpc::placement_name(Setting::occupy) == "occupy");
}

}  // namespace

namespace {

TEST_CASE("resolve_server_settings adds what the client says through the environment to the spin policy") {
  FakeEnv env;
  std::string warnings;
  auto settings = spinrpc::resolve_server_settings({}, env.lookup(), kTwoCpus, warnings);
  CHECK_FALSE(settings.lend_replies);
  CHECK_FALSE(settings.spin.peer_spins);
  CHECK(settings.spin.follow_peer);  // the server is the pair's one follower
  CHECK(settings.spin.placement_reason == "default");

  env.vars = {{"SPINRPC_LEND_REPLIES", "1"}, {"SPINRPC_PEER_SPINS", "1"}, {"TSGO_SYNC_SPIN_US", "x"}};
  settings = spinrpc::resolve_server_settings(SpinOverrides{30, std::nullopt, std::nullopt}, env.lookup(),
                                              kTwoCpus, warnings);
  CHECK(settings.lend_replies);
  CHECK(settings.spin.peer_spins);
  CHECK(settings.spin.placement_reason == "default; the client spins (SPINRPC_PEER_SPINS=1)");
  CHECK(settings.spin.budget == 30us);  // the flag beats the (bad) variable, which is not even read
  CHECK(warnings.empty());

  env.vars = {{"SPINRPC_LEND_REPLIES", "yes"}, {"SPINRPC_PEER_SPINS", "0"}};
  settings = spinrpc::resolve_server_settings({}, env.lookup(), kTwoCpus, warnings);
  CHECK_FALSE(settings.lend_replies);  // "1" only
  CHECK_FALSE(settings.spin.peer_spins);
}

TEST_CASE("Every environment variable spinrpc reads is in one table, once, with a meaning") {
  std::set<std::string_view> names;
  for (const spinrpc::EnvironmentVariable& variable : spinrpc::kEnvironmentVariables) {
    CAPTURE(variable.name);
    CHECK(names.insert(variable.name).second);
    CHECK_FALSE(variable.meaning.empty());
    CHECK_FALSE(variable.read_by.empty());
  }
  for (const char* name : {"TSGO_SYNC_SPIN_US", "TSGO_SYNC_SPIN_ADAPTIVE", "SPINRPC_PLACEMENT", "SPINRPC_PEER_SPINS",
                           "SPINRPC_LEND_REPLIES", "SPINRPC_TS_API", "SPINRPC_BINDING", "SPINRPC_SHM", "SPINRPC_TRACE"}) {
    CAPTURE(name);
    CHECK(names.count(name) == 1);
  }
}

TEST_CASE("SPINRPC_SHM: off and auto, and a client's offer written and read back whole; any other value refused") {
  CHECK(spinrpc::parse_shm_setting("off")->off);
  CHECK(spinrpc::parse_shm_setting("0")->off);
  for (const char* on : {"", "auto", "on", "1"}) {
    CAPTURE(on);
    REQUIRE(spinrpc::parse_shm_setting(on));
    CHECK_FALSE(spinrpc::parse_shm_setting(on)->off);
    CHECK_FALSE(spinrpc::parse_shm_setting(on)->offer);
  }
  const spinrpc::ShmOffer offer{.fd = 3, .parent_pid = 4194304, .device = 18446744073709551615ULL, .inode = 7};
  const std::string entry = spinrpc::shm_offer_entry(offer);
  CHECK(entry == "SPINRPC_SHM=fd:3,parent:4194304,inode:18446744073709551615:7");
  const auto read = spinrpc::parse_shm_setting(std::string_view(entry).substr(entry.find('=') + 1));
  REQUIRE(read);
  REQUIRE(read->offer);
  CHECK(read->offer->fd == 3);
  CHECK(read->offer->parent_pid == 4194304);
  CHECK(read->offer->device == 18446744073709551615ULL);
  CHECK(read->offer->inode == 7);
  // A bare fd:N names no process, and every part must be there, in order.
  for (const char* bad : {"fd:3", "fd:3,", "fd:2,parent:1,inode:1:2", "fd:3,parent:0,inode:1:2", "fd:3,parent:-4,inode:1:2",
                          "fd:3,parent:9,inode:1", "fd:3,parent:9,inode:1:", "fd:3,parent:9,inode:1:2,", "fd:3,parent:9,inode:1:2x",
                          "fd:3,inode:1:2,parent:9", "fd:+3,parent:9,inode:1:2", "fd:3,parent:9,inode:-1:2", "offer", "OFF"}) {
    CAPTURE(bad);
    CHECK_FALSE(spinrpc::parse_shm_setting(bad));
  }
}

TEST_CASE("A started server gets SPINRPC_LEND_REPLIES=1, and SPINRPC_PEER_SPINS=1 only from a client that spins") {
  const auto quiet = spinrpc::entries_for_started_server(false);
  REQUIRE(quiet.size() == 1);
  CHECK(quiet[0] == "SPINRPC_LEND_REPLIES=1");
  const auto spinning = spinrpc::entries_for_started_server(true);
  REQUIRE(spinning.size() == 2);
  CHECK(spinning[1] == "SPINRPC_PEER_SPINS=1");
}

TEST_CASE("cgroup_quota_cpus reads cpu.max with its own parse: a zero period or a negative quota is no quota") {
  const FakeCgroupTree tree("/b");
  tree.cpu_max("/b", "50000 0");
  CHECK_FALSE(tree.quota().has_value());
  tree.cpu_max("/b", "-1 100000");
  CHECK_FALSE(tree.quota().has_value());
  tree.cpu_max("/b", "200000 100000\n");
  CHECK(*tree.quota() == doctest::Approx(2.0));
}

}  // namespace
