#pragma once

#include <array>        // std::array
#include <chrono>       // std::chrono::microseconds
#include <cstdint>      // std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view

namespace spinrpc {

/// A channel's counters (docs/SPIN.md#counters), spelled out once:
/// X(name, meaning). Each is a total since the reader started. A name says
/// its unit: a plural noun counts events of that kind; `_us` is a time in µs. The same names are
/// the members of ChannelStats, the members of getChannelStats' JSON, the
/// `--stats` line and the benchmark counters (with a cli_/srv_ prefix).
///
/// Every read that needed bytes is one wait:
/// waits = spin_hits + spin_misses + blocked_while_suspended + plain_waits
///         + occupied_waits.
#define SPINRPC_CHANNEL_COUNTERS(X)                                                              \
  X(waits, "reads that needed bytes")                                                            \
  X(spin_hits, "waits whose bytes came within the spin budget")                                  \
  X(spin_misses, "waits that spent the budget (or found the CPU contended), then blocked")       \
  X(spin_contended, "of spin_misses: a yield gave the CPU away, so the spin stopped early")      \
  X(stolen_yields, "yields that came back late with no other task run on our CPU (the hypervisor's or interrupts' time): not contention") \
  X(blocked_while_suspended, "waits that blocked at once: the adaptive rule suspended spinning") \
  X(plain_waits, "waits that blocked at once: budget 0")                                         \
  X(occupied_waits, "waits that blocked at once: occupying, blocking by choice, or once to be placed anew")        \
  X(suspensions, "times the adaptive rule switched spinning off")                                \
  X(resumptions, "times the adaptive rule switched spinning back on")                            \
  X(resumptions_refused, "times resuming after contention was put off: CPUs oversubscribed")     \
  X(spin_time_us, "wall µs spent in the spin loop, yields included")                             \
  X(placement_probes, "times placement tried the mode it was not in (the first probe included)") \
  X(placement_changes, "times placement changed the mode it keeps (after a probe or contention)") \
  X(placement_moves, "times the reader moved to the occupier's CPU, where the peer was stuck")    \
  X(placement_unshares, "times the reader blocked once to leave a CPU a spinning peer shared")  \
  X(placement_follows, "times a suspended reader moved to the CPU its peer last ran on")        \
  X(occupier_contentions, "times the occupier let go: another task wanted its CPU")            \
  X(occupier_stolen_yields, "the occupier's yields that came back late with no other task run on its CPU: not contention") \
  X(occupied_time_us, "wall µs the occupier spent keeping CPUs busy, yields included")          \
  X(lent_parts, "big message parts lent to a pipe (vmsplice) instead of copied into it")         \
  X(unlent_parts, "big parts copied although lending is on: the reader had not read the last") \
  X(ring_sleeps, "shared memory: reads that slept on the doorbell (the pipe beside the ring) after the spin")          \
  X(ring_wakes, "shared memory: doorbells rung and futex wakes sent to a peer asleep")               \
  X(ring_full_waits, "shared memory: writes that found the ring full and waited for room")

/// What a channel's reader did and the spin policy in force
/// (docs/SPIN.md#counters). Counting is always on: a few integer increments
/// per wait.
struct ChannelStats {
#define SPINRPC_COUNTER_MEMBER(name, meaning) std::uint64_t name = 0;
  SPINRPC_CHANNEL_COUNTERS(SPINRPC_COUNTER_MEMBER)
#undef SPINRPC_COUNTER_MEMBER
  std::chrono::microseconds budget{0};  ///< effective spin budget (JSON: budget_us)
  bool adaptive = false;                ///< adaptive rule on
  bool spinning = false;                ///< the next wait spins
  std::string budget_reason;            ///< why `budget` (SpinPolicy::reason)
  /// What carries the bytes: "descriptor" (pipes, a socket, FIFOs) or
  /// "shared memory" (docs/SHARED-MEMORY.md); StreamTraits::name (stream/input_stream.h).
  std::string_view transport = "descriptor";
  std::string transport_reason;         ///< why that transport (the handshake's outcome)
  // Placement (docs/PLACEMENT.md): the setting, the decision and why.
  std::string placement;                 ///< "auto", "off" or "occupy": the setting in force
  std::string placement_setting_reason;  ///< why that setting (SpinPolicy::placement_reason)
  std::string_view placement_mode = "free";  ///< "free", "occupy" or "block": what the next cycle does
  std::string_view placement_decision;   ///< why (PlacementController::reason; static text)
  std::uint64_t free_cycle_ns = 0;       ///< median cycle (write → next message) measured free; 0: not yet
  std::uint64_t occupy_cycle_ns = 0;     ///< the same, occupying; 0: not yet
  std::uint64_t block_cycle_ns = 0;      ///< the same, blocking (a client only); 0: not yet
  int cpu = -1;                          ///< the reader's CPU at its last write while occupying; -1: none
  int occupier_cpu = -1;                 ///< the CPU the occupier last ran on; -1: never ran
  int occupier_avoided_cpu = -1;         ///< the reader's CPU it kept away from then
  int followed_pid = 0;                  ///< the peer whose CPU a suspended reader follows; 0: none found (yet)
};

/// One counter of ChannelStats: its name (as in JSON and the benchmarks),
/// the member, and what it counts.
struct ChannelCounter {
  std::string_view name;
  std::uint64_t ChannelStats::*member;
  std::string_view meaning;
};

/// Every counter, in the order of SPINRPC_CHANNEL_COUNTERS.
inline constexpr std::array kChannelCounters = {
#define SPINRPC_COUNTER_ENTRY(name, meaning) ChannelCounter{#name, &ChannelStats::name, meaning},
    SPINRPC_CHANNEL_COUNTERS(SPINRPC_COUNTER_ENTRY)
#undef SPINRPC_COUNTER_ENTRY
};

/// Every field of ChannelStats as it is shown, said once: calls
/// `visit(name, value)` for each, in the order of getChannelStats' JSON,
/// `--stats` and the binding's stats() (docs/SPIN.md#counters): every
/// counter of kChannelCounters, then the policy in force, then placement's
/// setting and decision (docs/PLACEMENT.md#what-it-shows). `value` is a
/// std::uint64_t, long long or int (a number), a bool, or a
/// std::string_view (text); `name` a std::string_view of static text.
template <class Visit>
void for_each_stats_field(const ChannelStats& s, Visit&& visit) {
  for (const ChannelCounter& c : kChannelCounters) visit(c.name, s.*c.member);
  visit(std::string_view("budget_us"), static_cast<long long>(s.budget.count()));
  visit(std::string_view("adaptive"), s.adaptive);
  visit(std::string_view("spinning"), s.spinning);
  visit(std::string_view("budget_reason"), std::string_view(s.budget_reason));
  visit(std::string_view("transport"), s.transport);
  visit(std::string_view("transport_reason"), std::string_view(s.transport_reason));
  visit(std::string_view("placement"), std::string_view(s.placement));
  visit(std::string_view("placement_setting_reason"), std::string_view(s.placement_setting_reason));
  visit(std::string_view("placement_mode"), s.placement_mode);
  visit(std::string_view("placement_decision"), s.placement_decision);
  visit(std::string_view("free_cycle_ns"), s.free_cycle_ns);
  visit(std::string_view("occupy_cycle_ns"), s.occupy_cycle_ns);
  visit(std::string_view("block_cycle_ns"), s.block_cycle_ns);
  visit(std::string_view("cpu"), s.cpu);
  visit(std::string_view("occupier_cpu"), s.occupier_cpu);
  visit(std::string_view("occupier_avoided_cpu"), s.occupier_avoided_cpu);
  visit(std::string_view("followed_pid"), s.followed_pid);
}

}  // namespace spinrpc
