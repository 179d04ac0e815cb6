#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t
#include <vector>   // std::vector

namespace spinrpc::bench {

/// The distribution of one benchmark's per-request latencies (docs/BENCHMARKING.md
/// #distributions: percentiles next to the mean, and the sample count). All times
/// in ns. Percentiles are nearest-rank, as bench/harness/stats.mjs computes
/// them for every script under bench/: the smallest sample with at least q
/// of the samples at or below it, so a percentile is always a measured
/// sample. The median of a handful of figures (per-round p50s, per-round
/// ratios) is taken in JavaScript only, by stats.mjs's median.
struct LatencySummary {
  std::size_t count = 0;  ///< samples
  double mean_ns = 0;
  std::int64_t p50_ns = 0;
  std::int64_t p75_ns = 0;
  std::int64_t p99_ns = 0;
  std::int64_t max_ns = 0;
};

/// Summarises `samples_ns` (taken by value: sorted in place). All zero for
/// no samples.
LatencySummary summarize(std::vector<std::int64_t> samples_ns);

/// Nearest-rank percentile of an ascending `sorted_ns`, q in [0, 1]; 0 for
/// an empty vector.
std::int64_t percentile(const std::vector<std::int64_t>& sorted_ns, double q) noexcept;

}  // namespace spinrpc::bench
