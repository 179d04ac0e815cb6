#pragma once

#include <cstdint>  // std::int64_t

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

}  // namespace spinrpc::bench
