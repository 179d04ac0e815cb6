#pragma once

#include <sys/uio.h>  // iovec

#include <chrono>    // std::chrono::steady_clock
#include <optional>  // std::optional
#include <span>      // std::span

#include "stream/stream_counters.h"

namespace spinrpc {

/// Told right before a message's first byte is written: the peer may be
/// blocked waiting for it. SpinReader is one: a reply's write starts the
/// cycle placement times and may poke its occupier (docs/PLACEMENT.md).
class BeforeWrite {
 public:
  virtual void before_write() noexcept = 0;

 protected:
  ~BeforeWrite() = default;
};

/// The reason a write may not simply wait for the peer to take bytes: what
/// the peer sends meanwhile must be read, so that a peer that writes all its
/// requests before it reads a reply is not left blocked writing to us while
/// we block writing to it (BufferOptions::read_while_writing; docs/ASYNC.md,
/// "Replies and handlers"). Which input to watch is the stream's: whoever
/// makes a pair of streams that can read ahead tells the output stream
/// (fd_streams(), stream/fd_streams_posix.h).
class WhileWriteWaits {
 public:
  /// Reads what has arrived, never waiting; false once the input has ended.
  virtual bool read_ahead() = 0;

 protected:
  ~WhileWriteWaits() = default;
};

/// The writing end of a connection: whole messages, each given as parts.
/// It names no medium: a descriptor is one (FdOutputStream,
/// stream/fd_output_stream_posix.h); a ring in shared memory another.
///
/// WARNING: one thread at a time.
class OutputStream {
 public:
  using Deadline = std::optional<std::chrono::steady_clock::time_point>;

  virtual ~OutputStream() = default;

  /// Writes every byte of `parts` in order, after telling the BeforeWrite
  /// hook; blocks until the peer's side has taken them all. `parts` is used
  /// up. With `while_waiting`, reads ahead while the peer takes no bytes,
  /// where the stream was made to watch its input (else it only waits).
  /// Throws PeerClosed (stream/peer_closed.h) when the reader is gone,
  /// TimedOut (stream/timed_out.h) past the deadline where the stream can
  /// bound a write, std::system_error on other OS failures. SIGPIPE must be
  /// ignored or blocked by the process.
  virtual void write_all(std::span<iovec> parts, WhileWriteWaits* while_waiting = nullptr) = 0;

  /// Bounds the writes that follow (std::nullopt: unbounded).
  virtual void set_deadline(const Deadline& deadline) noexcept = 0;

  /// True while a write may have lent the caller's memory to the peer
  /// (BufferOptions::LargeWrites::lend): the bytes must stay as they are
  /// until the peer's next bytes arrive.
  virtual bool lends_callers_memory() const noexcept { return false; }

  /// Called before waiting for the peer's next message: memory lent to the
  /// peer that it has read is ours again.
  virtual void reclaim_lent() noexcept {}

  /// Adds what this stream counted (stream/stream_counters.h) to `into`.
  virtual void add_counters(StreamCounters& into) const noexcept { (void)into; }

  /// Sets the hook told before each message (one; null for none).
  void set_before_write(BeforeWrite* hook) noexcept { before_write_ = hook; }

 protected:
  void notify_before_write() noexcept {
    if (before_write_ != nullptr) before_write_->before_write();
  }

 private:
  BeforeWrite* before_write_ = nullptr;
};

}  // namespace spinrpc
