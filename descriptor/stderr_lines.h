#pragma once

#include <chrono>       // std::chrono::milliseconds
#include <string_view>  // std::string_view

namespace spinrpc {

/// How spinrpc-server and the client shim write their diagnostics to stderr, which a parent may hand over in
/// any state: a pipe nobody reads, a full one, a non-blocking one shared with
/// the parent, a terminal. Neither function changes the descriptor's flags
/// (docs/HARDENING.md, "Standard descriptors"); both write to fd 2 in pieces
/// of at most PIPE_BUF bytes, each after poll(2) says there is room, so no
/// write blocks, whatever O_NONBLOCK says.

/// A line before the process exits (a fatal error, the usage, --stats):
/// written whole, waiting for room on EAGAIN or a full pipe as the reply
/// writer does, but for at most `patience` in all (then the rest is dropped:
/// a reader that stays away for a second is not coming). Never throws.
void write_stderr_before_exit(std::string_view text,
                              std::chrono::milliseconds patience = std::chrono::seconds(1));

/// A line written while work goes on (an ignored spin setting, from the
/// server or from a client shim inside someone else's process):
/// never waits. The text is cut to one PIPE_BUF piece, ending in
/// "... [N bytes cut]\n" when it was longer, and written only if there is
/// room for it now; otherwise it is dropped. Never throws.
void write_stderr_without_waiting(std::string_view text);

}  // namespace spinrpc
