#include "bench/harness/latency_stats.h"

#include <algorithm>  // std::sort, std::clamp
#include <cmath>      // std::ceil

namespace spinrpc::bench {

std::int64_t percentile(const std::vector<std::int64_t>& sorted_ns, double q) noexcept {
  if (sorted_ns.empty()) return 0;
  // Rank ceil(q·n), 1-based; q = 0 means the first sample.
  const double rank = std::ceil(q * static_cast<double>(sorted_ns.size()));
  const auto index = static_cast<std::size_t>(std::clamp(rank - 1.0, 0.0, static_cast<double>(sorted_ns.size() - 1)));
  return sorted_ns[index];
}

LatencySummary summarize(std::vector<std::int64_t> samples_ns) {
  LatencySummary s;
  if (samples_ns.empty()) return s;
  std::sort(samples_ns.begin(), samples_ns.end());
  double sum = 0;
  for (const std::int64_t x : samples_ns) sum += static_cast<double>(x);
  s.count = samples_ns.size();
  s.mean_ns = sum / static_cast<double>(s.count);
  s.p50_ns = percentile(samples_ns, 0.50);
  s.p75_ns = percentile(samples_ns, 0.75);
  s.p99_ns = percentile(samples_ns, 0.99);
  s.max_ns = samples_ns.back();
  return s;
}

}  // namespace spinrpc::bench
