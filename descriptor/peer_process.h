#pragma once

#include <string_view>  // std::string_view

namespace spinrpc {

/// A /proc/PID/stat (or task/TID/stat) line from field 3, the state, on:
/// "PID (comm) S ..." where comm may hold spaces and parentheses, so the
/// plain fields start after the last ')'. Empty when the line does not
/// parse. Shared by these helpers and CpuLoadProbe.
std::string_view stat_fields_from_state(std::string_view line) noexcept;

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

/// The parent of process `pid` (field 4 of /proc/PID/stat); -1 when it
/// cannot be read.
int parent_of(int pid) noexcept;

/// Whether process `pid` holds the write end of the pipe our `fd` reads
/// (/proc/PID/fd links compared with /proc/self/fd/FD's, "pipe:[inode]",
/// then the open flags in /proc/PID/fdinfo): the process that writes to us.
/// A wrapper that started us without exec (`sh -c`, `timeout`) holds only
/// the read end it handed down, and is not taken for the writer. False for
/// anything but a pipe. A scan of the peer's descriptors: once, not per
/// request.
bool holds_write_end(int pid, int fd) noexcept;

}  // namespace spinrpc
