#pragma once

#include <chrono>  // std::chrono::milliseconds
#include <memory>  // std::shared_ptr

#include "stream/shm_ring_linux.h"
#include "stream/streams.h"

namespace spinrpc {

/// How often a writer asleep on the ring's futex, waiting for room, wakes to
/// ask whether the reader still lives (its pipe beside the ring): a dead
/// reader is noticed within this (docs/SHARED-MEMORY.md, "Liveness"). A
/// sleeping reader needs none: it sleeps on the pipe, whose EOF wakes it.
inline constexpr std::chrono::milliseconds kRingLivenessPeriod{50};

/// A message's bytes are published at least this often while it is copied
/// in, so that the reader copies a big message out while the rest goes in.
inline constexpr std::size_t kRingPublishEvery = 64 * 1024;

/// Streams over `ring` for `side`: the InputStream reads the peer's
/// direction, the OutputStream writes ours (docs/SHARED-MEMORY.md, "Wake
/// protocol"). `pipes` are the streams the connection began on; they stay
/// open beside the ring and carry only doorbells (a byte a writer writes
/// when it finds the reader asleep), so that a sleeping reader wakes as it
/// would over pipes and the peer's death is seen as it is there: the
/// input's EOF ends a read once the ring is empty, the output's EPIPE ends
/// a write waiting for room. Every index read from the ring is read once and checked
/// (RingCorrupt otherwise). The OutputStream, destroyed, marks its
/// direction closed and wakes the reader: the peer then reads EOF as it
/// would from a pipe. Neither stream lends memory or reads ahead
/// (BufferOptions::read_while_writing is a pipe's). `pipes.out` must be an
/// FdOutputStream (fd_streams()): std::invalid_argument otherwise.
Streams shm_streams(std::shared_ptr<SharedRing> ring, SharedRing::Side side, Streams pipes);

}  // namespace spinrpc
