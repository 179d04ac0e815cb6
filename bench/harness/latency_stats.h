#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t
#include <vector>   // std::vector

namespace spinrpc::bench {

/// The distribution of one benchmark's per-request latencies (docs/BENCHMARKING.md
/// #distributions: percentiles next to the mean, and the sample count). All times
/// in ns. Percentiles are nearest-rank, as bench/node/echo_latency.mjs and
/// bench/report.mjs compute them: the smallest sample with at least q of
/// the samples at or below it.
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
