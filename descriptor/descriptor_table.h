#pragma once

namespace spinrpc {

// The kernel's descriptor table and the hot path.
//
// Every read(2) and write(2) looks its fd up in the calling thread's
// descriptor table. While that table belongs to one thread alone, the
// lookup takes no reference on the file; once another thread shares it
// (any std::thread does: CLONE_FILES), every lookup takes and drops one,
// two atomic operations. A spinning wait is a chain of such reads and each
// round trip adds a read and a write on both sides, so a table shared with
// spinrpc-server's helper threads costs every round trip
// (docs/SPIN-NOTES.md#where-a-spun-round-trip-goes).

/// For a thread that touches no file descriptor (the Occupier): gives up its
/// share of the process's table for an empty one of its own (close_range(2)
/// with CLOSE_RANGE_UNSHARE), so that the threads it shared with keep the
/// single-owner lookup. Closes nothing anyone else sees, and keeps no file
/// open that they close (stderr included: the thread writes nothing).
/// Returns false where the kernel cannot (before Linux 5.9), and under a
/// sanitizer, whose reports from the thread need stderr
/// (descriptor/sanitizers.h): nothing changed then.
bool leave_descriptor_table() noexcept;

/// For the thread that serves in a process spinrpc owns (spinrpc-server's
/// main thread, never a library caller's: a thread with its own table no
/// longer sees what the others open or close): gives it a copy of the table
/// of its own (unshare(2), CLONE_FILES). The other threads keep the old
/// table, and what it held stays open for them until they end: a file the
/// serving thread closes is released only then. Returns false when the
/// kernel refuses (nothing changed).
bool own_descriptor_table() noexcept;

}  // namespace spinrpc
