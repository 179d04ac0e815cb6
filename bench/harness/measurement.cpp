#include "bench/harness/measurement.h"

#include <cerrno>        // errno
#include <cstdio>        // std::fopen, std::fwrite, std::fclose
#include <system_error>  // std::system_error

#include "bench/harness/latency_stats.h"
#include "bench/harness/process_cpu.h"

namespace spinrpc::bench {

Measurement::Measurement(std::string name, int server_pid, bool count_self, std::size_t expected_samples)
    : name_(std::move(name)), server_pid_(server_pid), count_self_(count_self) {
  samples_ns_.reserve(expected_samples);
}

void Measurement::start() noexcept {
  if (server_pid_ >= 0) server_start_ns_ = process_cpu_ns(server_pid_);
  if (count_self_) self_start_ns_ = self_cpu_ns();
  wall_start_ = Clock::now();
}

void Measurement::stop() noexcept {
  wall_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - wall_start_).count();
  if (count_self_) client_cpu_ns_ += self_cpu_ns() - self_start_ns_;
  if (server_pid_ >= 0) {
    const std::int64_t end = process_cpu_ns(server_pid_);
    // Branch: no schedstat, or the server died: its CPU is unknown, not 0.
    if (end < 0 || server_start_ns_ < 0) server_cpu_known_ = false;
    else server_cpu_ns_ += end - server_start_ns_;
  }
}

void Measurement::add_samples(const std::vector<std::int64_t>& samples_ns) {
  samples_ns_.insert(samples_ns_.end(), samples_ns.begin(), samples_ns.end());
}

void Measurement::add_cpu(std::int64_t client_ns, std::int64_t server_ns) noexcept {
  client_cpu_ns_ += client_ns;
  server_cpu_ns_ += server_ns;
}

std::string latency_file_name(const std::string& name) {
  std::string file = name;
  for (char& c : file) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '.' || c == '-';
    if (!keep) c = '_';
  }
  return file + ".i64";
}

void Measurement::publish(benchmark::State& state, const BenchPlan& plan) const {
  const LatencySummary s = summarize(samples_ns_);
  const auto us = [](double ns) { return ns / 1e3; };
  state.counters["samples"] = static_cast<double>(s.count);
  state.counters["mean_us"] = us(s.mean_ns);
  state.counters["p50_us"] = us(static_cast<double>(s.p50_ns));
  state.counters["p75_us"] = us(static_cast<double>(s.p75_ns));
  state.counters["p99_us"] = us(static_cast<double>(s.p99_ns));
  state.counters["max_us"] = us(static_cast<double>(s.max_ns));
  state.counters["wall_s"] = static_cast<double>(wall_ns_) / 1e9;
  state.counters["client_cpu_s"] = static_cast<double>(client_cpu_ns_) / 1e9;
  state.counters["server_cpu_s"] =
      server_cpu_known_ ? static_cast<double>(server_cpu_ns_) / 1e9 : -1.0;
  const auto spin = [&](const char* side, const std::optional<SpinCounters>& c) {
    if (!c) return;
    for (std::size_t i = 0; i < kChannelCounters.size(); ++i) {
      state.counters[std::string(side) + std::string(kChannelCounters[i].name)] =
          static_cast<double>(c->values[i]);
    }
  };
  spin("cli_", client_spin_);
  spin("srv_", server_spin_);
  for (const auto& [key, value] : extra_) state.counters[key] = value;

  if (plan.latency_dir.empty()) return;
  const std::string path = plan.latency_dir + "/" + latency_file_name(name_);
  // Binary: a 1 s oversubscribed run alone holds ~300k samples.
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::system_error(errno, std::generic_category(), "cannot write " + path);
  const std::size_t written = std::fwrite(samples_ns_.data(), sizeof(std::int64_t), samples_ns_.size(), f);
  if (std::fclose(f) != 0 || written != samples_ns_.size()) {
    throw std::system_error(errno, std::generic_category(), "cannot write " + path);
  }
}

}  // namespace spinrpc::bench
