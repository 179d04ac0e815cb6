#pragma once

// A small seeded generator (splitmix64) for tests, the fuzz targets and the
// soak: the same numbers on every platform and library, so a seed printed
// by a failing run or stored as a fuzz input replays exactly (the standard
// distributions are not specified that tightly).
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t

namespace spinrpc::test {

struct SplitMix64 {
  std::uint64_t state;

  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// In [0, n); 0 when n is 0.
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  /// In [lo, hi].
  std::size_t between(std::size_t lo, std::size_t hi) {
    return lo + static_cast<std::size_t>(next() % (hi - lo + 1));
  }
};

}  // namespace spinrpc::test
