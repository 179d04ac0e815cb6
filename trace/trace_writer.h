#pragma once

#include <chrono>    // std::chrono::steady_clock
#include <cstddef>   // std::size_t
#include <optional>  // std::optional
#include <span>      // std::span
#include <string>    // std::string

#include "trace/trace_ring.h"

namespace spinrpc::trace {

/// What write_trace() wrote.
struct WriteReport {
  std::size_t events = 0;    ///< trace events in the file, metadata included
  std::size_t requests = 0;  ///< requests written, summed over the rings
  bool cut = false;          ///< the deadline passed: the oldest requests were left out
};

/// Writes `rings` (one thread row each) as one Chrome trace-event JSON file
/// at `path` (docs/TRACE.md#the-file): {"traceEvents": [...], "displayTimeUnit":
/// "ns", "otherData": {"spinrpc": {...}}}. Per ring, the last
/// Ring::max_requests() requests whose records are all in the ring, newest
/// first; past `deadline` (checked every few thousand records) no older
/// request is added, the file is closed as valid JSON and says so
/// (otherData.spinrpc.cut). What `path` is decides where the bytes go
/// (docs/HARDENING.md, "Trace files"): absent or a regular file, a new file
/// created exclusively, mode 0600, under an unguessable name in its
/// directory (`path`.tmp.XXXXXX), renamed to `path` once whole, so `path`
/// is never a partial file; a FIFO (ours or root's) or a character device,
/// opened O_NONBLOCK|O_NOFOLLOW and written through, waiting for its reader
/// to make room until `deadline`, or 5 s at a time without one; a symbolic
/// link or anything else, refused. No open blocks. Throws std::system_error
/// naming the path when it cannot be written, std::runtime_error (one line
/// naming it and saying why) when it is refused or a FIFO has no reader.
WriteReport write_trace(const std::string& path, std::span<const Ring* const> rings,
                        std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace spinrpc::trace
