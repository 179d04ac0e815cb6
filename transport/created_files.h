#pragma once

#include <sys/types.h>  // dev_t, ino_t

#include <mutex>   // std::mutex
#include <string>  // std::string
#include <vector>  // std::vector

namespace spinrpc {

/// The files a server created (its socket and the directory holding it,
/// its FIFOs), to be removed, newest first, when it
/// ends, however it ends: normally (the transport's destructor) or on
/// SIGINT/SIGTERM (ShutdownOnSignal, from another thread). Thread-safe.
///
/// Only the file that was created is removed: each path is remembered with
/// its device and inode, and a path that now names something else (a
/// user's file, another server's socket put there since, a regular file
/// that replaced a FIFO) is left alone. Between the check and the unlink the path could
/// still be replaced; no system call removes a name only if it names a
/// given inode.
class CreatedFiles {
 public:
  /// Records `path`, just created by this process (lstat(2) now says what
  /// it is). A path that cannot be read back is not recorded: nothing is
  /// removed that we cannot recognise.
  void add(const std::string& path);
  /// Removes `path` from disk if it is recorded and still names the file
  /// created, and forgets it. Never throws.
  void remove(const std::string& path) noexcept;
  /// Removes every recorded path that still names the file created and
  /// forgets them, then keeps the lock held forever if `hold_lock`: the
  /// caller is about to _exit() and nothing may create a file behind its
  /// back. Never throws.
  void remove_all(bool hold_lock = false) noexcept;

 private:
  struct Created {
    std::string path;
    dev_t device;
    ino_t inode;
  };
  static void unlink_if_ours(const Created& file) noexcept;

  std::mutex mutex_;
  std::vector<Created> files_;  // guarded by mutex_
};

}  // namespace spinrpc
