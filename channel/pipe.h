#pragma once

#include <cstddef>  // std::size_t

#include "channel/unique_fd.h"

namespace spinrpc {

/// The two ends of one pipe(2).
struct PipePair {
  UniqueFd read_end;
  UniqueFd write_end;
};

/// Creates a pipe whose ends are both born close-on-exec (pipe2 O_CLOEXEC),
/// so a spawned child never inherits an end it was not handed: a leaked write
/// end would keep the pipe open and EOF, the dead-peer signal, would never
/// come. Throws std::system_error.
PipePair make_pipe();

/// Asks the kernel to let the pipe behind `fd` hold `bytes` (F_SETPIPE_SZ;
/// rounded up to a power-of-two number of pages). Best effort: returns the
/// capacity the pipe has afterwards, the old one when the request is refused
/// (over /proc/sys/fs/pipe-max-size, or the user's pipe-user-pages-soft
/// total). Why the client shim asks: docs/NODE.md, "Large payloads".
std::size_t try_set_pipe_capacity(int fd, std::size_t bytes) noexcept;

}  // namespace spinrpc
