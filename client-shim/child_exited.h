#pragma once

#include <optional>     // std::optional
#include <string_view>  // std::string_view

#include "stream/peer_closed.h"

namespace spinrpc {

/// The child serving a SyncRpcChannel is gone, or has closed its output so
/// that no reply can come. Thrown instead of the channel's plain PeerClosed
/// once the child has been given a bounded wait (about 100 ms) to be reaped.
/// what() is one line naming the executable's last path component:
///   "spinrpc-server exited with status 1"
///   "tsgo was killed by signal 9"
///   "tsgo closed its output and is still running"
///   "tsgo closed its input and is still running" (a write found no reader)
class ChildExited : public PeerClosed {
 public:
  /// `executable`: as spawned (only its last path component is shown).
  /// `wait_status`: as from waitpid(2); std::nullopt if the child was still
  /// running when the wait ended. `where`: where the channel found it gone;
  /// Where::writing means our write found its input closed.
  ChildExited(std::string_view executable, std::optional<int> wait_status, Where where = Where::between_frames);

  /// The raw waitpid(2) status; std::nullopt while the child still runs.
  std::optional<int> wait_status() const noexcept { return wait_status_; }
  /// The exit code (WEXITSTATUS) if the child exited normally.
  std::optional<int> exit_code() const noexcept;
  /// The signal number (WTERMSIG) if a signal killed the child.
  std::optional<int> term_signal() const noexcept;

 private:
  std::optional<int> wait_status_;  // see wait_status()
};

}  // namespace spinrpc
