#pragma once

#include <mutex>   // std::mutex
#include <string>  // std::string
#include <vector>  // std::vector

namespace spinrpc {

/// The files a server created (its socket, its FIFOs), to be removed when it
/// ends, however it ends: normally (the transport's destructor) or on
/// SIGINT/SIGTERM (ShutdownOnSignal, from another thread). Thread-safe.
class CreatedFiles {
 public:
  /// Records `path` as created by this process.
  void add(const std::string& path);
  /// Removes `path` from disk if it is recorded, and forgets it. Never throws.
  void remove(const std::string& path) noexcept;
  /// Removes every recorded path and forgets them, then keeps the lock held
  /// forever if `hold_lock`: the caller is about to _exit() and nothing may
  /// create a file behind its back. Never throws.
  void remove_all(bool hold_lock = false) noexcept;

 private:
  std::mutex mutex_;
  std::vector<std::string> paths_;  // guarded by mutex_
};

}  // namespace spinrpc
