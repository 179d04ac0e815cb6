#include "server/server_timing.h"

#include "protocol/go_format.h"

namespace spinrpc {

void ServerTiming::record(std::string_view method, std::chrono::nanoseconds processing,
                          std::chrono::system_clock::time_point started) {
  if (!enabled_) return;
  // tsgo converts each duration to float64 ms and sums the floats; the sum's
  // rounding (0.0013460000000000002) is part of the reply.
  const double ms = static_cast<double>(processing.count()) / 1e6;
  ++request_count_;
  total_processing_ms_ += ms;
  Entry* slot;
  if (recent_size_ < kRecentCapacity) {
    slot = &recent_[recent_size_++];
  } else {
    slot = &recent_[recent_oldest_];
    recent_oldest_ = (recent_oldest_ + 1) % kRecentCapacity;
  }
  slot->method.assign(method);
  slot->processing_ms = ms;
  slot->timestamp_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(started.time_since_epoch()).count();
}

void ServerTiming::record(std::string_view method, const Started& started) {
  if (enabled_) record(method, std::chrono::steady_clock::now() - started.steady(), started.wall());
}

void ServerTiming::reset() noexcept {
  request_count_ = 0;
  total_processing_ms_ = 0;
  recent_size_ = 0;
  recent_oldest_ = 0;
}

std::string_view ServerTiming::snapshot_json() {
  json_.assign(enabled_ ? R"({"enabled":true,"totals":{"requestCount":)"
                        : R"({"enabled":false,"totals":{"requestCount":)");
  json_ += std::to_string(request_count_);
  json_ += R"(,"totalProcessingTimeMs":)";
  append_json_number(json_, total_processing_ms_);
  json_ += R"(},"recentRequests":[)";
  for (std::size_t i = 0; i < recent_size_; ++i) {
    const Entry& entry = recent_[(recent_oldest_ + i) % kRecentCapacity];
    if (i > 0) json_ += ',';
    json_ += R"({"method":)";
    append_json_string(json_, entry.method);
    json_ += R"(,"processingTimeMs":)";
    append_json_number(json_, entry.processing_ms);
    json_ += R"(,"timestamp":)";
    json_ += std::to_string(entry.timestamp_ms);
    json_ += '}';
  }
  json_ += "]}";
  return json_;
}

}  // namespace spinrpc
