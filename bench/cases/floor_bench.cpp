// BM_PipeFloor and BM_ShmFloor: the physical floors every latency is
// reported against (docs/BENCHMARKING.md#floors): a raw two-process
// ping-pong over two pipes, blocking reads and polled non-blocking reads,
// and through shared memory, spinning on a sequence number; each with the
// same message size as an echo request of `bytes` payload bytes on the
// wire (`wire_bytes`).
#include <array>    // std::array
#include <cstddef>  // std::byte, std::size_t
#include <string>   // std::string
#include <vector>   // std::vector

#include "bench/harness/integrity.h"
#include "bench/harness/measurement.h"
#include "bench/harness/payloads.h"
#include "bench/peers/pipe_floor.h"
#include "bench/peers/shm_floor.h"
#include "bench/harness/registration.h"
#include "bench/harness/timed_loop.h"
#include "bench/cases/workloads.h"

namespace spinrpc::bench {

namespace {

// Bytes of the frame [Request, "echo", payload] (docs/PROTOCOL.md#framing):
// fixarray, fixint type, bin8 "echo", then the payload's smallest bin header.
std::size_t echo_frame_bytes(std::size_t payload_bytes) noexcept {
  const std::size_t header = payload_bytes < 0x100 ? 2 : payload_bytes < 0x10000 ? 3 : 5;
  return 1 + 1 + 2 + 4 + header + payload_bytes;
}

// The three floors, in the order of round 0.
enum class FloorKind { blocking, polled, shm };
constexpr std::array<FloorKind, 3> kFloorKinds{FloorKind::blocking, FloorKind::polled, FloorKind::shm};

// `floor` is a PipeFloor or a ShmFloor, made for echo_frame_bytes(payload_bytes).
template <class Floor>
void run_floor(benchmark::State& state, const BenchPlan& plan, const std::string& name, Floor& floor,
               std::size_t payload_bytes) {
  const std::size_t wire = echo_frame_bytes(payload_bytes);
  const std::vector<std::vector<std::byte>> messages = make_payloads(wire, wire >= (std::size_t{64} << 10) ? 4 : 16);
  std::vector<std::byte> reply(wire);
  for (std::size_t i = 0; i < plan.size_warmup(payload_bytes); ++i) {
    const std::vector<std::byte>& msg = messages[i % messages.size()];
    floor.round_trip(msg, reply);
    check_reply(msg, reply, name + " (warm-up)", i);
  }

  Measurement m(name, floor.child_pid(), true, static_cast<std::size_t>(state.max_iterations));
  std::size_t i = 0;
  m.start();
  for (auto _ : state) {
    const std::vector<std::byte>& msg = messages[i % messages.size()];
    const auto t0 = Measurement::Clock::now();
    floor.round_trip(msg, reply);
    const auto t1 = Measurement::Clock::now();
    check_reply(msg, reply, name, i);
    record_iteration(state, m, t1 - t0);
    ++i;
  }
  m.stop();
  m.publish(state, plan);
}

}  // namespace

void register_floor_benchmarks(const BenchPlan& plan, int round) {
  for (const std::size_t bytes : kEchoSizes) {
    // The floors alternate too: their order rotates by one each round, so
    // each goes first, second and third in turn.
    for (std::size_t k = 0; k < kFloorKinds.size(); ++k) {
      const FloorKind kind = kFloorKinds[(k + static_cast<std::size_t>(round)) % kFloorKinds.size()];
      const std::size_t wire = echo_frame_bytes(bytes);
      if (kind == FloorKind::shm) {
        // No pipe to fill: the shared-memory floor runs the echo count at
        // every size (the polled pipe floor's cut above 64 KiB does not apply).
        const std::size_t count = plan.floor_count(bytes, /*polled=*/false);
        const std::string name = BenchName("BM_ShmFloor")
                                     .add("bytes", bytes)
                                     .add("wire_bytes", wire)
                                     .add("count", count)
                                     .add("round", static_cast<std::size_t>(round))
                                     .str();
        register_run(name, count, [&plan, name, bytes, wire](benchmark::State& state) {
          ShmFloor floor(wire);
          run_floor(state, plan, name, floor, bytes);
        });
        continue;
      }
      const FloorRead read = kind == FloorKind::blocking ? FloorRead::blocking : FloorRead::polled;
      const std::size_t count = plan.floor_count(bytes, read == FloorRead::polled);
      const std::string name = BenchName("BM_PipeFloor")
                                   .add("bytes", bytes)
                                   .add("wire_bytes", wire)
                                   .add("count", count)
                                   .add("read", floor_read_name(read))
                                   .add("round", static_cast<std::size_t>(round))
                                   .str();
      register_run(name, count, [&plan, name, read, bytes, wire](benchmark::State& state) {
        PipeFloor floor(wire, read);
        run_floor(state, plan, name, floor, bytes);
      });
    }
  }
}

}  // namespace spinrpc::bench
