#pragma once

#include <chrono>    // std::chrono
#include <cstddef>   // std::size_t
#include <memory>    // std::shared_ptr
#include <optional>  // std::optional
#include <string>    // std::string

#include "trace/trace_ring.h"

namespace spinrpc::trace {

/// The process's trace files and the rings that go in each
/// (docs/TRACE.md). A channel opens its ring here; the file is written
/// when a channel closes (its closed rings), and at exit (through
/// std::atexit) and by spinrpc-server on SIGTERM (write_all) only where a
/// channel is still open. A process writes only the rings it opened: a
/// forked child leaves its parent's to the parent.

/// What a server may spend writing its trace as it ends, in ms: half the
/// client shim's and the binding's default close grace (2000 ms), after
/// which they SIGKILL it. A longer write is cut to the newest requests
/// (WriteReport::cut), one stderr line says so.
inline constexpr std::chrono::milliseconds kServerWriteBudget{1000};

/// `pattern` with each "%p" replaced by this process's pid and each "%%"
/// by "%" (any other "%" stays itself). Without "%p", ".<pid>" goes before
/// a final ".json", or at the end: a client and the server it starts, which
/// inherits the pattern, and a process and its forked child never write one
/// file (docs/TRACE.md).
std::string expand_path(const std::string& pattern);

/// A new ring for a channel whose trace goes to `path` (already expanded),
/// keeping `max_requests` requests, its thread row named `label`.
/// The ring stays registered until exit. Registers the exit writer the
/// first time. Throws std::system_error if the ring cannot be mapped.
std::shared_ptr<Ring> open_ring(const std::string& path, std::size_t max_requests, std::string label);

/// The channel of `ring` is closed: writes the file of its path with every
/// closed ring of that path (the rings still open belong to threads
/// recording now, and go in at exit). Errors are one stderr line, never
/// thrown: a trace is never worth a user's request.
void close_ring(const std::shared_ptr<Ring>& ring) noexcept;

/// Writes every file that has a ring still open, with all its rings,
/// within `deadline` if set (a file cut short says so on stderr); a file
/// whose channels are all closed was written by close_ring and is left
/// alone. For exit and SIGTERM; errors as close_ring.
void write_all(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept;

/// Sets the deadline the exit writer gives itself, from the moment exit
/// begins: spinrpc-server sets kServerWriteBudget. None by default.
void set_exit_budget(std::chrono::milliseconds budget) noexcept;

}  // namespace spinrpc::trace
