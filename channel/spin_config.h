#pragma once

#include <functional>  // std::function
#include <optional>    // std::optional
#include <ostream>     // std::ostream
#include <string>      // std::string

#include "channel/spin_policy.h"

namespace spinrpc {

/// Explicit settings that beat the environment: the server's --spin-us and
/// --adaptive flags, the client shim's options.
struct SpinOverrides {
  std::optional<long long> spin_us;  ///< µs; must be >= 0
  std::optional<bool> adaptive;
  std::optional<PlacementController::Setting> placement;  ///< --placement=auto|off|occupy
};

/// How many CPUs this process may use, and what said so.
struct CpuAllowance {
  double cpus;         ///< may be fractional under a cgroup quota
  std::string source;  ///< "sched_getaffinity", "cgroup cpu.max", ...
};

/// Reads sched_getaffinity(2) and the cgroup v2 cpu.max of this process's
/// cgroup (/proc/self/cgroup, /sys/fs/cgroup/<path>/cpu.max), and returns
/// the smaller. Never throws: an unreadable source is skipped.
CpuAllowance available_cpus();

/// Environment lookup, injectable for tests; returns nullptr when unset.
using EnvLookup = std::function<const char*(const char* name)>;

/// Resolves the spin policy once at start-up (SPIN.md, "The rule"):
/// a flag beats TSGO_SYNC_SPIN_US / TSGO_SYNC_SPIN_ADAPTIVE, which beat the
/// defaults (100 µs, adaptive on). With fewer than 2 CPUs (`cpus`) the
/// default budget is 0: spinning on the CPU the peer needs only delays it
/// (SPIN.md, "Beyond the proposal"); an explicit setting still wins. An
/// unparsable or negative environment value is reported as one line on
/// `warnings` naming the variable, then ignored. The result's `reason` says
/// which rule decided the budget.
SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env,
                               const CpuAllowance& cpus, std::ostream& warnings);

/// resolve_spin_policy with the process's environment, available_cpus()
/// and std::cerr.
SpinPolicy resolve_spin_policy(const SpinOverrides& overrides = {});

}  // namespace spinrpc
