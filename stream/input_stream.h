#pragma once

#include <chrono>    // std::chrono::steady_clock
#include <cstddef>   // std::byte, std::size_t
#include <optional>  // std::optional

#include "stream/stream_counters.h"

namespace spinrpc {

/// Who is on the other end of a connection, for placement's following of
/// the peer (docs/PLACEMENT.md). Offered by a stream that can tell
/// (StreamTraits::peer): a descriptor's SO_PEERCRED or pipe ancestry.
class PeerLookup {
 public:
  /// The peer's pid, 0 when it cannot be told. May read /proc: not for
  /// the hot path.
  virtual int peer_pid() const noexcept = 0;

 protected:
  ~PeerLookup() = default;
};

/// Told when a message's size is known before all of it has arrived, so
/// that the stream may make room for it. Offered by a stream that can
/// (StreamTraits::size_hint): a pipe the stream's owner created grows.
class MessageSizeHint {
 public:
  /// A message of `message_bytes` in all is arriving, `buffered_bytes` of
  /// it read already. Never throws; a refusal leaves the stream as it is.
  virtual void message_arriving(std::size_t message_bytes, std::size_t buffered_bytes) noexcept = 0;

 protected:
  ~MessageSizeHint() = default;
};

/// What an InputStream is, beyond its reads: fixed when the stream is made,
/// read without a virtual call (InputStream::traits()).
struct StreamTraits {
  /// What one try costs. The wait rule reads the clock once per try on a
  /// system call (its cost dwarfs the clock's) and makes
  /// SpinReader::kMemoryTriesPerClockRead tries per clock read on a load
  /// from memory, so that the clock does not stand between the bytes'
  /// arrival and the try that sees them; and placement (docs/PLACEMENT.md)
  /// applies only to a system call, whose blocked peer the scheduler wakes:
  /// a spinning peer of a ring sees a store and has nothing to place.
  enum class Tries { system_call, memory_load };
  Tries tries = Tries::system_call;
  /// What stats name the transport by (ChannelStats::transport):
  /// "descriptor", "shared memory".
  const char* name = "descriptor";
  /// Where the peer's pid is found; null when the stream cannot tell.
  /// Borrowed: lives as long as the stream.
  const PeerLookup* peer = nullptr;
  /// Where a message's size is announced; null when the stream has nothing
  /// to make room with. Borrowed: lives as long as the stream.
  MessageSizeHint* size_hint = nullptr;
};

/// The reading end of a connection, as the wait rule sees it: something that
/// can be tried once without blocking and blocked on (docs/SPIN.md#the-rule).
/// SpinReader (wait/spin_reader.h) decides when to try and when to block;
/// an InputStream only says how. It names no medium: a descriptor is one
/// (FdInputStream, stream/fd_input_stream_posix.h); a ring in shared
/// memory, with a pipe beside it to sleep on and to see the peer's death,
/// is another (stream/shm_streams_linux.h).
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

  explicit InputStream(const StreamTraits& traits) noexcept : traits_(traits) {}
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;
  virtual ~InputStream() = default;

  /// One attempt that never blocks: bytes read into `buf` (at most `len`,
  /// > 0), 0 at the end, -1 when nothing has arrived yet.
  virtual long try_read(std::byte* buf, std::size_t len) = 0;

  /// Blocks until at least one byte arrives or the peer has gone, then
  /// reads. With a deadline, throws TimedOut (stream/timed_out.h) once it
  /// passes with nothing read.
  virtual std::size_t read_blocking(std::byte* buf, std::size_t len, const Deadline& deadline) = 0;

  /// True when a read would not block now (bytes, or the end), without
  /// reading anything.
  virtual bool readable_now() = 0;

  /// What this stream is (StreamTraits); a plain load, no virtual call.
  const StreamTraits& traits() const noexcept { return traits_; }

  /// Adds what this stream counted (stream/stream_counters.h) to `into`.
  virtual void add_counters(StreamCounters& into) const noexcept { (void)into; }

 protected:
  /// For a stream whose traits point at itself (StreamTraits::peer,
  /// size_hint), set in its constructor.
  StreamTraits& mutable_traits() noexcept { return traits_; }

 private:
  StreamTraits traits_;
};

}  // namespace spinrpc
