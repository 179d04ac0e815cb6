#pragma once

#include <memory>  // std::unique_ptr, std::shared_ptr

#include "channel/stream_switch.h"
#include "stream/shm_ring_linux.h"

namespace spinrpc {

/// The move from a spawned server's stdio pipes onto `ring`
/// (docs/SHARED-MEMORY.md, "Handshake"). The server side agrees by storing
/// the accept word in the ring; the client side agrees when it finds it
/// there. The pipes stay open beside the ring (shm_streams()).
std::unique_ptr<StreamSwitch> shm_switch(std::shared_ptr<SharedRing> ring, StreamSwitch::Side side);

}  // namespace spinrpc
