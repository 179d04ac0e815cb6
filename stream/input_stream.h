#pragma once

#include <chrono>    // std::chrono::steady_clock
#include <cstddef>   // std::byte, std::size_t
#include <optional>  // std::optional

#include "stream/stream_counters.h"

namespace spinrpc {

/// The reading end of a connection, as the wait rule sees it: something that
/// can be tried once without blocking and blocked on (docs/SPIN.md#the-rule).
/// SpinReader (wait/spin_reader.h) decides when to try and when to block;
/// an InputStream only says how. A descriptor is one (FdInputStream); a
/// ring in shared memory, with a futex to block on and a pipe or pidfd
/// beside it for the peer's death, is another.
///
/// Every read returns the byte count (> 0), or 0 once the peer has gone
/// (EOF, the ring's peer dead): a blocking read wakes on whichever comes
/// first. Throws PeerClosed (stream/peer_closed.h) for a peer that left with
/// what we sent it unread, std::system_error for other OS failures.
///
/// WARNING: one thread at a time.
class InputStream {
 public:
  using Deadline = std::optional<std::chrono::steady_clock::time_point>;

  virtual ~InputStream() = default;

  /// One attempt that never blocks: bytes read into `buf` (at most `len`,
  /// > 0), 0 at the end, -1 when nothing has arrived yet.
  virtual long try_read(std::byte* buf, std::size_t len) = 0;

  /// Blocks until at least one byte arrives or the peer has gone, then
  /// reads. With a deadline, throws TimedOut (stream/timed_out.h) once it
  /// passes with nothing read.
  virtual std::size_t read_blocking(std::byte* buf, std::size_t len, const Deadline& deadline) = 0;

  /// How many tries a spinning wait makes between two clock reads: 1 where
  /// a try is a system call (its cost dwarfs the clock's); more where a try
  /// is a load from memory, so that the clock does not stand between the
  /// bytes' arrival and the try that sees them.
  virtual unsigned tries_per_clock_read() const noexcept { return 1; }

  /// Whether a peer blocked on this stream is woken through the scheduler,
  /// whose choice of CPU placement steers (docs/PLACEMENT.md). A ring whose
  /// spinning peer sees a store has nothing to place.
  virtual bool placement_applies() const noexcept { return true; }

  /// True when a read would not block now (bytes, or the end), without
  /// reading anything.
  virtual bool readable_now() = 0;

  /// The process on the other end, for placement's following of the peer
  /// (docs/PLACEMENT.md); 0 when it cannot be told.
  virtual int peer_pid() const noexcept { return 0; }

  /// Says that `bytes` more bytes of one message are on their way: a stream
  /// may make room for them (a pipe grows). Never throws.
  virtual void expect(std::size_t bytes) noexcept { (void)bytes; }

  /// A descriptor poll(2) reports readable when a read would not block, or
  /// -1 if there is none (ByteStream's read-ahead while a write waits).
  virtual int poll_fd() const noexcept { return -1; }

  /// Adds what this stream counted (stream/stream_counters.h) to `into`.
  virtual void add_counters(StreamCounters& into) const noexcept { (void)into; }

  /// What the messages name the stream by ("fd 3", "ring").
  virtual const char* kind() const noexcept = 0;
};

}  // namespace spinrpc
