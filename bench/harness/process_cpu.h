#pragma once

#include <cstdint>   // std::int64_t
#include <map>       // std::map
#include <optional>  // std::optional

namespace spinrpc::bench {

/// CPU time this process has used so far (all its threads, user + system),
/// in ns: clock_gettime(CLOCK_PROCESS_CPUTIME_ID). Never throws.
std::int64_t self_cpu_ns() noexcept;

/// CPU time another live process has used so far, in ns: the sum over its
/// threads of the first field of /proc/PID/task/TID/schedstat (time on CPU,
/// ns, not rounded to clock ticks like /proc/PID/stat). Summing the threads
/// makes it exact for a multi-threaded peer such as tsgo (Go runtime), as
/// long as no thread exits between two readings: an exited thread's time
/// leaves the sum. Returns -1 if the process is gone or the kernel has no
/// schedstat (CONFIG_SCHED_INFO). Never throws.
std::int64_t process_cpu_ns(int pid) noexcept;

/// How many times each thread of process `pid` has been put on a CPU so
/// far, by tid: the third field of /proc/PID/task/TID/schedstat. A thread
/// that sleeps in a blocking call (epoll_wait, a signal wait) does not move
/// it; every wake-up does. std::nullopt if the process is gone or the kernel
/// has no schedstat. Never throws but std::bad_alloc.
std::optional<std::map<int, std::int64_t>> thread_runs(int pid);

/// The runs of the threads in `after` since `before` (two readings of
/// thread_runs), leaving out the thread `skip_tid` (-1: none): a thread in
/// both adds its difference, a thread born in between all its runs; a thread
/// gone by `after` is not counted.
std::int64_t thread_runs_between(const std::map<int, std::int64_t>& before,
                                 const std::map<int, std::int64_t>& after, int skip_tid) noexcept;

}  // namespace spinrpc::bench
