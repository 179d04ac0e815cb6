#include "bench/harness/variant.h"

namespace spinrpc::bench {

namespace {
// The only budget the TypeScript spin proposal measured at scale, and the
// default (docs/SPIN.md#settings).
constexpr long long kBudgetUs = 100;
}  // namespace

std::string_view variant_name(Variant v) noexcept {
  switch (v) {
    case Variant::off: return "off";
    case Variant::fixed: return "fixed";
    case Variant::adaptive: return "adaptive";
  }
  return "?";
}

long long variant_spin_us(Variant v) noexcept { return v == Variant::off ? 0 : kBudgetUs; }

bool variant_adaptive(Variant v) noexcept { return v == Variant::adaptive; }

std::vector<std::string> server_spin_args(Variant v) {
  return {"--spin-us", std::to_string(variant_spin_us(v)),
          variant_adaptive(v) ? "--adaptive=1" : "--adaptive=0"};
}

SpinOverrides shim_spin(Variant v) {
  SpinOverrides spin;
  spin.spin_us = variant_spin_us(v);
  spin.adaptive = variant_adaptive(v);
  return spin;
}

std::array<Variant, 3> variants_in_round(int round) noexcept {
  std::array<Variant, 3> order{};
  const std::size_t shift = static_cast<std::size_t>(round < 0 ? 0 : round) % kAllVariants.size();
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = kAllVariants[(i + shift) % kAllVariants.size()];
  return order;
}

}  // namespace spinrpc::bench
