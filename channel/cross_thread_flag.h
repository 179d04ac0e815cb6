#pragma once

#include <atomic>  // std::atomic

namespace spinrpc {

/// A bool that one thread sets and any other may read at any moment: a
/// snapshot for a diagnostic (spinrpc-server's signal thread asks whether a
/// request or a partial frame would be cut short, app/shutdown_on_signal.h).
/// Relaxed: nothing is ordered by it, and a store is a plain move on x86, so
/// it costs the request path nothing measurable. Copies and moves copy the
/// value, so an owner keeps its defaulted moves.
class CrossThreadFlag {
 public:
  CrossThreadFlag() = default;
  CrossThreadFlag(const CrossThreadFlag& other) noexcept : value_(other.get()) {}
  CrossThreadFlag& operator=(const CrossThreadFlag& other) noexcept {
    set(other.get());
    return *this;
  }
  void set(bool on) noexcept { value_.store(on, std::memory_order_relaxed); }
  bool get() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> value_{false};
};

}  // namespace spinrpc
