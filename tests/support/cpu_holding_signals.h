#pragma once
// Signals that hold one thread's CPU without a context switch: a POSIX timer
// sends SIGURG to that thread every `period`, and the handler keeps the CPU
// for 40 µs (twice kContendedYield). A yield they land in comes back late
// with no other task run, as when the host deschedules our vCPU
// (docs/SPIN-NOTES.md#a-late-yield-is-contention-only-if-another-task-ran).

#include <signal.h>  // ::sigaction, SIGURG, SIGEV_THREAD_ID
#include <time.h>    // ::timer_create, ::timer_settime, ::clock_gettime

#include <chrono>     // std::chrono
#include <stdexcept>  // std::runtime_error

namespace spinrpc::test {

extern "C" inline void hold_the_cpu_40us(int) {
  timespec start{};
  ::clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) * 1'000'000'000L + (now.tv_nsec - start.tv_nsec) > 40'000) return;
  }
}

class CpuHoldingSignals {
 public:
  // Aims at thread `tid` (of this process); nothing is sent before start().
  explicit CpuHoldingSignals(pid_t tid) {
    struct sigaction action {};
    action.sa_handler = hold_the_cpu_40us;
    action.sa_flags = SA_RESTART;
    if (::sigaction(SIGURG, &action, &saved_) != 0) throw std::runtime_error("sigaction");
    sigevent event{};
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SIGURG;
    event._sigev_un._tid = tid;
    if (::timer_create(CLOCK_MONOTONIC, &event, &timer_) != 0) {
      ::sigaction(SIGURG, &saved_, nullptr);
      throw std::runtime_error("timer_create");
    }
  }
  CpuHoldingSignals(const CpuHoldingSignals&) = delete;
  CpuHoldingSignals& operator=(const CpuHoldingSignals&) = delete;
  ~CpuHoldingSignals() {
    stop();
    ::timer_delete(timer_);
    ::sigaction(SIGURG, &saved_, nullptr);
  }

  void start(std::chrono::microseconds period) {
    const long ns = static_cast<long>(std::chrono::nanoseconds(period).count());
    const itimerspec every{{0, ns}, {0, ns}};
    if (::timer_settime(timer_, 0, &every, nullptr) != 0) throw std::runtime_error("timer_settime");
  }
  void stop() noexcept {
    const itimerspec off{};
    ::timer_settime(timer_, 0, &off, nullptr);
  }

 private:
  struct sigaction saved_ {};
  timer_t timer_{};
};

}  // namespace spinrpc::test
