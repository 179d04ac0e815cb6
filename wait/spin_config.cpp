#include "wait/spin_config.h"

#include "descriptor/stderr_lines.h"
#include "descriptor/syscall.h"

#include <sched.h>  // sched_getaffinity, CPU_COUNT

#include <charconv>  // std::from_chars, std::to_chars
#include <cstdlib>   // std::getenv

namespace spinrpc {
namespace {

constexpr long long kDefaultBudgetUs = 100;
constexpr char kBudgetVariable[] = "TSGO_SYNC_SPIN_US";
constexpr char kAdaptiveVariable[] = "TSGO_SYNC_SPIN_ADAPTIVE";
constexpr char kPlacementVariable[] = "SPINRPC_PLACEMENT";

// One cpu.max file: "max 100000" is none, "50000 100000" is half a CPU;
// a missing or unreadable file is none.
std::optional<double> cpu_max_cpus(const std::string& file_path) {
  const std::optional<std::string> text = read_small_file(file_path, 128);
  if (!text) return std::nullopt;
  const std::string_view line(*text);
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view quota = line.substr(0, space);
  std::string_view period_text = line.substr(space + 1);
  period_text = period_text.substr(0, period_text.find_first_of(" \n"));
  const auto period = parse_spin_us(period_text);  // a non-negative count of µs, as the quota
  if (quota == "max" || !period || *period <= 0) return std::nullopt;
  const auto quota_us = parse_spin_us(quota);
  if (!quota_us) return std::nullopt;
  return static_cast<double>(*quota_us) / static_cast<double>(*period);
}

std::string format_cpus(double cpus) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, cpus);
  return error == std::errc{} ? std::string(text, end) : std::string("?");
}

}  // namespace

std::optional<double> cgroup_quota_cpus(const std::string& membership_file,
                                        const std::string& cgroup_root) {
  const std::string membership = read_small_file(membership_file).value_or("");
  std::string path;
  for (std::string_view rest = membership; !rest.empty();) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    if (line.rfind("0::", 0) == 0) path = std::string(line.substr(3));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  if (path.empty() || path[0] != '/') return std::nullopt;
  // Every cgroup on the way up limits this one: the smallest quota decides.
  // The root cgroup has no cpu.max.
  std::optional<double> smallest;
  while (path.size() > 1) {
    if (const auto cpus = cpu_max_cpus(cgroup_root + path + "/cpu.max"); cpus && (!smallest || *cpus < *smallest)) {
      smallest = cpus;
    }
    path.resize(path.rfind('/') == 0 ? 1 : path.rfind('/'));
  }
  return smallest;
}

std::optional<long long> parse_spin_us(std::string_view text) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::optional<bool> parse_spin_adaptive(std::string_view text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return std::nullopt;
}

std::optional<PlacementController::Setting> parse_placement(std::string_view text) {
  if (text == "auto") return PlacementController::Setting::automatic;
  if (text == "off") return PlacementController::Setting::off;
  if (text == "occupy") return PlacementController::Setting::occupy;
  return std::nullopt;
}

std::string_view placement_name(PlacementController::Setting setting) noexcept {
  switch (setting) {
    case PlacementController::Setting::off:
      return "off";
    case PlacementController::Setting::occupy:
      return "occupy";
    case PlacementController::Setting::automatic:
      break;
  }
  return "auto";
}

std::string ignored_spin_setting(SpinSetting setting, std::string_view source, std::string_view value) {
  std::string line = "ignoring ";
  line += source;
  line += "=\"";
  line += value;
  switch (setting) {
    case SpinSetting::BudgetUs:
      line += "\": expected a non-negative number of microseconds";
      break;
    case SpinSetting::Adaptive:
      line += "\": expected 1 or 0";
      break;
    case SpinSetting::Placement:
      line += "\": expected auto, off or occupy";
      break;
  }
  return line;
}

CpuAllowance available_cpus() {
  CpuAllowance allowance{0, "unknown"};
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    allowance = {static_cast<double>(CPU_COUNT(&set)), "sched_getaffinity"};
  }
  if (const auto quota = cgroup_quota_cpus("/proc/self/cgroup", "/sys/fs/cgroup"); quota && (allowance.cpus == 0 || *quota < allowance.cpus)) {
    allowance = {*quota, "cgroup cpu.max"};
  }
  return allowance;
}

SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env,
                               const CpuAllowance& cpus, std::string& warnings) {
  SpinPolicy policy;
  policy.adaptive = true;

  const auto warn = [&](SpinSetting setting, std::string_view source, std::string_view value) {
    warnings += "spinrpc: " + ignored_spin_setting(setting, source, value) + '\n';
  };
  std::optional<long long> budget_us;
  if (overrides.spin_us && *overrides.spin_us >= 0) {
    budget_us = *overrides.spin_us;
    policy.reason = "--spin-us " + std::to_string(*budget_us);
  } else {
    if (overrides.spin_us) {
      warn(SpinSetting::BudgetUs, "SyncRpcOptions::spin.spin_us", std::to_string(*overrides.spin_us));
    }
    if (const char* text = env(kBudgetVariable); text != nullptr) {
      budget_us = parse_spin_us(text);
      if (budget_us) {
        policy.reason = std::string(kBudgetVariable) + "=" + text;
      } else {
        warn(SpinSetting::BudgetUs, kBudgetVariable, text);
      }
    }
  }
  if (!budget_us) {
    if (cpus.cpus > 0 && cpus.cpus < 2) {
      budget_us = 0;
      policy.reason = "default 0: " + format_cpus(cpus.cpus) + " CPU available (" + cpus.source + ")";
    } else {
      budget_us = kDefaultBudgetUs;
      policy.reason = "default";
    }
  }
  policy.budget = std::chrono::microseconds(*budget_us);

  if (overrides.adaptive) {
    policy.adaptive = *overrides.adaptive;
  } else if (const char* text = env(kAdaptiveVariable); text != nullptr) {
    if (const auto adaptive = parse_spin_adaptive(text)) {
      policy.adaptive = *adaptive;
    } else {
      warn(SpinSetting::Adaptive, kAdaptiveVariable, text);
    }
  }
  policy.placement = PlacementController::Setting::automatic;
  policy.placement_reason = "default";
  if (overrides.placement) {
    policy.placement = *overrides.placement;
    policy.placement_reason = "--placement=" + std::string(placement_name(*overrides.placement));
  } else if (const char* text = env(kPlacementVariable); text != nullptr) {
    if (const auto placement = parse_placement(text)) {
      policy.placement = *placement;
      policy.placement_reason = std::string(kPlacementVariable) + "=" + text;
    } else {
      warn(SpinSetting::Placement, kPlacementVariable, text);
    }
  }
  return policy;
}

SpinPolicy resolve_spin_policy(const SpinOverrides& overrides) {
  return resolve_spin_policy(overrides, [](const char* name) { return std::getenv(name); });
}

SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env) {
  // A string, not an ostringstream: a stream's first construction
  // initialises the C++ locale, ~20 µs of a server's start-up here
  // (docs/NODE.md, "Spawn to first reply").
  std::string warnings;
  SpinPolicy policy = resolve_spin_policy(overrides, env, available_cpus(), warnings);
  // Never blocks: a warning must not stall the server or the host process
  // of a client shim when nobody reads their stderr.
  if (!warnings.empty()) write_stderr_without_waiting(warnings);
  return policy;
}

}  // namespace spinrpc
