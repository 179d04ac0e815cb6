#include "wait/spin_reader.h"

#include <sched.h>   // ::sched_yield, ::sched_getcpu

#include <optional>  // std::optional
#include <string>   // std::string
#include <utility>  // std::move

#include "wait/contended_yield.h"
#include "descriptor/peer_process.h"

namespace spinrpc {
SpinReader::SpinReader(std::unique_ptr<InputStream> in, SpinPolicy policy)
    : in_(std::move(in)),
      tries_per_clock_read_(tries_per_clock_read(*in_)),
      policy_(std::move(policy)),
      controller_(policy_.adaptive),
      // The budget is what occupying may spend: none, no placement. A
      // client that started its server may also block for it (see
      // PlacementController).
      placement_(policy_.budget.count() > 0 ? policy_.placement : PlacementController::Setting::off,
                 policy_.peer_pid > 0) {
  stats_.budget = policy_.budget;
  stats_.adaptive = policy_.adaptive;
  stats_.spinning = policy_.budget.count() > 0;
  stats_.budget_reason = policy_.reason;
  const bool placing = policy_.budget.count() > 0 && policy_.placement != PlacementController::Setting::off;
  if (placing && policy_.follow_peer) follow_ = Follow::unresolved;
  if (placing) occupier_ = std::make_unique<Occupier>(policy_.budget);
  stats_.placement = std::string(placement_name(placing ? policy_.placement : PlacementController::Setting::off));
  stats_.placement_setting_reason = policy_.budget.count() > 0 ? policy_.placement_reason : "budget 0: nothing to spend";
  update_placement_stats();
}

unsigned SpinReader::tries_per_clock_read(const InputStream& in) noexcept {
  return in.traits().tries == StreamTraits::Tries::memory_load ? kMemoryTriesPerClockRead : 1;
}

std::unique_ptr<InputStream> SpinReader::replace_input(std::unique_ptr<InputStream> in) noexcept {
  in_.swap(in);
  if (in_) tries_per_clock_read_ = tries_per_clock_read(*in_);
  // Placement applies to a stream whose peer the scheduler wakes (a system
  // call); a ring's spinning peer sees a store.
  if (in_ && in_->traits().tries != StreamTraits::Tries::system_call && occupier_) {
    // No wake-up to place: the occupier's thread and each write's clock
    // read would only cost (docs/SHARED-MEMORY.md, "Wake protocol").
    occupier_.reset();
    wrote_at_.reset();
    cycle_wait_ = CycleWait::spin;
    follow_ = Follow::off;
    stats_.placement = "off";
    stats_.placement_mode = "free";
    stats_.placement_setting_reason = "shared memory: a spinning peer sees a store, no wake-up to place";
  }
  return in;
}

void SpinReader::before_write() noexcept {
  if (!occupier_) return;
  wrote_at_ = Clock::now();
  // Suspended by the adaptive rule (sparse traffic), the budget is spent
  // nowhere: no occupying either.
  if (placement_.mode() == PlacementController::Mode::occupy && controller_.spinning() && peer_known()) {
    const int cpu = sched_getcpu();
    stats_.cpu = cpu;
    if (occupier_->poke(cpu)) {
      cycle_wait_ = CycleWait::occupy;
    } else {
      // Fewer than 2 CPUs allowed, or no thread: placement cannot work
      // (and no later cycle ends through end_cycle to reset cycle_wait_).
      occupier_.reset();
      cycle_wait_ = CycleWait::spin;
      stats_.placement_setting_reason = "cannot occupy: fewer than 2 CPUs allowed or no thread";
    }
  } else if (placement_.mode() == PlacementController::Mode::block && controller_.spinning()) {
    // Block for this cycle: the peer's thread, woken by what we write now,
    // is placed on the CPU we are about to leave (PlacementController).
    cycle_wait_ = CycleWait::block;
  } else if (occupied_last_ || unplace_next_) {
    // Block once in this cycle (counted in occupied_waits), so that the
    // wake-up that ends it is placed by the kernel: two spinners on one CPU
    // (left there by occupying, or found sharing by note_shared_cpu) never
    // block and are never placed apart again
    // (docs/PLACEMENT.md#two-spinners-on-one-cpu). For a peer that said it
    // spins, the read runs off this CPU (read_some): the spinning peer's
    // wake-up would bring it back. For any other it does not: the short
    // turns on our CPU may be a blocking peer's, which is where it should
    // be.
    cycle_wait_ = policy_.peer_spins ? CycleWait::unshare : CycleWait::unplace;
  }
  occupied_last_ = false;
  unplace_next_ = false;
}

void SpinReader::end_cycle(Clock::time_point now) noexcept {
  const Clock::duration cycle = now - *wrote_at_;
  wrote_at_.reset();
  if (!peer_checked_ && ++cycles_ended_ >= 2) {
    // Once, after the second reply: a peer we started that places too
    // (spinrpc-server behind the shim) is left to do it alone
    // (docs/PLACEMENT.md#one-placer-per-pair). Its occupier thread starts
    // at its reader's first idle moment, at the latest before it reads our
    // second message. Here, not at start-up, so that the allocations of
    // /proc's walk fall in the first requests, not in steady state; until
    // then this side does not occupy (peer_known()).
    peer_checked_ = true;
    if (const int tid = peer_occupier_tid(policy_.peer_pid); tid > 0) {
      occupier_.reset();
      spare_cpu_.discount(policy_.peer_pid, tid);
      cycle_wait_ = CycleWait::spin;
      stats_.placement = "off";
      stats_.placement_mode = "free";
      stats_.placement_decision = "left to the peer";
      stats_.placement_setting_reason = "the peer (pid " + std::to_string(policy_.peer_pid) + ") places: left to it";
      return;
    }
  }
  if (const std::uint64_t c = occupier_->contentions(); c != contentions_seen_) {
    contentions_seen_ = c;
    placement_.after_contention();
  } else if (cycle_wait_ == CycleWait::occupy && peer_shares_occupier()) {
    // Not fed: the cycle measured a split that the move just ended.
  } else if (placement_.mode() == PlacementController::Mode::free || cycle_wait_ == CycleWait::occupy ||
             cycle_wait_ == CycleWait::block) {
    // A free cycle counts whether or not our own wait spun (both leave the
    // peer's wake-up to the scheduler); an occupy or block cycle only if it
    // did occupy or block (not when the adaptive rule held it back).
    placement_.after_cycle(cycle);
  }
  occupied_last_ = cycle_wait_ == CycleWait::occupy;
  cycle_wait_ = CycleWait::spin;
}

bool SpinReader::peer_shares_occupier() noexcept {
  // Whether a short turn of another task ran on the occupier's CPU during
  // this cycle; the rule (two in a row, then a gap that grows while moves do
  // not hold) is PlacementController::after_occupied_cycle.
  const std::uint64_t shared = occupier_->shared();
  const bool turn = shared != shared_seen_;
  shared_seen_ = shared;
  if (!placement_.after_occupied_cycle(turn)) return false;
  const int there = occupier_->cpu();
  if (there < 0 || there == sched_getcpu() || !move_to_cpu(there)) return false;
  ++stats_.placement_moves;
  return true;
}

void SpinReader::update_placement_stats() const noexcept {
  stats_.placement_mode = PlacementController::mode_name(placement_.mode());
  stats_.placement_decision = placement_.reason();
  stats_.free_cycle_ns = static_cast<std::uint64_t>(placement_.free_estimate().count());
  stats_.occupy_cycle_ns = static_cast<std::uint64_t>(placement_.occupy_estimate().count());
  stats_.block_cycle_ns = static_cast<std::uint64_t>(placement_.block_estimate().count());
  stats_.placement_probes = placement_.probes();
  stats_.placement_changes = placement_.changes();
  if (occupier_) {
    stats_.occupier_contentions = occupier_->contentions();
    stats_.occupier_stolen_yields = occupier_->stolen();
    const auto [cpu, avoided] = occupier_->where();
    stats_.occupier_cpu = cpu;
    stats_.occupier_avoided_cpu = avoided;
    stats_.occupied_time_us = occupier_->occupied_us();
  }
}

void SpinReader::start_occupier_when_idle() {
  // The first wait of a server whose client wrote before the server was
  // running finds its first request waiting: that is answered first, and
  // the thread is created in the next wait, while the client reads the
  // reply (docs/NODE.md, "Spawn to first reply").
  if (occupier_start_ == OccupierStart::first_wait) {
    occupier_start_ = OccupierStart::next_wait;
    if (in_->readable_now()) return;
  }
  occupier_start_ = OccupierStart::started;
  occupier_->start();
}

std::size_t SpinReader::read_some(std::byte* buf, std::size_t len, WaitFor wait_for) {
  if (occupier_start_ != OccupierStart::started && occupier_) start_occupier_when_idle();
  ++stats_.waits;
  // Branch: budget 0, a plain blocking read; no clock, no extra syscall.
  if (policy_.budget.count() == 0) {
    ++stats_.plain_waits;
    if (trace_) [[unlikely]] return traced_blocking_read(buf, len);
    return blocking_read(buf, len);
  }
  // Branch: spinning, on a stream whose tries are loads from memory (a ring):
  // its first tries come before any clock read, so that a reply already on
  // its way costs none. A hit here is a wait of no measurable length.
  const unsigned tries_per_clock_read = tries_per_clock_read_;
  if (tries_per_clock_read > 1 && controller_.spinning() && cycle_wait_ == CycleWait::spin && !cycle_open()) {
    for (unsigned i = 0; i < tries_per_clock_read; ++i) {
      if (const long n = in_->try_read(buf, len); n >= 0) {
        ++stats_.spin_hits;
        note_shared_cpu(false);
        const Clock::time_point now{};
        end_wait(now, now, trace::WaitEnd::spin, {}, i + 1);
        return static_cast<std::size_t>(n);
      }
    }
  }
  const Clock::time_point start = Clock::now();
  // Branch: suspended by the adaptive rule: a plain blocking read.
  if (!controller_.spinning()) {
    if (follow_ == Follow::unresolved || follow_ == Follow::following) {
      if (++suspended_waits_ % kFollowEvery == 0) follow_peer();
    }
    const std::size_t n = blocking_read(buf, len);
    ++stats_.blocked_while_suspended;
    end_wait(start, Clock::now(), trace::WaitEnd::suspended);
    return n;
  }
  // Branch: occupying (docs/PLACEMENT.md#what-spinrpc-does-occupy-where-it-pays).
  // The peer blocks and its wake-up is being kept on this CPU; it needs this
  // CPU to send the next message, so a plain blocking read hands it over at
  // once. Spinning here would only yield to it, and its turn on our CPU
  // (longer than kContendedYield for a Node client) would be taken for
  // contention and suspend spinning, and occupying with it.
  if (cycle_wait_ != CycleWait::spin) {
    // Leaving a CPU shared with a spinning peer: off this CPU for the one
    // blocked read, or the wake-up comes back to it (AwayFromCpu).
    std::optional<AwayFromCpu> away;
    if (cycle_wait_ == CycleWait::unshare) away.emplace(sched_getcpu());
    const std::size_t n = blocking_read(buf, len);
    ++stats_.occupied_waits;
    end_wait(start, Clock::now(), trace::WaitEnd::placed);
    return n;
  }
  // Branch: spinning. A vDSO clock read costs a small fraction of a try on
  // a descriptor, so the deadline is checked on every try; a ring makes
  // tries_per_clock_read tries per read.
  const Clock::time_point deadline = start + policy_.budget;
  // Yields from the first try when the last spinning wait found our CPU
  // shared (a yield came back late): there the peer, or another pair, needs
  // this CPU now, and kYieldAfter of tries would only keep it waiting
  // (docs/SPIN-NOTES.md#yield-after-a-few-microseconds).
  const Clock::time_point yield_from = shared_waits_ > 0 ? start : start + kYieldAfter;
  bool shared = false;  // a yield let another task's short turn run
  // Our context switches, marked before the first yield (once per wait that
  // gets as far as yielding, off the path of a reply that comes within
  // kYieldAfter) and looked at after each slow one.
  ContextSwitchWatch switches;
  // When the try in progress began (the clock read after the one before).
  // A hit that ends no placement cycle is timed by it, not by a clock read
  // of its own: one clock read less between the bytes' arrival and our
  // reply, for a time early by at most one try, nothing to the adaptive
  // rule's 1 ms. A placement cycle keeps its exact end: its modes are
  // compared by medians a few µs apart (docs/SPIN-NOTES.md, "The reply
  // path").
  Clock::time_point tried_at = start;
  unsigned tries = 0;          // for the trace
  bool contended = false;      // a late yield ended the spin
  for (;;) {
    long n = in_->try_read(buf, len);
    ++tries;
    // Cheap tries (a ring in memory): a few more before the clock is read.
    for (unsigned more = tries_per_clock_read; n < 0 && --more > 0; ++tries) n = in_->try_read(buf, len);
    if (n >= 0) {
      const Clock::time_point now = cycle_open() ? Clock::now() : tried_at;
      ++stats_.spin_hits;
      add_spin_time(now - start);
      note_shared_cpu(shared);
      end_wait(start, now, trace::WaitEnd::spin, now - start, tries);
      return static_cast<std::size_t>(n);
    }
    // Branch: early in the wait, try again at once (see kYieldAfter).
    tried_at = Clock::now();
    if (tried_at < yield_from) continue;
    // Past kYieldAfter, between tries: sched_yield(2), not just a pause
    // hint. Pipe wake-ups are "sync", and the scheduler often puts client
    // and server on one CPU; a pause-only spinner would hold that CPU for
    // its whole budget while the peer that would answer waits for it.
    // Yielding hands the CPU to a runnable peer and costs one cheap system
    // call when there is none (docs/SPIN-NOTES.md).
    if (!switches.marked()) switches.mark();
    const Clock::time_point before_yield = Clock::now();
    ::sched_yield();
    const Clock::time_point after_yield = Clock::now();
    if (after_yield - before_yield > kSharedYield) {
      // A slow yield. Only one in which we were switched out let another
      // task of this system run on our CPU; without a switch the time went
      // to the hypervisor or to interrupts, and spinning goes on
      // (docs/SPIN-NOTES.md#a-late-yield-is-contention-only-if-another-task-ran).
      if (!switches.switched()) {
        ++stats_.stolen_yields;
      } else if (after_yield - before_yield > kContendedYield) {
        // Branch: the yield gave the CPU away for a while, so another task
        // wanted it: the CPU is contended, and a spinner would only keep
        // queueing behind others (with outside load, spinning pairs got
        // ~0.75 CPU against ~2 for blocking ones). Block instead, as
        // spin-off would; a blocked reader is woken with the scheduler's
        // wake-up preference.
        if (wait_for == WaitFor::message) note_contention();
        contended = true;
        break;
      } else {
        shared = true;
      }
    }
    tried_at = after_yield;
    if (after_yield >= deadline) break;
  }
  // Branch: budget spent or CPU contended; block until bytes arrive.
  note_shared_cpu(shared);
  ++stats_.spin_misses;
  const Clock::duration spun = Clock::now() - start;
  add_spin_time(spun);
  const std::size_t n = blocking_read(buf, len);
  end_wait(start, Clock::now(), contended ? trace::WaitEnd::contended : trace::WaitEnd::budget_spent, spun, tries);
  return n;
}

void SpinReader::follow_peer() noexcept {
  if (follow_ == Follow::unresolved) {
    const PeerLookup* peer = in_->traits().peer;
    stats_.followed_pid = peer != nullptr ? peer->peer_pid() : 0;
    follow_ = stats_.followed_pid > 0 ? Follow::following : Follow::none;
    if (follow_ == Follow::none) return;
  }
  // The peer blocks in read as we do; the pair's wake-ups are cheapest on
  // one CPU, where each is a switch, not an IPI that preempts the other
  // CPU's task (docs/PLACEMENT.md#following-the-peer-when-the-cpus-are-taken).
  const int cpu = last_cpu_of(stats_.followed_pid);
  if (cpu >= 0 && cpu != sched_getcpu() && move_to_cpu(cpu)) ++stats_.placement_follows;
}

void SpinReader::note_shared_cpu(bool shared) noexcept {
  // kSharedWaitsToUnplace spinning waits in a row in which another task ran
  // short turns on our CPU between our tries: most likely the peer, spinning
  // on our CPU, which placement fixes by blocking once (with placement on).
  // A second such streak soon after the first means our CPU stays shared
  // however the kernel places us: more tasks want the CPUs than there are,
  // and spinning only takes turns from them. That is contention, as a late
  // yield is (2 pairs on 2 CPUs: the servers kept spinning through short
  // turns of the other pair; docs/SPIN-NOTES.md#a-contended-cpu-ends-the-spin-and-backs-the-adaptive-rule-off).
  if (waits_since_streak_ < kWaitsForStreakToRecur) ++waits_since_streak_;
  shared_waits_ = shared ? shared_waits_ + 1 : 0;
  if (shared_waits_ < kSharedWaitsToUnplace) return;
  shared_waits_ = 0;
  const bool recurred = waits_since_streak_ < kWaitsForStreakToRecur;
  waits_since_streak_ = 0;
  if (recurred) note_contention();
  if (!occupier_) return;
  unplace_next_ = true;
  ++stats_.placement_unshares;
}

void SpinReader::note_contention() noexcept {
  ++stats_.spin_contended;
  controller_.after_contention();
}

void SpinReader::end_wait(Clock::time_point start, Clock::time_point now, trace::WaitEnd how,
                          Clock::duration spun, unsigned tries) {
  // One clock read serves the wait and the cycle it ends.
  if (cycle_open()) end_cycle(now);
  bool spin = controller_.after_wait(now - start);
  // Resuming after contention needs a spare CPU too: a sample per wait while
  // the rule asks (AdaptiveSpinController::kSpareCpuSamples).
  if (controller_.wants_spare_cpu_sample()) {
    controller_.after_spare_cpu_sample(spare_cpu_.spare_cpu());
    spin = controller_.spinning();
    stats_.resumptions_refused = controller_.resumptions_refused();
  }
  stats_.suspensions = controller_.suspensions();
  stats_.resumptions = controller_.resumptions();
  stats_.spinning = spin;
  if (trace_) [[unlikely]] trace_wait(start, now, how, spun, tries);
}

std::size_t SpinReader::traced_blocking_read(std::byte* buf, std::size_t len) {
  // The wait begins where the trace's last span ended (the read that
  // waits): one clock read, at its end.
  const Clock::time_point start = trace_->last();
  const std::size_t n = blocking_read(buf, len);
  trace_wait(start, trace_->now(), trace::WaitEnd::no_budget, {}, 1);
  return n;
}

void SpinReader::trace_wait(Clock::time_point start, Clock::time_point now, trace::WaitEnd how,
                            Clock::duration spun, unsigned tries) noexcept {
  // The wait as the trace shows it begins where the trace's last span
  // ended (the read that waits: its tries begin there, as a budget-0
  // wait's does in traced_blocking_read), not at read_some's first clock
  // read, which comes after a ring's quick tries, or not at all when one of
  // them hits (then the trace reads the clock for the end). Without this a
  // spin that hits within its first tries shows as no wait at all. A hit's
  // end stays read_some's (tried_at: early by at most one batch of tries,
  // the rest of which the read around it shows): another clock read here
  // would cost the trace a clock read on every wait (docs/TRACE-NOTES.md has the cost).
  if (start == Clock::time_point{}) start = now = Clock::now();
  const Clock::time_point from = trace_->last();
  if (from != Clock::time_point{} && from < start) {
    if (how == trace::WaitEnd::budget_spent || how == trace::WaitEnd::contended) spun += start - from;
    start = from;
  }
  if (how == trace::WaitEnd::spin) spun = now - start;
  trace_->note(now);
  trace_->span(trace::Kind::wait, static_cast<std::uint8_t>(how), start, now,
               static_cast<std::uint64_t>(spun.count()), tries);
  // The decisions this wait took (end_wait, end_cycle, note_shared_cpu),
  // each an instant at its end.
  const auto changed = [&](std::uint64_t& seen, std::uint64_t now_count, std::string_view what) {
    if (now_count == seen) return;
    seen = now_count;
    trace_->instant(what, now, now_count);
  };
  changed(traced_.suspensions, controller_.suspensions(), "adaptive: spinning suspended");
  changed(traced_.resumptions, controller_.resumptions(), "adaptive: spinning resumed");
  changed(traced_.contentions, stats_.spin_contended, "CPU contended: spin ended");
  changed(traced_.moves, stats_.placement_moves, "placement: moved to the occupier's CPU");
  changed(traced_.follows, stats_.placement_follows, "placement: moved to the peer's CPU");
  changed(traced_.unshares, stats_.placement_unshares, "placement: block once to unshare a CPU");
  if (placement_.changes() != traced_.placement_changes) {
    traced_.placement_changes = placement_.changes();
    char what[48] = "placement: ";
    const std::string_view mode = PlacementController::mode_name(placement_.mode());
    mode.copy(what + 11, std::min(mode.size(), sizeof what - 12));
    trace_->instant(what, now, traced_.placement_changes);
  }
}

void SpinReader::add_spin_time(Clock::duration spun) noexcept {
  spun_ += spun;
  stats_.spin_time_us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(spun_).count());
}

}  // namespace spinrpc
