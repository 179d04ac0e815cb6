#pragma once

#include <chrono>  // std::chrono::milliseconds
#include <memory>  // std::shared_ptr

#include "stream/shm_ring.h"
#include "stream/streams.h"

namespace spinrpc {

/// How often a reader or writer asleep on the ring's futex wakes to ask
/// whether the peer still lives (its pipe beside the ring): a dead peer is
/// noticed within this, and a long idle wait costs one wake-up per period
/// (docs/SHARED-MEMORY.md, "Liveness").
inline constexpr std::chrono::milliseconds kRingLivenessPeriod{50};

/// A message's bytes are published at least this often while it is copied
/// in, so that the reader copies a big message out while the rest goes in.
inline constexpr std::size_t kRingPublishEvery = 64 * 1024;

/// Streams over `ring` for `side`: the InputStream reads the peer's
/// direction, the OutputStream writes ours (docs/SHARED-MEMORY.md, "Wake
/// protocol"). `pipes` are the streams the connection began on; they carry
/// nothing more and stay open beside the ring, so that the peer's death
/// (EOF, EPIPE) is seen as it is over pipes: the input's EOF ends a read
/// once the ring is empty, the output's EPIPE ends a write waiting for
/// room. Every index read from the ring is read once and checked
/// (RingCorrupt otherwise). The OutputStream, destroyed, marks its
/// direction closed and wakes the reader: the peer then reads EOF as it
/// would from a pipe. Neither stream lends memory or reads ahead
/// (BufferOptions::read_while_writing is a pipe's).
Streams shm_streams(std::shared_ptr<SharedRing> ring, SharedRing::Side side, Streams pipes);

}  // namespace spinrpc
