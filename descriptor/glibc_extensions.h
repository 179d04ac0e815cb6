#pragma once
// The calls spinrpc makes that glibc has beyond POSIX, in one place, each
// with what a C library without it (musl) gets instead, so that a build on
// another libc is a toolchain away (docs/INSTALL.md, "musl and Alpine").
// glibc gives them all from 2.34 (strerrorname_np and sigabbrev_np from 2.32); the kernel calls need Linux 5.9
// (close_range with CLOSE_RANGE_UNSHARE) and 3.15 (renameat2).

#include <spawn.h>

namespace spinrpc {

/// close_range(0, ~0U, CLOSE_RANGE_UNSHARE): this thread drops its share of
/// the process's descriptor table for an empty one of its own. Made as a
/// system call on every libc. Returns 0, or -1 with errno.
int close_every_descriptor_unshared() noexcept;

/// renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE): a rename that
/// fails with EEXIST instead of replacing `to`. Made as a system call on
/// every libc. Returns 0, or -1 with errno.
int rename_no_replace(const char* from, const char* to) noexcept;

/// posix_spawn_file_actions_addclosefrom_np(actions, first): the child
/// closes every descriptor from `first` up before it execs. glibc only:
/// elsewhere ENOSYS (the caller decides whether to spawn without it).
/// Returns 0 or an errno value, as posix_spawn_file_actions_* do.
int spawn_actions_close_from(posix_spawn_file_actions_t* actions, int first) noexcept;

/// strerrorname_np(err): "ENOENT" for ENOENT; nullptr for a number that
/// names no error, and on a libc without it.
const char* error_name(int err) noexcept;

/// sigabbrev_np(signal): "KILL" for SIGKILL; nullptr for a number that
/// names no signal, and on a libc without it.
const char* signal_abbreviation(int signal) noexcept;

}  // namespace spinrpc
