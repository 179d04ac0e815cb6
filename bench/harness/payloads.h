#pragma once

#include <cstddef>  // std::byte, std::size_t
#include <vector>   // std::vector

namespace spinrpc::bench {

/// `count` deterministic pseudo-random payloads of `bytes` bytes each, built
/// before any timing starts (docs/BENCHMARKING.md#the-timed-region). When `bytes` >= 4 the first
/// four bytes hold the payload's index, so no two are alike and a stale or
/// misrouted reply cannot pass the integrity check by accident.
std::vector<std::vector<std::byte>> make_payloads(std::size_t bytes, std::size_t count);

}  // namespace spinrpc::bench
