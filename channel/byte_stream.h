#pragma once

#include <sys/uio.h>  // iovec

#include <array>     // std::array
#include <chrono>    // std::chrono::steady_clock
#include <cstddef>   // std::byte, std::size_t
#include <cstdint>   // std::uint64_t
#include <functional>  // std::function
#include <memory>    // std::unique_ptr
#include <optional>  // std::optional
#include <span>      // std::span
#include <string>    // std::string
#include <string_view>  // std::string_view
#include <vector>    // std::vector

#include "descriptor/page_offset_bytes.h"
#include "protocol/frame.h"
#include "stream/buffer_options.h"
#include "stream/streams.h"
#include "wait/channel_stats.h"
#include "wait/spin_policy.h"
#include "wait/spin_reader.h"

namespace spinrpc {

/// The bytes under a framing: a read buffer over a connection's
/// InputStream, filled through a SpinReader (the wait policy), and whole
/// messages written to its OutputStream. Knows nothing of message formats
/// nor of what carries the bytes: a framing (FrameChannel's MessagePack
/// frames, or another) decodes in place from buffered(), asks fill() for
/// more, and consume()s what it has used, so the messages it hands out are
/// views into the buffer, never copies.
///
/// The OutputStream's BeforeWrite hook is the SpinReader: a message's write
/// starts the cycle placement times (docs/PLACEMENT.md).
///
/// Buffered bytes stay where they are until the next fill(); a Hold keeps
/// them there longer. Moves are member-wise (the streams and the reader
/// live on the heap, so the hook stays valid).
///
/// WARNING: one thread at a time.
class ByteStream {
 public:
  /// Reads `streams.in` by `spin`, writes `streams.out` (both not null).
  ByteStream(Streams streams, BufferOptions buffer, SpinPolicy spin);

  /// The bytes read and not yet consumed.
  ByteView buffered() const noexcept { return {buffer_.get() + begin_, end_ - begin_}; }

  /// Marks the first `bytes` of buffered() as used. Their views stay valid
  /// until the next fill() (or longer under a Hold).
  void consume(std::size_t bytes) noexcept { begin_ += bytes; }

  /// Makes room for `need` buffered bytes in all (never fewer than one more
  /// than buffered() holds), then waits by the spin policy and reads once.
  /// Returns the byte count read, 0 at EOF. Views into the buffer that no
  /// Hold covers become invalid. Throws TimedOut past the read deadline,
  /// std::system_error on an OS failure.
  std::size_t fill(std::size_t need);

  /// Reads once, by the spin policy, straight into `buf` (`len` > 0 bytes
  /// at most) instead of the buffer, which must hold no byte of what comes
  /// next: it stays as it is, views into it included. For the rest of a
  /// message whose first bytes are in (FrameChannel with a PayloadSink).
  /// Returns the byte count read, 0 at EOF; throws as fill().
  std::size_t read_direct(std::byte* buf, std::size_t len);

  /// Says that a message of `bytes` in all (header included) is arriving,
  /// some of it still unread: an InputStream that can make room for it
  /// is told (StreamTraits::size_hint; a pipe grows by its own rule).
  void expect(std::size_t bytes);

  /// Writes every byte of `parts` in order to the OutputStream (see
  /// OutputStream::write_all for what it blocks on and throws); with
  /// BufferOptions::read_while_writing, reads ahead into the buffer while
  /// the peer takes no bytes. `parts` is used up in the process.
  void write_all(std::span<iovec> parts);

  /// Keeps the first `bytes` of buffered() at their address until the Hold
  /// is destroyed, although fill() runs meanwhile: a server handler keeps
  /// its request while it Calls back into the client. Holds nest and end in
  /// reverse order. Costs nothing unless the buffer must grow while held;
  /// then the old buffer is kept until the last Hold ends. The stream must
  /// not be moved while a Hold lives (the Hold points at it).
  class Hold {
   public:
    Hold(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    Hold& operator=(Hold&&) = delete;
    ~Hold();

   private:
    friend class ByteStream;
    Hold(ByteStream* stream, std::size_t floor, std::uint64_t generation) noexcept
        : stream_(stream), saved_floor_(floor), saved_generation_(generation) {}
    ByteStream* stream_;             // null once moved from
    std::size_t saved_floor_;        // floor_ to restore on release
    std::uint64_t saved_generation_; // buffer generation when taken
  };
  [[nodiscard]] Hold hold(std::size_t bytes) noexcept;

  /// Bounds the fills and writes that follow: a fill that has no byte by
  /// `deadline`, or a write still waiting for room then where the
  /// OutputStream can bound it, throws TimedOut (stream/timed_out.h).
  /// std::nullopt removes the bound.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
    reader_->set_deadline(deadline);
    out_->set_deadline(deadline);
  }

  /// Records the reader's waits in `ring` (SpinReader::set_trace).
  void set_trace(trace::Ring* ring) noexcept { reader_->set_trace(ring); }

  /// The reader's counters and spin policy, with the writer's counters.
  const ChannelStats& stats() const noexcept;

  /// The read buffer's size now, in bytes (BufferOptions::retained_buffer_bytes
  /// says when it shrinks back).
  std::size_t read_buffer_bytes() const noexcept { return capacity_; }

  /// Moves onto the Streams `make` returns, given the ones in use (which it
  /// may keep: a ring keeps the pipes for the peer's liveness). Nothing may
  /// be buffered that the old input was to carry on; the buffer, the wait
  /// policy, its counters and the deadline (set_deadline) carry on. `reason`
  /// says why, in stats().
  void replace_streams(const std::function<Streams(Streams)>& make, std::string reason);

  /// Says why the channel is on the transport it is on (ChannelStats::
  /// transport_reason), when it stays there.
  void set_transport_reason(std::string reason) { transport_reason_ = std::move(reason); }

  /// The streams (owned by this ByteStream).
  InputStream& input() noexcept { return reader_->input(); }
  OutputStream& output() noexcept { return *out_; }

 private:
  // Read buffers start kReadPageOffset past a page boundary: the kernel's
  // copy out of a pipe slows down threefold when the destination lies just
  // past the source within a page (descriptor/page_offset_bytes.h).
  using ReadBuffer = PageOffsetBytes;

  void release_hold(std::size_t saved_floor, std::uint64_t saved_generation) noexcept;
  // After a read of `n` bytes from the peer: frees parked buffers.
  void after_read(std::size_t n) noexcept;
  // BufferOptions::read_while_writing: reads what has arrived, without
  // waiting, into the read buffer while a write waits.
  class ReadAhead;
  // Makes room for `need` bytes from begin_; may move, grow or replace the buffer.
  void reserve_for(std::size_t need);
  void replace_buffer(std::size_t capacity);
  // A read buffer of `capacity` bytes for a message that needs `need`.
  // Throws std::system_error (ENOMEM) naming both when memory is short (a
  // frame within max_message_bytes under `ulimit -v`), never bad_alloc.
  static ReadBuffer allocate_read_buffer(std::size_t capacity, std::size_t need);
  std::size_t initial_capacity() const noexcept;

  std::unique_ptr<SpinReader> reader_;  // owns the InputStream; the OutputStream's BeforeWrite hook
  std::unique_ptr<OutputStream> out_;
  std::string transport_reason_;  // ChannelStats::transport_reason
  BufferOptions options_;
  ReadBuffer buffer_;            // uninitialised storage, capacity_ bytes
  std::size_t capacity_ = 0;
  std::size_t largest_need_ = 0;  // the most fill() was asked for since the last rewind
  std::size_t begin_ = 0;       // first unconsumed byte
  std::size_t end_ = 0;         // one past the last byte read
  std::size_t floor_ = 0;       // bytes below this offset are held and never moved
  unsigned holds_ = 0;          // live Holds
  std::uint64_t generation_ = 0;  // counts buffers replaced while held
  std::vector<ReadBuffer> retired_;  // replaced buffers that Holds still view
  // Buffers given up while a write may still lend from them;
  // freed once the peer's next bytes arrive (it has read what we lent).
  std::vector<ReadBuffer> parked_;
};

}  // namespace spinrpc
