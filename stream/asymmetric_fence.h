#pragma once

namespace spinrpc {

/// An asymmetric Dekker fence across processes (docs/SHARED-MEMORY.md,
/// "Memory ordering"): the side that publishes on every message pays only
/// a compiler barrier, and the side about to sleep, rarely, pays a system
/// call that puts a full barrier into every running thread of every
/// registered process (membarrier(2), MEMBARRIER_CMD_GLOBAL_EXPEDITED).

/// Registers this process as a target of heavy_fence() (both ends of a
/// ring must). False when the kernel does not offer it (older than 4.16,
/// or a seccomp filter refuses membarrier): the ring then uses full fences
/// on its fast path instead. Never throws.
bool register_for_heavy_fence() noexcept;

/// The heavy side: returns once every thread of every registered process
/// has passed a full memory barrier (or was not running). Only after
/// register_for_heavy_fence() returned true. Returns false if the call
/// failed (the caller then assumes nothing).
bool heavy_fence() noexcept;

}  // namespace spinrpc
