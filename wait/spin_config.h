#pragma once

#include <functional>  // std::function
#include <optional>    // std::optional
#include <string>      // std::string
#include <string_view> // std::string_view

#include "wait/spin_policy.h"

namespace spinrpc {

/// Explicit settings that beat the environment: the server's --spin-us and
/// --adaptive flags, the client shim's options.
struct SpinOverrides {
  /// Spin budget, µs; 0 = off. A negative value is reported as one line on
  /// stderr by resolve_spin_policy and ignored (the environment or the
  /// default decides).
  std::optional<long long> spin_us;
  std::optional<bool> adaptive;  ///< adaptive rule on or off
  /// Placement policy (docs/PLACEMENT.md): auto, off, or occupy (always,
  /// for measurements). Applies only with a budget > 0.
  std::optional<PlacementController::Setting> placement;
};

/// The one parser of a spin budget written as text (a flag's value, an
/// environment variable): a non-negative decimal number of µs, nothing else.
std::optional<long long> parse_spin_us(std::string_view text);
/// The one parser of the adaptive switch written as text: "1" or "true",
/// "0" or "false".
std::optional<bool> parse_spin_adaptive(std::string_view text);

/// The one parser of the placement setting written as text: "auto", "off",
/// "occupy".
std::optional<PlacementController::Setting> parse_placement(std::string_view text);
/// The placement setting's spelling, the inverse of parse_placement.
std::string_view placement_name(PlacementController::Setting setting) noexcept;

/// Which spin setting a value was meant for.
enum class SpinSetting { BudgetUs, Adaptive, Placement };
/// The one line (no newline, no program name) that reports an invalid spin
/// setting, whatever gave it: `source` is "--spin-us", "TSGO_SYNC_SPIN_US",
/// "SyncRpcOptions::spin.spin_us", ...; `value` as given. The setting is
/// then ignored: the next source in line, or the default, decides.
std::string ignored_spin_setting(SpinSetting setting, std::string_view source, std::string_view value);

/// How many CPUs this process may use, and what said so.
struct CpuAllowance {
  double cpus;         ///< may be fractional under a cgroup quota
  std::string source;  ///< "sched_getaffinity", "cgroup cpu.max", ...
};

/// The CPUs a cgroup v2 quota leaves the process whose membership file
/// (/proc/self/cgroup: "0::/a/b") is `membership_file`, with the cgroup tree
/// mounted at `cgroup_root` (/sys/fs/cgroup): the smallest quota/period of
/// the cpu.max files of its cgroup and of every ancestor below the root,
/// since each ancestor's quota bounds all of its descendants together.
/// std::nullopt when none sets a quota, under cgroup v1, or when nothing is
/// readable. Never throws. Paths are parameters so tests can use a fake tree.
std::optional<double> cgroup_quota_cpus(const std::string& membership_file,
                                        const std::string& cgroup_root);

/// Reads sched_getaffinity(2) and cgroup_quota_cpus of this process
/// (/proc/self/cgroup, /sys/fs/cgroup), and returns the smaller. Never
/// throws: an unreadable source is skipped.
CpuAllowance available_cpus();

/// Environment lookup, injectable for tests; returns nullptr when unset.
using EnvLookup = std::function<const char*(const char* name)>;

/// Resolves the spin policy once at start-up (docs/SPIN.md#settings):
/// a flag or option beats TSGO_SYNC_SPIN_US / TSGO_SYNC_SPIN_ADAPTIVE, which
/// beat the defaults (100 µs, adaptive on). With fewer than 2 CPUs (`cpus`)
/// the default budget is 0: spinning on the CPU the peer needs only delays
/// it (docs/SPIN.md#one-cpu); an explicit setting still wins. A negative override or an unparsable
/// or negative environment value is reported as one line appended to
/// `warnings` ("spinrpc: " + ignored_spin_setting(...) + "\n"), then ignored. The result's
/// `reason` says which rule decided the budget. Placement: the override
/// beats SPINRPC_PLACEMENT, which beats the default, auto; `placement_reason`
/// says which.
SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env,
                               const CpuAllowance& cpus, std::string& warnings);

/// resolve_spin_policy with the process's environment, available_cpus()
/// and stderr, written without waiting (descriptor/stderr_lines.h).
SpinPolicy resolve_spin_policy(const SpinOverrides& overrides = {});

/// The same with `env` for the environment: a client whose server gets
/// an environment other than this process's (SyncRpcOptions::environment)
/// reads its own settings from that one too.
SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env);

}  // namespace spinrpc
