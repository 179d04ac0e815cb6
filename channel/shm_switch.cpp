#include "channel/shm_switch.h"

#include <utility>  // std::move

#include "stream/shm_streams_linux.h"

namespace spinrpc {
namespace {

class ShmSwitch final : public StreamSwitch {
 public:
  ShmSwitch(std::shared_ptr<SharedRing> ring, Side side) : ring_(std::move(ring)), side_(side) {}

  bool agree() override {
    if (side_ == Side::client) return ring_->accepted();
    ring_->accept();
    return true;
  }

  Streams move(Streams current) override {
    const auto ring_side = side_ == Side::client ? SharedRing::Side::client : SharedRing::Side::server;
    return shm_streams(std::move(ring_), ring_side, std::move(current));
  }

  std::string reason(bool moved) const override {
    if (moved) return "shared memory: the client offered a ring and the server took it";
    return side_ == Side::client ? "pipes: the server did not take the shared-memory offer (not spinrpc-server, "
                                   "or it refused: SPINRPC_SHM=off, --shm=off, --async)"
                                 : "pipes: the first reply came with more of the client's bytes buffered";
  }

 private:
  std::shared_ptr<SharedRing> ring_;
  Side side_;
};

}  // namespace

std::unique_ptr<StreamSwitch> shm_switch(std::shared_ptr<SharedRing> ring, StreamSwitch::Side side) {
  return std::make_unique<ShmSwitch>(std::move(ring), side);
}

}  // namespace spinrpc
