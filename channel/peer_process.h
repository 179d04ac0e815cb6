#pragma once

namespace spinrpc {

// What the kernel tells about the process at the other end of a reader's
// descriptor, for a server that follows its blocking peer's CPU while the
// CPUs are taken (docs/PLACEMENT.md#following-the-peer-when-the-cpus-are-taken).
// None of these throws; each answers "cannot tell" (-1 or 0 or false) when
// /proc or a call refuses.

/// The CPU the main thread of process `pid` last ran on: field 39 of
/// /proc/PID/stat (its current CPU while it runs). -1 when it cannot be read.
int last_cpu_of(int pid) noexcept;

/// The process at the other end of the socket `fd`: SO_PEERCRED, which on a
/// socket pair names the process that created the pair (Node's
/// child_process, for a child's stdio). 0 when `fd` is not a connected Unix
/// socket or the kernel does not say.
int socket_peer_pid(int fd) noexcept;

/// Whether process `pid` holds an open descriptor on the same pipe as our
/// `fd` (/proc/PID/fd links compared with /proc/self/fd/FD's,
/// "pipe:[inode]"): the process at its other end, or one that inherited it.
/// False for anything but a pipe. A scan of the peer's descriptors: once,
/// not per request.
bool holds_same_file(int pid, int fd) noexcept;

}  // namespace spinrpc
