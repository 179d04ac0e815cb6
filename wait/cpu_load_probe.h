#pragma once

#include <string_view>  // std::string_view

#include "descriptor/unique_fd.h"

namespace spinrpc {

/// Whether every runnable task has a CPU right now, from the system's count
/// of runnable tasks (the fourth field of /proc/loadavg, "running/total",
/// which counts the calling thread). The adaptive rule asks this before it
/// resumes spinning after contention
/// (docs/SPIN-NOTES.md#resuming-needs-a-spare-cpu).
///
/// The bound is the online CPUs, not one fewer: a peer that spins is a
/// runnable task that must keep its CPU (the counts that settle it are in
/// docs/SPIN-NOTES.md#resuming-needs-a-spare-cpu). One sample is a pread(2)
/// of the open file, so it is taken only when the rule asks.
///
/// The file is opened at the first sample, not at start-up (spawn time
/// counts, docs/NODE.md). No /proc, or a line that does not parse: every
/// sample says a CPU is spare, which is the rule without this check. Never
/// throws.
///
/// A thread named with discount() is not counted while it runs: the peer's
/// occupier, which yields its CPU at every try to any task that wants it
/// and lets go when one does. Counted, it keeps a suspended shim from ever
/// resuming against a server that occupies because the shim blocked
/// (docs/PLACEMENT.md#resuming-beside-the-peers-occupier).
class CpuLoadProbe {
 public:
  CpuLoadProbe() = default;

  /// One sample: true when no more tasks are runnable than CPUs are online.
  bool spare_cpu() noexcept;

  /// From now on, thread `tid` of process `pid` is not counted while it
  /// runs (its /proc/PID/task/TID/stat says state R). Opened at the next
  /// sample; a thread that is gone or unreadable is counted as usual.
  void discount(int pid, int tid) noexcept;

  /// Whether a /proc/PID/task/TID/stat line says the thread is running
  /// (state R); false when it does not parse. Public for the tests.
  static bool running_in_stat(std::string_view stat_line) noexcept;

  /// The runnable count in a /proc/loadavg line ("0.61 1.49 1.66 3/345 9043"
  /// → 3); -1 when the line does not have one. Public for the tests.
  static long runnable_in(std::string_view loadavg_line) noexcept;

 private:
  enum class State { unopened, open, unavailable };
  State state_ = State::unopened;
  UniqueFd fd_;
  long online_cpus_ = 0;
  int discount_pid_ = 0;    // discount(): the thread whose runs are not counted
  int discount_tid_ = 0;
  UniqueFd discount_fd_;    // its stat file, opened at the first sample after discount()
  // Whether the discounted thread runs now (false when there is none or it
  // cannot be read).
  bool discounted_running() noexcept;
};

}  // namespace spinrpc
