#pragma once

#include <chrono>   // std::chrono::seconds
#include <cstddef>  // std::byte, std::size_t
#include <cstdint>  // std::uint64_t
#include <span>     // std::span

#include "protocol/frame.h"

namespace spinrpc::bench {

/// The shared-memory floor (docs/BENCHMARKING.md#floors): a raw ping-pong
/// between this process and a fork(2)ed child through memory both map, no
/// system call on either side while a message crosses. The limit for two
/// spinrpc ends: what is left is a cache line moving from one core to the
/// other each way, plus the copy of the message in and out.
///
/// Shapes: one anonymous memfd (memfd_create, close-on-exec, sealed against
/// shrinking and growing, never a name in /dev/shm), mapped MAP_SHARED
/// before the fork. One slot per direction, each aligned to a 64-byte cache
/// line: a 64-bit sequence number, then the message's message_bytes,
/// starting in the sequence number's own line (a message of up to 56 bytes
/// crosses with its sequence number in one line), and one more line with
/// the stop word. A sender copies the message into its slot, then stores
/// the next sequence number (release); the receiver spins on acquire loads
/// (a pause instruction between tries on x86, nothing elsewhere; never a
/// system call or a yield) until it sees that number, then copies the
/// message out. The child echoes each request into the reply slot.
///
/// It only holds while each side has a CPU of its own: when the scheduler
/// puts both on one CPU, a round trip waits for a time slice (milliseconds),
/// and its p99 and max say how often that happened.
///
/// Liveness: round_trip waits at most kAnswerTimeout for the reply (the
/// clock is read every few thousand polls) and then throws; the child exits
/// when the destructor sets the stop word, and is killed (SIGKILL, by
/// PR_SET_PDEATHSIG) when this process dies.
///
/// WARNING: forks the calling process; call it from a single-threaded
/// process only (spinrpc-bench runs its benchmarks on one thread; the
/// parent-death signal follows the thread that forked). The child touches
/// nothing but the shared mapping and a buffer of its own, and ends with _exit.
class ShmFloor {
 public:
  /// How long round_trip waits for the child's reply before it throws.
  static constexpr std::chrono::seconds kAnswerTimeout{1};

  /// Creates, sizes, seals and maps the memfd (then closes it: the mapping
  /// stays) and forks the echoing child. `message_bytes` may be any size
  /// (spinrpc-bench uses the echo sizes' wire bytes, 18 and up). Throws
  /// std::system_error if memfd_create, ftruncate, fcntl(F_ADD_SEALS), mmap
  /// or fork fails.
  explicit ShmFloor(std::size_t message_bytes);
  ShmFloor(const ShmFloor&) = delete;
  ShmFloor& operator=(const ShmFloor&) = delete;
  /// Sets the stop word and reaps the child, waiting at most about
  /// kAnswerTimeout for it to exit before it kills it (SIGKILL); then
  /// unmaps. Never throws; a child that ended any other way than exit 0
  /// after the stop word is reported on stderr.
  ~ShmFloor();

  /// The echoing child's pid (for its CPU time); -1 once reaped.
  int child_pid() const noexcept { return pid_; }

  /// One round trip: copies `message` (exactly message_bytes) into the
  /// request slot, publishes it, spins until the child's reply carries the
  /// same sequence number, then copies message_bytes into `reply` (at least
  /// that long). Throws std::invalid_argument for a wrong size, and
  /// std::runtime_error naming the shared-memory floor if the child has
  /// died, or has not answered within kAnswerTimeout (then every later call
  /// throws too: the slots are out of step).
  void round_trip(ByteView message, std::span<std::byte> reply);

 private:
  std::size_t message_bytes_;
  std::size_t slot_bytes_;      // one direction's slot: sequence number + message, whole cache lines
  std::size_t mapping_bytes_;   // two slots + the stop line
  std::byte* mapping_ = nullptr;
  std::uint64_t seq_ = 0;       // the last request's sequence number
  bool broken_ = false;         // a round trip timed out or found the child dead
  int pid_ = -1;                // the echoing child; -1 once reaped
};

}  // namespace spinrpc::bench
