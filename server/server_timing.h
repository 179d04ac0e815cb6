#pragma once

#include <array>        // std::array
#include <chrono>       // std::chrono
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view

namespace spinrpc {

/// What --timing collects and getServerTiming reports
/// (docs/PROTOCOL.md#replies-in-detail): a running count and sum of processing
/// times and the 5 most recent requests, oldest first. Steady state allocates
/// nothing: the ring reuses its method strings and the snapshot reuses its
/// buffer.
class ServerTiming {
 public:
  /// Requests kept for recentRequests (tsgo's RECENT_REQUEST_CAPACITY).
  static constexpr std::size_t kRecentCapacity = 5;

  explicit ServerTiming(bool enabled) noexcept : enabled_(enabled) {}

  bool enabled() const noexcept { return enabled_; }

  /// Records one request: its handler's processing time and the wall-clock
  /// time it started. Ignored when disabled.
  void record(std::string_view method, std::chrono::nanoseconds processing,
              std::chrono::system_clock::time_point started);

  /// One request's clocks, read where it starts (only when enabled): what
  /// record() needs once it has been answered.
  class Started {
   public:
    explicit Started(const ServerTiming& timing) noexcept
        : wall_(timing.enabled() ? std::chrono::system_clock::now() : std::chrono::system_clock::time_point{}),
          steady_(timing.enabled() ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
    std::chrono::system_clock::time_point wall() const noexcept { return wall_; }
    std::chrono::steady_clock::time_point steady() const noexcept { return steady_; }

   private:
    std::chrono::system_clock::time_point wall_;
    std::chrono::steady_clock::time_point steady_;
  };
  /// Records the request that `started` as `method`, its time up to now.
  /// Ignored when disabled.
  void record(std::string_view method, const Started& started);

  /// Clears totals and recent requests (resetServerTiming).
  void reset() noexcept;

  /// getServerTiming's JSON, exactly as tsgo writes it; processing times in
  /// ms as float64, timestamps in Unix ms. The view is valid until the next
  /// call.
  std::string_view snapshot_json();

 private:
  struct Entry {
    std::string method;          // reused: assigning keeps the capacity
    double processing_ms = 0;    // float64 ms, as tsgo sums them
    std::int64_t timestamp_ms = 0;
  };

  bool enabled_;
  std::uint64_t request_count_ = 0;
  double total_processing_ms_ = 0;
  std::array<Entry, kRecentCapacity> recent_;  // ring buffer
  std::size_t recent_size_ = 0;                // entries in use
  std::size_t recent_oldest_ = 0;              // index of the oldest entry once full
  std::string json_;                           // snapshot buffer, reused
};

}  // namespace spinrpc
