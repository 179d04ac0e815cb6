#pragma once

#include <array>    // std::array
#include <chrono>   // std::chrono::nanoseconds
#include <cstdint>  // std::uint64_t
#include <optional> // std::optional
#include <string_view>  // std::string_view

namespace spinrpc {

/// Where a wait spends its spin budget, decided on live traffic; pure: no
/// clock, no thread, no I/O (docs/PLACEMENT.md). Feed it every cycle (the
/// time from writing a message to the peer's next message arriving) and the
/// occupier's contention reports; it says whether the next cycle occupies.
///
/// - `free`: the budget is spent on our own descriptor only (the spin rule).
/// - `occupy`: besides that, an occupier thread keeps the other CPUs busy
///   for up to the budget after each message we write, so that the kernel
///   finds no idle CPU to send a blocked peer's wake-up to and the peer runs
///   on the CPU we are leaving (a few µs round trip) instead of on a halted
///   one (tens of µs: docs/PLACEMENT.md).
///
/// It starts by probing: kProbeCycles cycles free, then kProbeCycles
/// occupying (the first kSettleCycles after each switch are not counted:
/// the peer needs a wake-up or two to move). Occupying is kept only when its
/// median cycle is under kMarginPercent % of the free one: it costs a CPU, so it must
/// pay. Then the choice stays for a stretch of cycles, doubling each time a
/// re-probe of the other mode confirms it (kStayCycles up to kMaxStayCycles)
/// and back to kStayCycles when the mind changes. A stay ends early when a
/// window of kProbeCycles in it contradicts the choice (the kept mode's
/// median no longer on the winning side of the other mode's estimate by the
/// margin): the peer moved. Cycles of kIgnoreAbove or
/// more (the peer was working or idle, not waiting on placement) are not
/// counted. A contention report (the occupier's CPU is wanted by another
/// task) drops to free at once and forbids occupying for a stretch (backoff)
/// that starts short (kFirstBackoffCycles) and doubles with each report, up
/// to kMaxStayCycles; kStayCycles occupied cycles without a report forgive
/// it. A free median under kNothingToWin skips the occupying probe: the
/// peer answers before any wake-up could have been slow. Short first: on a
/// quiet machine a report is most often a passing kernel thread, and a
/// backoff that started at kStayCycles and was forgiven only after a whole
/// calm stay would keep occupying off most of the time
/// (docs/PLACEMENT.md#the-decision); a task that keeps wanting the CPU
/// reports at every try and reaches the cap in 10 reports.
class PlacementController {
 public:
  enum class Mode { free, occupy, block };
  /// The mode's spelling in the stats: "free", "occupy", "block".
  static const char* mode_name(Mode mode) noexcept;
  enum class Phase { probe_free, probe_occupy, probe_block, stay, backoff };

  static constexpr unsigned kProbeCycles = 32;
  static constexpr unsigned kSettleCycles = 4;
  static constexpr unsigned kStayCycles = 1024;
  static constexpr unsigned kMaxStayCycles = 65536;
  static constexpr unsigned kFirstBackoffCycles = 64;
  static constexpr unsigned kFirstMoveGap = 32;
  static constexpr int kMarginPercent = 80;
  static constexpr std::chrono::nanoseconds kIgnoreAbove{std::chrono::milliseconds(1)};
  /// A free median under this leaves occupying nothing to win: no blocked
  /// peer was woken on a halted CPU (tens of µs), the peer spins or is
  /// already on our CPU, and occupying is not probed
  /// (docs/PLACEMENT.md#nothing-to-win).
  static constexpr std::chrono::nanoseconds kNothingToWin{std::chrono::microseconds(5)};

  /// What the settings ask for (SPINRPC_PLACEMENT, --placement, the shim's
  /// option): `off` is always free; `auto` probes and keeps what pays;
  /// `occupy` always occupies (for measurements and tests) except for the
  /// backoff after contention, which it obeys too.
  enum class Setting { off, automatic, occupy };
  /// `may_block`: also probe `block` (wait in a plain blocking read, no
  /// occupier) and keep it when its cycle is no slower than the best of
  /// the others: for a client against a server it started that does not
  /// place (tsgo), whose thread is then woken on the client's CPU as the
  /// client leaves it (docs/PLACEMENT.md#block-against-a-server-that-does-not-place).
  explicit PlacementController(Setting setting, bool may_block = false) noexcept;

  /// Feeds one cycle measured under mode(); returns the mode for the next.
  Mode after_cycle(std::chrono::nanoseconds cycle) noexcept;
  /// The occupier let go because another task wanted its CPU: free at once.
  Mode after_contention() noexcept;

  /// Feeds one occupied cycle: whether another task ran a short turn on the
  /// occupier's CPU during it (Occupier::shared). Returns true when the
  /// reader should move to the occupier's CPU, where the peer is stuck
  /// (docs/PLACEMENT.md#the-peer-stuck-on-the-occupiers-cpu): two such
  /// cycles in a row, and at least the move gap since the last move. A move
  /// followed by another such pair within kStayCycles did not hold (the
  /// short turns are someone else's, e.g. a Go runtime's spinning threads):
  /// the gap doubles, from kFirstMoveGap up to kMaxStayCycles; kStayCycles
  /// occupied cycles without a pair reset it.
  bool after_occupied_cycle(bool shared) noexcept;

  Mode mode() const noexcept { return mode_; }
  Phase phase() const noexcept { return phase_; }
  /// Median cycle of the last stretch measured in each mode; 0 = not yet.
  std::chrono::nanoseconds free_estimate() const noexcept { return free_estimate_; }
  std::chrono::nanoseconds occupy_estimate() const noexcept { return occupy_estimate_; }
  std::chrono::nanoseconds block_estimate() const noexcept { return block_estimate_; }
  /// Times the kept mode changed after a probe or a contention.
  std::uint64_t changes() const noexcept { return changes_; }
  /// Times the other mode was probed (the first probe included).
  std::uint64_t probes() const noexcept { return probes_; }
  /// Times after_occupied_cycle said to move.
  std::uint64_t moves() const noexcept { return moves_; }
  /// Contention reports that made it let go.
  std::uint64_t contentions() const noexcept { return contentions_; }
  /// Why mode() is what it is: "off", "probing", "occupying pays",
  /// "occupying does not pay", "nothing to win: the peer answers fast",
  /// "blocking pays", "backoff after contention".
  const char* reason() const noexcept;

 private:
  void enter(Phase phase, Mode mode) noexcept;
  void keep(Mode chosen) noexcept;
  // The free estimate is under kNothingToWin: keep free without probing.
  bool nothing_to_win() const noexcept;
  // The probe after `done` in the order free, occupy, block, skipping the
  // kept mode (measured by the stay) and block unless may_block_; `stay`
  // when the round of probes is over.
  Phase next_probe(Phase done) const noexcept;
  // Enters the next probe, or keeps the best mode once all are measured.
  void probe_next(Phase done) noexcept;
  // The best mode from the estimates: occupy only with a clear gain (it
  // costs a CPU), block when no slower than that (it costs the least).
  Mode best() const noexcept;
  // free or occupy, whichever best() would keep were block not an option.
  Mode best_other_than_block() const noexcept;
  // The estimate measured for `mode`; 0 = not yet.
  std::chrono::nanoseconds estimate(Mode mode) const noexcept;
  bool occupying_pays() const noexcept;
  // The kept mode's current window says the other one would now win.
  bool contradicts(std::chrono::nanoseconds kept_median) const noexcept;
  std::chrono::nanoseconds median() noexcept;

  Setting setting_;
  bool may_block_ = false;
  Mode mode_ = Mode::free;
  Phase phase_ = Phase::probe_free;
  Mode kept_ = Mode::free;         // the mode a stay keeps (re-probes compare against it)
  bool reprobe_ = false;           // the probe running is a re-probe of the other mode
  unsigned settle_ = 0;            // cycles still skipped after a switch
  unsigned left_ = 0;              // cycles left in a stay or backoff
  unsigned stay_ = kStayCycles;    // length of the next stay
  unsigned backoff_ = kFirstBackoffCycles;  // length of the next backoff
  unsigned calm_ = 0;              // occupied cycles since the last contention
  std::array<std::int64_t, kProbeCycles> samples_{};  // ns, the current window
  unsigned count_ = 0;             // samples_ filled (a ring during a stay)
  unsigned next_ = 0;              // ring position during a stay
  unsigned shared_run_ = 0;        // occupied cycles in a row with a short turn on the occupier's CPU
  unsigned since_move_ = ~0u;      // occupied cycles since the last move (saturating)
  unsigned calm_shared_ = 0;       // occupied cycles since the last shared pair (saturating at kStayCycles)
  unsigned move_gap_ = kFirstMoveGap;  // occupied cycles required between moves
  std::uint64_t moves_ = 0;
  std::chrono::nanoseconds free_estimate_{0};
  std::chrono::nanoseconds occupy_estimate_{0};
  std::chrono::nanoseconds block_estimate_{0};
  std::uint64_t changes_ = 0;
  std::uint64_t probes_ = 0;
  std::uint64_t contentions_ = 0;
};

/// The placement setting's one parser ("auto", "off", "occupy"; anything
/// else is std::nullopt) and its spelling, the inverse: the flag, the
/// environment (settings/settings.h) and the stats all say it this way.
std::optional<PlacementController::Setting> parse_placement(std::string_view text);
std::string_view placement_name(PlacementController::Setting setting) noexcept;

}  // namespace spinrpc
