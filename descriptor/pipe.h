#pragma once

#include <cstddef>  // std::size_t

#include "descriptor/unique_fd.h"

namespace spinrpc {

/// A pipe's capacity unless someone grows it (F_SETPIPE_SZ): 16 pages
/// (pipe(7)). A write of more may wait for the reader; below it, a copy
/// costs less than lending pages or handing a caller's buffer over.
inline constexpr std::size_t kDefaultPipeBytes = std::size_t{64} << 10;

/// The two ends of one pipe(2).
struct PipePair {
  UniqueFd read_end;
  UniqueFd write_end;
};

/// Creates a pipe whose ends are both born close-on-exec (pipe2 O_CLOEXEC),
/// so a spawned child never inherits an end it was not handed: a leaked write
/// end would keep the pipe open and EOF, the dead-peer signal, would never
/// come. Both ends are numbered 3 or above: in a process started with
/// stdout or stderr closed, pipe2 hands out 1 or 2, and an end kept there
/// would be the process's "stderr" (its diagnostics written into a child's
/// stdin) and a child's inherited fd 2 (the child holding a write end of
/// its own stdin, never seeing EOF). The low numbers are closed again, as
/// they were found. Throws std::system_error.
PipePair make_pipe();

/// How far grow_pipe() grows a pipe: Linux's default pipe-max-size. A 64
/// KiB pipe holds 16 pages, so a 1 MiB message took 16 wake-ups of each
/// side (docs/NODE.md, "Large payloads"). Only pipes that carry a big
/// message grow, so a user's pipe-user-pages-soft budget goes to those.
inline constexpr std::size_t kMaxPipeBytes = std::size_t{1} << 20;

/// Grows the pipe `fd` is an end of to hold `bytes` (rounded up to a power
/// of two, at most kMaxPipeBytes). `known` caches its capacity (0 = not read
/// yet). Not a pipe, or refused (past pipe-max-size, past the user's pipe
/// budget): the pipe stays as it is and is not asked again. Never throws.
void grow_pipe(int fd, std::size_t& known, std::size_t bytes) noexcept;

}  // namespace spinrpc
