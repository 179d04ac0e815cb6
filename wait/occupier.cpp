#include "wait/occupier.h"

#include <pthread.h>  // pthread_setaffinity_np
#include <sched.h>    // sched_getaffinity, sched_getcpu, sched_yield, CPU_*

#include <charconv>      // std::from_chars
#include <filesystem>    // std::filesystem::directory_iterator
#include <string>        // std::string
#include <system_error>  // std::system_error, std::error_code

#include "wait/contended_yield.h"
#include "descriptor/descriptor_table.h"
#include "descriptor/syscall.h"


namespace spinrpc {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace

Occupier::Occupier(std::chrono::microseconds hold) noexcept : hold_(hold) {
  CPU_ZERO(&allowed_);
  if (sched_getaffinity(0, sizeof allowed_, &allowed_) != 0 || CPU_COUNT(&allowed_) < 2) failed_ = true;
}

bool Occupier::start() noexcept {
  if (failed_ || thread_.joinable()) return !failed_;
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    failed_ = true;
    return false;
  }
  pthread_setname_np(thread_.native_handle(), kThreadName);
  return true;
}

Occupier::~Occupier() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  pokes_.fetch_add(1);
  pokes_.notify_one();
  thread_.join();
}

bool Occupier::poke(int avoid_cpu) noexcept {
  if (!start()) return false;
  if (avoid_cpu != pinned_away_) {
    // Pin the thread here, before waking it, not in run(): the kernel places
    // its wake-up within the new set, so the CPU it must keep busy has a
    // wake-up pending when the peer's is placed right after. Re-pinning
    // from run() let the first wake-up land on our CPU, the peer on the
    // other one, and the occupier then found the peer there and reported
    // contention. Costs one system call, only when our CPU changed.
    cpu_set_t set = allowed_;
    if (avoid_cpu >= 0 && avoid_cpu < CPU_SETSIZE) CPU_CLR(avoid_cpu, &set);
    if (CPU_COUNT(&set) > 0) pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set);
    pinned_away_ = avoid_cpu;
    pin_.store(avoid_cpu, std::memory_order_relaxed);
  }
  until_ns_.store(now_ns() + std::chrono::nanoseconds(hold_).count(), std::memory_order_relaxed);
  // Dekker with run(): we bump pokes_ then read sleeping_; it sets
  // sleeping_ then re-reads pokes_. One of us sees the other (seq_cst).
  pokes_.fetch_add(1);
  if (sleeping_.load()) pokes_.notify_one();
  return true;
}

void Occupier::run() noexcept {
  // This thread reads and writes no fd; sharing the table would cost the
  // reader's every read(2) and write(2) a reference count
  // (descriptor/descriptor_table.h).
  leave_descriptor_table();
  std::uint32_t seen = pokes_.load();
  while (!stop_.load(std::memory_order_relaxed)) {
    // Occupy until `hold` after the last poke: yield between checks, so any
    // runnable task on this CPU gets it at once.
    std::int64_t t = now_ns();
    std::uint32_t epoch = seen;  // the poke (cycle) the turns below belong to
    unsigned turns = 0;          // short turns of others within that cycle
    // Our context switches, read again after each slow yield: a slow yield
    // without one ran no other task here (the host or interrupts had the
    // time) and is neither a turn nor contention, as in the spin loop
    // (docs/SPIN-NOTES.md#a-late-yield-is-contention-only-if-another-task-ran).
    ContextSwitchWatch switches;
    switches.mark();
    while (t < until_ns_.load(std::memory_order_relaxed) && !stop_.load(std::memory_order_relaxed)) {
      ::sched_yield();
      const std::int64_t after = now_ns();
      if (const std::uint32_t p = pokes_.load(std::memory_order_relaxed); p != epoch) {
        epoch = p;
        turns = 0;
      }
      bool turn = after - t > std::chrono::nanoseconds(kSharedYield).count();
      if (turn && !switches.switched()) {
        turn = false;
        stolen_.fetch_add(1, std::memory_order_relaxed);
      }
      if (turn && (after - t > std::chrono::nanoseconds(kContendedSlice).count() || ++turns > kTurnsPerCycle)) {
        // Let go: another task wanted this CPU. The reader sees the count and
        // stops poking for a while (PlacementController::after_contention).
        contentions_.fetch_add(1, std::memory_order_relaxed);
        until_ns_.store(0, std::memory_order_relaxed);
        break;
      }
      if (turn) shared_.fetch_add(1, std::memory_order_relaxed);
      // Where it runs and for how long: kept current (relaxed stores;
      // sched_getcpu is a vDSO call) for the stats.
      // One snapshot, and only a consistent one: right after a re-pin the
      // thread may still be on the CPU it now avoids (or the pin not yet
      // published); such a sample is skipped.
      const int avoided = pin_.load(std::memory_order_relaxed);
      const int cpu = sched_getcpu();
      if (cpu != avoided && avoided == pin_.load(std::memory_order_relaxed)) {
        where_.store((static_cast<std::uint64_t>(static_cast<std::uint32_t>(cpu)) << 32) |
                         static_cast<std::uint32_t>(avoided),
                     std::memory_order_relaxed);
      }
      occupied_ns_.fetch_add(static_cast<std::uint64_t>(after - t), std::memory_order_relaxed);
      t = after;
    }
    // Sleep until the next poke.
    sleeping_.store(true);
    if (pokes_.load() == seen) pokes_.wait(seen);
    sleeping_.store(false);
    seen = pokes_.load();
  }
}

int peer_occupier_tid(int pid) noexcept {
  if (pid <= 0) return 0;
  try {
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (std::filesystem::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
      const std::optional<std::string> comm = read_small_file(it->path() / "comm", 64);
      if (!comm || comm->substr(0, comm->find('\n')) != Occupier::kThreadName) continue;
      const std::string tid = it->path().filename().string();
      int value = 0;
      const auto [end_of_tid, parsed] = std::from_chars(tid.data(), tid.data() + tid.size(), value);
      if (parsed == std::errc() && end_of_tid == tid.data() + tid.size() && value > 0) return value;
    }
  } catch (...) {  // allocation: cannot tell
  }
  return 0;
}

bool move_to_cpu(int cpu) noexcept {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t saved;
  CPU_ZERO(&saved);
  if (sched_getaffinity(0, sizeof saved, &saved) != 0 || !CPU_ISSET(cpu, &saved)) return false;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return false;
  sched_setaffinity(0, sizeof saved, &saved);
  return true;
}

AwayFromCpu::AwayFromCpu(int cpu) noexcept {
  CPU_ZERO(&saved_);
  if (cpu < 0 || cpu >= CPU_SETSIZE) return;
  if (sched_getaffinity(0, sizeof saved_, &saved_) != 0 || !CPU_ISSET(cpu, &saved_) || CPU_COUNT(&saved_) < 2) return;
  narrowed_ = saved_;
  CPU_CLR(cpu, &narrowed_);
  active_ = sched_setaffinity(0, sizeof narrowed_, &narrowed_) == 0;
}

AwayFromCpu::~AwayFromCpu() {
  if (!active_) return;
  // A mask someone set meanwhile (the user's tool, from another thread or
  // with taskset -p) is theirs: it stays.
  cpu_set_t now;
  CPU_ZERO(&now);
  if (sched_getaffinity(0, sizeof now, &now) != 0 || !CPU_EQUAL(&now, &narrowed_)) return;
  sched_setaffinity(0, sizeof saved_, &saved_);
}

}  // namespace spinrpc
