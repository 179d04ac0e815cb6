#include "settings/settings.h"

#include "descriptor/stderr_lines.h"
#include "descriptor/syscall.h"

#include <sched.h>  // sched_getaffinity, CPU_COUNT

#include <algorithm>  // std::min
#include <charconv>  // std::from_chars, std::to_chars
#include <utility>   // std::move
#include <vector>    // std::vector
#include <cstdlib>   // std::getenv
#include <span>      // std::span

namespace spinrpc {
namespace {

constexpr long long kDefaultBudgetUs = 100;
constexpr const char* kBudgetVariable = kSpinBudgetVariable.name;
constexpr const char* kAdaptiveVariable = kSpinAdaptiveVariable.name;

constexpr std::string_view kStartedServerEntries[] = {kLendRepliesEntry, kPeerSpinsEntry};

// A non-negative decimal integer, all of `text`.
std::optional<long long> parse_non_negative(std::string_view text) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// A cpu.max file's two fields, the quota and the period in µs: "max 100000"
// sets no quota; "50000 100000" is half a CPU. std::nullopt for none, or
// for text that is no such line.
std::optional<double> parse_cpu_max(std::string_view line) {
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view quota_text = line.substr(0, space);
  std::string_view period_text = line.substr(space + 1);
  period_text = period_text.substr(0, period_text.find_first_of(" \n"));
  const auto period = parse_non_negative(period_text);
  if (quota_text == "max" || !period || *period == 0) return std::nullopt;
  const auto quota = parse_non_negative(quota_text);
  if (!quota) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

// One cpu.max file; a missing or unreadable file sets no quota.
std::optional<double> cpu_max_cpus(const std::string& file_path) {
  const std::optional<std::string> text = read_small_file(file_path, 128);
  return text ? parse_cpu_max(*text) : std::nullopt;
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

std::span<const std::string_view> entries_for_started_server(bool client_spins) noexcept {
  return std::span(kStartedServerEntries).first(client_spins ? 2 : 1);
}

const char* process_environment(const char* name) { return std::getenv(name); }

namespace {

// One decimal field of an offer: digits up to `end` (or the text's end),
// consumed from `text`; std::nullopt when there are none or they overflow.
template <class Number>
std::optional<Number> take_decimal(std::string_view& text, char end) {
  const std::size_t stop = std::min(text.find(end), text.size());
  Number value{};
  const auto [last, error] = std::from_chars(text.data(), text.data() + stop, value);
  if (error != std::errc() || last != text.data() + stop || stop == 0) return std::nullopt;
  text.remove_prefix(stop < text.size() ? stop + 1 : stop);
  return value;
}

// `text` starts with `prefix`, which is consumed.
bool take_prefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

}  // namespace

std::optional<ShmSetting> parse_shm_setting(std::string_view text) {
  if (text.empty() || text == "auto" || text == "on" || text == "1") return ShmSetting{};
  if (text == "off" || text == "0") return ShmSetting{.off = true, .offer = std::nullopt};
  // fd:N,parent:PID,inode:DEV:INO, every field present, in this order.
  ShmOffer offer;
  std::optional<int> fd;
  std::optional<long long> parent;
  std::optional<unsigned long long> device;
  std::optional<unsigned long long> inode;
  if (!take_prefix(text, "fd:") || !(fd = take_decimal<int>(text, ',')) || !take_prefix(text, "parent:") ||
      !(parent = take_decimal<long long>(text, ',')) || !take_prefix(text, "inode:") ||
      !(device = take_decimal<unsigned long long>(text, ':')) ||
      !(inode = take_decimal<unsigned long long>(text, '\0')) || !text.empty() || *fd < 3 || *parent <= 0) {
    return std::nullopt;
  }
  offer.fd = *fd;
  offer.parent_pid = *parent;
  offer.device = *device;
  offer.inode = *inode;
  return ShmSetting{.offer = offer};
}

std::string shm_offer_entry(const ShmOffer& offer) {
  return std::string(kShmVariable.name) + "=fd:" + std::to_string(offer.fd) + ",parent:" +
         std::to_string(offer.parent_pid) + ",inode:" + std::to_string(offer.device) + ":" +
         std::to_string(offer.inode);
}

bool variable_says_yes(const EnvironmentVariable& variable, const EnvLookup& env) {
  const char* value = env(variable.name);
  return value != nullptr && std::string_view(value) == "1";
}

namespace {

// "<program>: <line>\n" for each line. A string, not an ostringstream: a
// stream's first construction initialises the C++ locale, a cost in a
// server's start-up (docs/NODE.md, "Spawn to first reply").
std::string warning_text(std::string_view program, std::span<const std::string> lines) {
  std::string text;
  for (const std::string& line : lines) {
    text += program;
    text += ": ";
    text += line;
    text += '\n';
  }
  return text;
}

}  // namespace

void print_setting_warnings(std::string_view program, std::span<const std::string> lines) {
  // Never blocks: a warning must not stall the server or a client's host
  // process when nobody reads its stderr.
  if (!lines.empty()) write_stderr_without_waiting(warning_text(program, lines));
}

std::optional<long long> parse_spin_us(std::string_view text) { return parse_non_negative(text); }

std::optional<bool> parse_spin_adaptive(std::string_view text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return std::nullopt;
}

std::string ignored_spin_setting(SpinSetting setting, std::string_view source, std::string_view value) {
  std::string line = "ignoring ";
  line += source;
  line += "=\"";
  line += value;
  switch (setting) {
    case SpinSetting::budget_us:
      line += "\": expected a non-negative number of microseconds";
      break;
    case SpinSetting::adaptive:
      line += "\": expected 1 or 0";
      break;
    case SpinSetting::placement:
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

namespace {

// The precedence, said once: an explicit value (`overrides`) beats the
// environment, which beats the default. Each value ignored adds a line to
// `ignored` (ignored_spin_setting).
SpinPolicy resolve(const SpinOverrides& overrides, const EnvLookup& env, const CpuAllowance& cpus,
                   std::vector<std::string>& ignored) {
  SpinPolicy policy;
  policy.adaptive = true;

  const auto warn = [&](SpinSetting setting, std::string_view source, std::string_view value) {
    ignored.push_back(ignored_spin_setting(setting, source, value));
  };
  std::optional<long long> budget_us;
  if (overrides.spin_us && *overrides.spin_us >= 0) {
    budget_us = *overrides.spin_us;
    policy.reason = "--spin-us " + std::to_string(*budget_us);
  } else {
    if (overrides.spin_us) {
      warn(SpinSetting::budget_us, "SyncRpcOptions::spin.spin_us", std::to_string(*overrides.spin_us));
    }
    if (const char* text = env(kBudgetVariable); text != nullptr) {
      budget_us = parse_spin_us(text);
      if (budget_us) {
        policy.reason = std::string(kBudgetVariable) + "=" + text;
      } else {
        warn(SpinSetting::budget_us, kBudgetVariable, text);
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
      warn(SpinSetting::adaptive, kAdaptiveVariable, text);
    }
  }
  policy.placement = PlacementController::Setting::automatic;
  policy.placement_reason = "default";
  if (overrides.placement) {
    policy.placement = *overrides.placement;
    policy.placement_reason = "--placement=" + std::string(placement_name(*overrides.placement));
  } else if (const char* text = env(kPlacementVariable.name); text != nullptr) {
    if (const auto placement = parse_placement(text)) {
      policy.placement = *placement;
      policy.placement_reason = std::string(kPlacementVariable.name) + "=" + text;
    } else {
      warn(SpinSetting::placement, kPlacementVariable.name, text);
    }
  }
  return policy;
}

// What the server's client tells it through the environment, on top of
// the spin policy.
ServerSettings server_settings(SpinPolicy spin, const EnvLookup& env) {
  ServerSettings settings{std::move(spin)};
  settings.lend_replies = variable_says_yes(kLendRepliesVariable, env);
  settings.spin.peer_spins = variable_says_yes(kPeerSpinsVariable, env);
  if (settings.spin.peer_spins) settings.spin.placement_reason += "; the client spins (" + std::string(kPeerSpinsEntry) + ")";
  settings.spin.follow_peer = true;
  return settings;
}

// The program name a warning from the environment or the shim's options
// carries: the process may be anyone's (a Node process, a C++ client).
constexpr std::string_view kWarningPrefix = "spinrpc";

}  // namespace

SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env,
                               const CpuAllowance& cpus, std::string& warnings) {
  std::vector<std::string> ignored;
  SpinPolicy policy = resolve(overrides, env, cpus, ignored);
  warnings += warning_text(kWarningPrefix, ignored);
  return policy;
}

SpinPolicy resolve_spin_policy(const SpinOverrides& overrides) {
  return resolve_spin_policy(overrides, process_environment);
}

SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env) {
  std::vector<std::string> ignored;
  SpinPolicy policy = resolve(overrides, env, available_cpus(), ignored);
  print_setting_warnings(kWarningPrefix, ignored);
  return policy;
}

ServerSettings resolve_server_settings(const SpinOverrides& flags, const EnvLookup& env,
                                       const CpuAllowance& cpus, std::string& warnings) {
  return server_settings(resolve_spin_policy(flags, env, cpus, warnings), env);
}

ServerSettings resolve_server_settings(const SpinOverrides& flags) {
  return server_settings(resolve_spin_policy(flags, process_environment), process_environment);
}

bool client_offers_shm(std::optional<bool> option, const EnvLookup& env) {
  if (option) return *option;
  const char* value = env(kShmVariable.name);
  if (value == nullptr) return true;
  const std::optional<ShmSetting> setting = parse_shm_setting(value);
  if (!setting) {
    const std::string line = std::string(kShmVariable.name) + "=" + value + " is not off, auto or a client's offer; ignored";
    print_setting_warnings(kWarningPrefix, std::span(&line, 1));
    return true;
  }
  return !setting->off;
}

std::optional<TraceSetting> resolve_trace_setting(const std::optional<std::string>& option, const EnvLookup& env,
                                                  std::vector<std::string>& warnings) {
  std::string pattern;
  if (option) {
    pattern = *option;
  } else if (const char* value = env(kTraceVariable.name)) {
    pattern = value;
  }
  if (pattern.empty()) return std::nullopt;
  TraceSetting setting{std::move(pattern), kDefaultTraceRequests};
  if (const char* value = env(kTraceMaxVariable.name)) {
    const std::optional<long long> max = parse_non_negative(value);
    if (max && *max > 0 && static_cast<unsigned long long>(*max) <= kMaxTraceRequests) {
      setting.max_requests = static_cast<std::size_t>(*max);
    } else {
      warnings.push_back(std::string(kTraceMaxVariable.name) + "=" + value + " is not a number of requests from 1 to " +
                         std::to_string(kMaxTraceRequests) + "; the trace keeps " +
                         std::to_string(kDefaultTraceRequests));
    }
  }
  return setting;
}

}  // namespace spinrpc
