#include "descriptor/glibc_extensions.h"

#include <fcntl.h>              // AT_FDCWD
#include <linux/close_range.h>  // CLOSE_RANGE_UNSHARE
#include <linux/fs.h>           // RENAME_NOREPLACE
#include <signal.h>             // ::sigabbrev_np (glibc)
#include <string.h>             // ::strerrorname_np (glibc)
#include <sys/syscall.h>        // SYS_close_range, SYS_renameat2
#include <unistd.h>             // ::syscall

#include <cerrno>

namespace spinrpc {

int close_every_descriptor_unshared() noexcept {
  return static_cast<int>(::syscall(SYS_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE));
}

int rename_no_replace(const char* from, const char* to) noexcept {
  return static_cast<int>(::syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE));
}

int spawn_actions_close_from(posix_spawn_file_actions_t* actions, int first) noexcept {
#if defined(__GLIBC__)
  return ::posix_spawn_file_actions_addclosefrom_np(actions, first);
#else
  (void)actions;
  (void)first;
  return ENOSYS;
#endif
}

const char* error_name(int err) noexcept {
#if defined(__GLIBC__)
  return ::strerrorname_np(err);
#else
  (void)err;
  return nullptr;
#endif
}

const char* signal_abbreviation(int signal) noexcept {
#if defined(__GLIBC__)
  return ::sigabbrev_np(signal);
#else
  (void)signal;
  return nullptr;
#endif
}

}  // namespace spinrpc
