#include "channel/occupier.h"

#include <pthread.h>  // pthread_setaffinity_np
#include <sched.h>    // sched_getaffinity, sched_getcpu, sched_yield, CPU_*

#include <system_error>  // std::system_error

#include "channel/contended_yield.h"

namespace spinrpc {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace

Occupier::Occupier(std::chrono::microseconds hold) noexcept : hold_(hold) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) {
    failed_ = true;
    return;
  }
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    failed_ = true;
  }
}

Occupier::~Occupier() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  pokes_.fetch_add(1);
  pokes_.notify_one();
  thread_.join();
}

bool Occupier::poke(int avoid_cpu) noexcept {
  if (failed_) return false;
  avoid_cpu_.store(avoid_cpu, std::memory_order_relaxed);
  until_ns_.store(now_ns() + std::chrono::nanoseconds(hold_).count(), std::memory_order_relaxed);
  // Dekker with run(): we bump pokes_ then read sleeping_; it sets
  // sleeping_ then re-reads pokes_. One of us sees the other (seq_cst).
  pokes_.fetch_add(1);
  if (sleeping_.load()) pokes_.notify_one();
  return true;
}

void Occupier::run() noexcept {
  // Our own affinity mask becomes the "all CPUs but the caller's" set, so
  // remember the full set we started with.
  cpu_set_t full;
  CPU_ZERO(&full);
  sched_getaffinity(0, sizeof full, &full);
  int pinned_away = -2;
  std::uint32_t seen = pokes_.load();
  while (!stop_.load(std::memory_order_relaxed)) {
    const int avoid = avoid_cpu_.load(std::memory_order_relaxed);
    if (avoid != pinned_away) {
      cpu_set_t set = full;
      if (avoid >= 0 && avoid < CPU_SETSIZE) CPU_CLR(avoid, &set);
      if (CPU_COUNT(&set) > 0) pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      pinned_away = avoid;
    }
    // Occupy until `hold` after the last poke: yield between checks, so any
    // runnable task on this CPU gets it at once.
    std::int64_t t = now_ns();
    bool contended = false;
    while (t < until_ns_.load(std::memory_order_relaxed) && !stop_.load(std::memory_order_relaxed)) {
      if (avoid_cpu_.load(std::memory_order_relaxed) != pinned_away) break;  // re-pin first
      ::sched_yield();
      const std::int64_t after = now_ns();
      if (after - t > std::chrono::nanoseconds(kContendedYield).count()) {
        contended = true;
        break;
      }
      // Where it runs, away from which CPU, and for how long: kept current
      // (relaxed stores; sched_getcpu is a vDSO call) for the stats.
      cpu_.store(sched_getcpu(), std::memory_order_relaxed);
      avoided_.store(pinned_away, std::memory_order_relaxed);
      occupied_ns_.fetch_add(static_cast<std::uint64_t>(after - t), std::memory_order_relaxed);
      t = after;
    }
    if (contended) {
      // Let go: another task wants this CPU. The reader sees the count and
      // stops poking for a while (PlacementController::after_contention).
      contentions_.fetch_add(1, std::memory_order_relaxed);
      until_ns_.store(0, std::memory_order_relaxed);
    } else if (t < until_ns_.load(std::memory_order_relaxed)) {
      continue;  // re-pin and go on
    }
    // Sleep until the next poke.
    sleeping_.store(true);
    if (pokes_.load() == seen) pokes_.wait(seen);
    sleeping_.store(false);
    seen = pokes_.load();
  }
}

}  // namespace spinrpc
