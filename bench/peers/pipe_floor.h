#pragma once

#include <cstddef>      // std::byte, std::size_t
#include <span>         // std::span
#include <string_view>  // std::string_view

#include "descriptor/unique_fd.h"
#include "protocol/frame.h"

namespace spinrpc::bench {

/// How both ends of a PipeFloor wait for bytes.
enum class FloorRead {
  blocking,  ///< read(2) on a blocking fd: the kernel parks the waiter
  polled,    ///< read(2) on an O_NONBLOCK fd retried at once on EAGAIN, no pause, no yield
};

/// "blocking", "polled": the `read:` part of benchmark names.
std::string_view floor_read_name(FloorRead read) noexcept;

/// The physical floor of a round trip (docs/BENCHMARKING.md#floors): a raw ping-pong
/// between this process and a fork(2)ed child over two pipes, plain C-level
/// read(2)/write(2), no framing and no spinrpc code. The child reads one
/// whole message of message_bytes, writes it back, and repeats until EOF.
/// Both sides wait the same way (`read`).
///
/// WARNING: forks the calling process; call it from a single-threaded
/// process only (spinrpc-bench runs its benchmarks on one thread). The child
/// touches nothing but its two fds and ends with _exit.
class PipeFloor {
 public:
  /// Creates the pipes (close-on-exec) and forks the echoing child. Throws
  /// std::system_error if pipe2, fcntl or fork fails.
  PipeFloor(std::size_t message_bytes, FloorRead read);
  PipeFloor(const PipeFloor&) = delete;
  PipeFloor& operator=(const PipeFloor&) = delete;
  /// Closes our ends (the child sees EOF and exits) and reaps the child,
  /// blocking until it has exited. Never throws.
  ~PipeFloor();

  /// The echoing child's pid (for its CPU time).
  int child_pid() const noexcept { return pid_; }

  /// One round trip: writes all of `message` (message_bytes long), then
  /// reads message_bytes back into `reply` (at least that long). Blocks or
  /// polls without limit as configured. Throws std::system_error on an OS
  /// failure and std::runtime_error if the child closes its end.
  void round_trip(ByteView message, std::span<std::byte> reply);

 private:
  std::size_t message_bytes_;
  UniqueFd to_child_;    // write end of the request pipe
  UniqueFd from_child_;  // read end of the reply pipe (O_NONBLOCK when polled)
  int pid_ = -1;         // the echoing child; -1 once reaped
};

}  // namespace spinrpc::bench
