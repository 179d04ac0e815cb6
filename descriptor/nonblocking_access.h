#pragma once

#include "descriptor/unique_fd.h"

namespace spinrpc {

/// How one system call on a descriptor is made never to block while the
/// descriptor's own flags stay as they were found: a server's stdin may be a
/// terminal, or a pipe whose open file description its parent shares, and no
/// exit path (SIGKILL included) could be trusted to put an O_NONBLOCK back.
struct NonBlockingAccess {
  enum class Kind {
    /// A socket: recv/send with MSG_DONTWAIT, on the descriptor itself.
    socket,
    /// A pipe or FIFO opened again through /proc/self/fd: a new open file
    /// description of the same pipe, O_NONBLOCK and ours alone (`own`).
    own_description,
    /// Anything else (a file, a terminal), or /proc refused: the caller
    /// falls back to a per-call flag (preadv2's RWF_NOWAIT) or poll(2).
    as_found,
  };
  Kind kind = Kind::as_found;
  UniqueFd own;  ///< with own_description: the non-blocking description
};

/// Picks the access for `fd`, opened for `access` (O_RDONLY or O_WRONLY)
/// when a pipe is opened again. Never throws; a failed fstat or reopen
/// gives Kind::as_found. docs/SPIN-NOTES.md#descriptors-left-as-found
/// measures the three.
NonBlockingAccess nonblocking_access(int fd, int access);

}  // namespace spinrpc
