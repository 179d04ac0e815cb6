#pragma once

#include <array>        // std::array
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "settings/settings.h"

namespace spinrpc::bench {

/// The spin settings every workload runs under, side by side in one run
/// (docs/BENCHMARKING.md#alternation). A variant is
/// applied to both ends alike: the client shim through SyncRpcOptions::spin
/// (shim_spin) and spinrpc-server through its flags (server_spin_args).
/// Explicit settings beat TSGO_SYNC_SPIN_* in the environment and the 1-CPU
/// default (settings/settings.h).
enum class Variant {
  off,       ///< budget 0: plain blocking reads
  fixed,     ///< budget 100 µs, adaptive rule off
  adaptive,  ///< budget 100 µs, adaptive rule on (docs/SPIN.md#the-rule)
};

inline constexpr std::array<Variant, 3> kAllVariants{Variant::off, Variant::fixed, Variant::adaptive};

/// "off", "fixed", "adaptive": the `variant:` part of benchmark names.
std::string_view variant_name(Variant v) noexcept;

/// The spin budget of `v`, in µs: 0 for Off, 100 otherwise.
long long variant_spin_us(Variant v) noexcept;

/// Whether `v` runs the adaptive rule (only Adaptive).
bool variant_adaptive(Variant v) noexcept;

/// spinrpc-server's flags for `v`: {"--spin-us", "<µs>", "--adaptive=0|1"}.
std::vector<std::string> server_spin_args(Variant v);

/// The client shim's spin overrides for `v` (SyncRpcOptions::spin).
SpinOverrides shim_spin(Variant v);

/// The variants in the order round `round` (0-based) runs them: rotated by
/// one place per round, so no variant always runs first after a change of
/// workload (drift falls on all; docs/BENCHMARKING.md#alternation).
std::array<Variant, 3> variants_in_round(int round) noexcept;

}  // namespace spinrpc::bench
