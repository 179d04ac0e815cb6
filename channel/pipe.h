#pragma once

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

}  // namespace spinrpc
