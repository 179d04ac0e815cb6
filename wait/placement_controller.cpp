#include "wait/placement_controller.h"

#include <algorithm>  // std::min, std::nth_element

namespace spinrpc {

PlacementController::PlacementController(Setting setting, bool may_block) noexcept
    : setting_(setting), may_block_(may_block && setting == Setting::automatic) {
  if (setting_ == Setting::automatic) probes_ = 1;
  if (setting_ == Setting::occupy) {
    kept_ = Mode::occupy;
    left_ = kMaxStayCycles;
    enter(Phase::stay, Mode::occupy);
  }
}

std::chrono::nanoseconds PlacementController::median() noexcept {
  std::array<std::int64_t, kProbeCycles> copy = samples_;
  auto* mid = copy.begin() + count_ / 2;
  std::nth_element(copy.begin(), mid, copy.begin() + count_);
  return std::chrono::nanoseconds(*mid);
}

bool PlacementController::occupying_pays() const noexcept {
  return occupy_estimate_.count() * 100 < free_estimate_.count() * kMarginPercent;
}

bool PlacementController::nothing_to_win() const noexcept {
  return setting_ == Setting::automatic && free_estimate_ > std::chrono::nanoseconds{0} &&
         free_estimate_ < kNothingToWin;
}

const char* PlacementController::mode_name(Mode mode) noexcept {
  switch (mode) {
    case Mode::occupy:
      return "occupy";
    case Mode::block:
      return "block";
    case Mode::free:
      break;
  }
  return "free";
}

std::chrono::nanoseconds PlacementController::estimate(Mode mode) const noexcept {
  switch (mode) {
    case Mode::occupy:
      return occupy_estimate_;
    case Mode::block:
      return block_estimate_;
    case Mode::free:
      break;
  }
  return free_estimate_;
}

PlacementController::Mode PlacementController::best_other_than_block() const noexcept {
  return occupying_pays() ? Mode::occupy : Mode::free;
}

PlacementController::Mode PlacementController::best() const noexcept {
  const Mode other = best_other_than_block();
  if (may_block_ && block_estimate_.count() > 0 && block_estimate_ <= estimate(other)) return Mode::block;
  return other;
}

bool PlacementController::contradicts(std::chrono::nanoseconds kept_median) const noexcept {
  // Another mode's estimate under kMarginPercent % of the kept mode's window.
  const auto beaten_by = [&](std::chrono::nanoseconds other) {
    return other.count() > 0 && other.count() * 100 < kept_median.count() * kMarginPercent;
  };
  const bool block_wins = may_block_ && beaten_by(block_estimate_);
  switch (kept_) {
    case Mode::free:
      // Kept because the peer answered fast: contradicted once it no longer does.
      if (nothing_to_win()) return kept_median >= kNothingToWin;
      return beaten_by(occupy_estimate_) || block_wins;
    case Mode::occupy:
      return !(kept_median.count() * 100 < free_estimate_.count() * kMarginPercent) || block_wins;
    case Mode::block:
      // The peer no longer lands on our CPU (a blocked wake-up went to the
      // other one): free or occupying would now win by the margin.
      return beaten_by(estimate(best_other_than_block()));
  }
  return false;
}

PlacementController::Phase PlacementController::next_probe(Phase done) const noexcept {
  const auto wanted = [&](Phase p) {
    switch (p) {
      case Phase::probe_free: return kept_ != Mode::free;
      case Phase::probe_occupy: return kept_ != Mode::occupy;
      case Phase::probe_block: return may_block_ && kept_ != Mode::block;
      default: return false;
    }
  };
  for (const Phase p : {Phase::probe_free, Phase::probe_occupy, Phase::probe_block}) {
    if (static_cast<int>(p) > static_cast<int>(done) && wanted(p)) return p;
  }
  return Phase::stay;
}

void PlacementController::probe_next(Phase done) noexcept {
  switch (next_probe(done)) {
    case Phase::probe_occupy:
      enter(Phase::probe_occupy, Mode::occupy);
      return;
    case Phase::probe_block:
      enter(Phase::probe_block, Mode::block);
      return;
    default:
      keep(best());
      return;
  }
}

void PlacementController::enter(Phase phase, Mode mode) noexcept {
  if (mode != mode_) settle_ = kSettleCycles;
  phase_ = phase;
  mode_ = mode;
  count_ = 0;
  next_ = 0;
}

void PlacementController::keep(Mode chosen) noexcept {
  if (reprobe_ || chosen != Mode::free) {
    // A mind change resets the stay; a confirmation doubles it (fewer probes).
    if (chosen != kept_) {
      ++changes_;
      stay_ = kStayCycles;
    } else {
      stay_ = std::min(stay_ * 2, kMaxStayCycles);
    }
  }
  kept_ = chosen;
  reprobe_ = false;
  left_ = stay_;
  enter(Phase::stay, chosen);
}

PlacementController::Mode PlacementController::after_cycle(std::chrono::nanoseconds cycle) noexcept {
  if (setting_ == Setting::off) return mode_;
  const bool counted = cycle < kIgnoreAbove && settle_ == 0;
  if (settle_ > 0) --settle_;
  // A calm stretch occupying forgives earlier contention.
  if (mode_ == Mode::occupy && calm_ < kStayCycles && ++calm_ == kStayCycles) backoff_ = kFirstBackoffCycles;
  if (counted) {
    samples_[next_] = cycle.count();
    next_ = (next_ + 1) % kProbeCycles;
    count_ = std::min(count_ + 1, kProbeCycles);
  }
  switch (phase_) {
    case Phase::probe_free:
      if (count_ < kProbeCycles) break;
      free_estimate_ = median();
      if (!reprobe_ && nothing_to_win()) {  // a spinning peer: keep free, unprobed
        reprobe_ = true;  // a confirmation: the stay doubles from here on
        keep(Mode::free);
        break;
      }
      probe_next(Phase::probe_free);
      break;
    case Phase::probe_occupy:
      if (count_ < kProbeCycles) break;
      occupy_estimate_ = median();
      probe_next(Phase::probe_occupy);
      break;
    case Phase::probe_block:
      if (count_ < kProbeCycles) break;
      block_estimate_ = median();
      probe_next(Phase::probe_block);
      break;
    case Phase::stay:
    case Phase::backoff:
      // A stay ends early when a full window contradicts the choice: the
      // peer moved (free was co-located by chance, then the peer fled to an
      // idle CPU), so waiting out a stay of up to kMaxStayCycles would pay
      // the slow mode all along.
      if (phase_ == Phase::stay && setting_ == Setting::automatic && counted && next_ == 0 &&
          count_ == kProbeCycles && contradicts(median())) {
        left_ = 1;
      }
      if (left_ > 0 && --left_ > 0) break;
      if (setting_ == Setting::occupy) {  // no probing: occupy again
        if (count_ == kProbeCycles) (kept_ == Mode::free ? free_estimate_ : occupy_estimate_) = median();
        kept_ = Mode::occupy;
        left_ = kMaxStayCycles;
        enter(Phase::stay, Mode::occupy);
        break;
      }
      // The stretch is over: its last window is the kept mode's estimate
      // (unless too few cycles counted), then the other modes are probed.
      if (count_ == kProbeCycles) {
        (kept_ == Mode::free ? free_estimate_ : kept_ == Mode::occupy ? occupy_estimate_ : block_estimate_) = median();
      }
      reprobe_ = true;
      if (kept_ == Mode::free && nothing_to_win()) {
        // Still answered fast: occupying has nothing to win, no probe. A
        // spinning peer made the occupier let go at its first try, and the
        // backoff and the blocks after it cost the pair more than the probe
        // could ever show (docs/PLACEMENT.md#nothing-to-win).
        keep(Mode::free);
        break;
      }
      ++probes_;
      if (kept_ != Mode::free) {
        enter(Phase::probe_free, Mode::free);
      } else {
        probe_next(Phase::probe_free);
      }
      break;
  }
  return mode_;
}

PlacementController::Mode PlacementController::after_contention() noexcept {
  if (setting_ == Setting::off || mode_ != Mode::occupy) return mode_;
  ++contentions_;
  calm_ = 0;
  if (kept_ == Mode::occupy) ++changes_;
  kept_ = Mode::free;
  reprobe_ = false;
  stay_ = kStayCycles;
  left_ = backoff_;
  backoff_ = std::min(backoff_ * 2, kMaxStayCycles);
  enter(Phase::backoff, Mode::free);
  return mode_;
}

bool PlacementController::after_occupied_cycle(bool shared) noexcept {
  if (since_move_ != ~0u) ++since_move_;
  if (!shared) {
    shared_run_ = 0;
    if (calm_shared_ < kStayCycles && ++calm_shared_ == kStayCycles) move_gap_ = kFirstMoveGap;
    return false;
  }
  if (++shared_run_ < 2) return false;
  // A pair: someone ran on the occupier's CPU two cycles in a row.
  shared_run_ = 0;
  calm_shared_ = 0;
  if (since_move_ < move_gap_) return false;
  // The last move did not hold: whoever runs there is not our peer, or it
  // does not follow. Move less often.
  if (since_move_ < kStayCycles) move_gap_ = std::min(move_gap_ * 2, kMaxStayCycles);
  since_move_ = 0;
  ++moves_;
  return true;
}

const char* PlacementController::reason() const noexcept {
  if (setting_ == Setting::off) return "off";
  if (setting_ == Setting::occupy && phase_ == Phase::stay) return "occupy forced by the setting";
  switch (phase_) {
    case Phase::probe_free:
    case Phase::probe_occupy:
    case Phase::probe_block:
      return "probing";
    case Phase::backoff:
      return "backoff after contention";
    case Phase::stay:
      break;
  }
  if (kept_ == Mode::occupy) return "occupying pays";
  if (kept_ == Mode::block) return "blocking pays";
  return nothing_to_win() ? "nothing to win: the peer answers fast" : "occupying does not pay";
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

}  // namespace spinrpc
