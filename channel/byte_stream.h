#pragma once

#include <sys/uio.h>  // iovec

#include <array>     // std::array
#include <chrono>    // std::chrono::steady_clock
#include <cstddef>   // std::byte, std::size_t
#include <cstdint>   // std::uint64_t
#include <memory>    // std::unique_ptr
#include <optional>  // std::optional
#include <span>      // std::span
#include <string_view>  // std::string_view
#include <vector>    // std::vector

#include "wait/channel_stats.h"
#include "descriptor/lent_copies.h"
#include "descriptor/page_offset_bytes.h"
#include "descriptor/pipe.h"
#include "wait/spin_policy.h"
#include "channel/spin_reader.h"
#include "descriptor/unique_fd.h"
#include "protocol/frame.h"

namespace spinrpc {

/// How a ByteStream buffers.
struct BufferOptions {
  /// Initial read buffer, in bytes; also the read-ahead per read(2) for
  /// small messages. 64 KiB holds one pipe's worth (the Linux default pipe
  /// capacity), so a burst never needs two reads.
  std::size_t initial_buffer_bytes = std::size_t{64} << 10;
  /// A read buffer grown beyond this many bytes for big messages is given
  /// back once a message that did not need it (at most this many bytes)
  /// has been read, so one 200 MiB message does not pin 200 MiB for the
  /// rest of the session (it does until the next message comes), while a
  /// run of big messages reuses one buffer: a fresh buffer for each cost
  /// spinrpc-server a page fault per 4 KiB, 4,098 per 16 MiB echo
  /// (docs/NODE.md, "The reply's pages"). Growth up to it is kept, so
  /// steady traffic of 1 MiB messages never reallocates.
  std::size_t retained_buffer_bytes = std::size_t{16} << 20;
  /// How write_all() puts parts of kLendMinBytes or more into a pipe or
  /// FIFO (a socket always takes copies). A pipe's own pages cost the reader
  /// ~3x more to copy from than pages lent to it, and a pipe lets one side
  /// copy at a time: a 1 MiB echo over two pipes in C took 1.3 ms copied,
  /// 0.45 ms lent, 0.38 ms over a socket pair (docs/NODE.md, "Large
  /// payloads").
  enum class LargeWrites {
    /// writev(2): the pipe copies them into pages of its own.
    copy,
    /// vmsplice(2) of the caller's memory: the pipe refers to it and the
    /// reader copies straight out of it. The contract: those bytes must
    /// not change, nor their memory be freed, until the peer has read
    /// them. A request–reply client gives that when it changes a buffer it
    /// wrote from only after the peer's next message has arrived (the
    /// client shim does; this stream's own read buffers are kept until
    /// then). A writer that pipelines out of a reused buffer must not.
    lend,
    /// Copied into buffers of this stream's own, which are lent; a buffer
    /// is written again only once the pipe is seen empty (FIONREAD), so the
    /// caller's memory is free at once, whatever the peer sends meanwhile
    /// (spinrpc-server's Responses; a client may pipeline). Needs a reader
    /// that copies out with read(2): one that splices or tees the pipe
    /// would carry the pages on, and see them change.
    lend_copies,
  };
  LargeWrites large_writes = LargeWrites::copy;
  /// While a write waits for the peer to take bytes, read what the peer
  /// sends into the read buffer, so that a peer that writes all its
  /// requests before it reads a reply is not left blocked writing while we
  /// block writing to it (tsgo's --async reads on a goroutine of its own;
  /// docs/ASYNC.md, "Replies and handlers"). Writes then go through a
  /// non-blocking description of our own for a pipe or FIFO (opened again
  /// through /proc, the fd left as found) or MSG_DONTWAIT for a socket; a
  /// file or terminal is written as before. Large writes are copied. What
  /// is read ahead is bounded only by max_message_bytes per message, as
  /// tsgo buffers it. A view of the last message read stays valid across
  /// such a write only under a Hold (hold()). For spinrpc-server --async.
  bool read_while_writing = false;
  /// When a message bigger than what the read pipe holds is on its way
  /// (ByteStream::expect), grow that pipe (F_SETPIPE_SZ, up to
  /// ByteStream::kMaxPipeBytes) so that a writer that copies into it waits
  /// for us once per pipeful. tsgo writes each reply with one write(2): a
  /// 16 MiB one through a 64 KiB pipe slept and was woken 256 times
  /// (binding → tsgo, 16 MiB binary echo, median 17.5 ms; 12.5 with the
  /// pipe grown; docs/NODE.md, "tsgo's big replies").
  /// Only for a pipe the owner of the stream created (the client shim's
  /// child's stdout): a server leaves the pipes it is handed as they are.
  /// A refusal (pipe-max-size, the user's pipe budget, not a pipe) leaves
  /// the fd as it is.
  bool grow_read_pipe = false;
};

/// The bytes under a framing: a read buffer over one fd, filled through a
/// SpinReader (the wait policy), and gathered writes to another fd (the same
/// fd twice for a socket). Knows nothing of message formats: a framing
/// (FdChannel's MessagePack frames, or another) decodes in place from
/// buffered(), asks fill() for more, and consume()s what it has used, so
/// the messages it hands out are views into the buffer, never copies.
///
/// Buffered bytes stay where they are until the next fill(); a Hold keeps
/// them there longer. Moves are member-wise. Neither fd's flags are changed
/// (SpinReader).
///
/// WARNING: one thread at a time.
class ByteStream {
 public:
  /// The smallest part write_all() lends to a pipe (BufferOptions::
  /// large_writes): one default pipe's capacity. Below it, copying
  /// costs less than pinning pages (a small message's round trip is
  /// unchanged).
  static constexpr std::size_t kLendMinBytes = kDefaultPipeBytes;
  /// How far a lent write grows its pipe (F_SETPIPE_SZ) to take a big part
  /// in one go: Linux's default pipe-max-size. A 64 KiB pipe holds 16
  /// lent pages, so a 1 MiB part took 16 wake-ups of each side (1 MiB
  /// echo in C: 0.45 ms; with 1 MiB pipes 0.17 ms). Only pipes that carry
  /// a big message grow, so a user's pipe-user-pages-soft budget is spent
  /// on those alone.
  static constexpr std::size_t kMaxPipeBytes = std::size_t{1} << 20;
  /// LargeWrites::lend_copies copies a big part this many bytes at a time,
  /// each step just before it is lent, so that the reader starts on the
  /// first while the rest is copied.
  static constexpr std::size_t kLendStepBytes = std::size_t{256} << 10;

  /// Owns both fds. Throws std::system_error if `in` is not an open fd.
  ByteStream(UniqueFd in, UniqueFd out, BufferOptions buffer, SpinPolicy spin);

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
  /// message whose first bytes are in (FdChannel with a PayloadSink).
  /// Returns the byte count read, 0 at EOF; throws as fill().
  std::size_t read_direct(std::byte* buf, std::size_t len);

  /// Says that a message of `bytes` in all (header included) is arriving,
  /// some of it still unread: with BufferOptions::grow_read_pipe, grows the
  /// read pipe for it. Cheap when called again for the same message.
  void expect(std::size_t bytes);

  /// Writes every byte of `parts` in order; blocks until the kernel has taken
  /// them all (waiting for POLLOUT if the fd is non-blocking). One write(2)
  /// of the parts copied together when they total at most 4 KiB (cheaper
  /// than writev's iovec import), else one writev(2); more only if the
  /// kernel takes part. On a pipe, parts of kLendMinBytes or more go in as
  /// BufferOptions::large_writes says. `parts` is used up in the process.
  /// Throws PeerClosed on EPIPE/ECONNRESET, std::system_error on other OS
  /// failures. SIGPIPE must be ignored or blocked by the process.
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
  /// `deadline`, or a write on a non-blocking fd still waiting for room then,
  /// throws TimedOut (wait/timed_out.h). std::nullopt removes the bound.
  /// A blocking out fd cannot be bounded: a caller that needs writes bounded
  /// makes its own out fd non-blocking (SyncRpcChannel does for its pipe).
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
    reader_.set_deadline(deadline);
    write_deadline_ = deadline;
  }

  /// The reader's counters and spin policy.
  const ChannelStats& stats() const noexcept { return reader_.stats(); }

  /// The read buffer's size now, in bytes (BufferOptions::retained_buffer_bytes
  /// says when it shrinks back).
  std::size_t read_buffer_bytes() const noexcept { return capacity_; }

  /// The borrowed descriptors (owned by this stream).
  int in_fd() const noexcept { return reader_.fd(); }
  int out_fd() const noexcept { return out_.get(); }

 private:
  // Read buffers start kReadPageOffset past a page boundary: the kernel's
  // copy out of a pipe slows down threefold when the destination lies just
  // past the source within a page (descriptor/page_offset_bytes.h).
  using ReadBuffer = PageOffsetBytes;

  void release_hold(std::size_t saved_floor, std::uint64_t saved_generation) noexcept;
  // LargeWrites::lend on a pipe: what we lent is the caller's memory (or
  // our read buffers), kept until the peer's next bytes (parked_).
  bool lends_callers_memory() const noexcept { return lend_ && !lent_copies_; }
  // After a read of `n` bytes from the peer: frees parked buffers.
  void after_read(std::size_t n) noexcept;
  // write_all's two ways in: copied (writev) and lent (vmsplice).
  void write_copied(iovec* iov, int count);
  // BufferOptions::read_while_writing: picks write_with_ from out_'s type.
  void choose_write();
  // One write(2)/writev(2)/sendmsg(2) of write_copied's, as write_with_ says.
  ssize_t write_once(const iovec* iov, int count);
  // Until out_ can take bytes (or the deadline): with read_while_writing,
  // reads what the peer sends meanwhile into the read buffer.
  void wait_until_writable();
  // Reads what has arrived, without waiting, into the read buffer.
  void read_ahead();
  void write_lent(iovec part);
  // Makes room for `need` bytes from begin_; may move, grow or replace the buffer.
  void reserve_for(std::size_t need);
  void replace_buffer(std::size_t capacity);
  // A read buffer of `capacity` bytes for a message that needs `need`.
  // Throws std::system_error (ENOMEM) naming both when memory is short (a
  // frame within max_message_bytes under `ulimit -v`: std::bad_alloc had
  // ended the server with SIGABRT; found by a break-it pass).
  static ReadBuffer allocate_read_buffer(std::size_t capacity, std::size_t need);
  std::size_t initial_capacity() const noexcept;

  SpinReader reader_;  // owns the read fd; waits on it by the spin policy
  std::array<std::byte, 4096> gather_;  // write_copied: a small message's parts, made one
  UniqueFd out_;
  std::optional<std::chrono::steady_clock::time_point> write_deadline_;  // see set_deadline()
  // BufferOptions::read_while_writing: how a write avoids blocking, and
  // whether the peer's input has ended (nothing more to read ahead).
  enum class WriteWith { as_found, own_nonblocking, send_dontwait };
  WriteWith write_with_ = WriteWith::as_found;
  UniqueFd nonblocking_out_;  // with own_nonblocking: out_'s pipe, opened again O_NONBLOCK
  bool input_ended_ = false;
  BufferOptions options_;
  bool lend_ = false;  // large_writes lends and out_ is a pipe: vmsplice big parts
  std::optional<LentCopies> lent_copies_;  // LargeWrites::lend_copies on a pipe
  std::size_t out_pipe_bytes_ = 0;  // out_'s capacity as last set or read; 0 = unknown
  std::size_t in_pipe_bytes_ = 0;   // the same for the read fd (grow_read_pipe)
  ReadBuffer buffer_;            // uninitialised storage, capacity_ bytes
  std::size_t capacity_ = 0;
  std::size_t largest_need_ = 0;  // the most fill() was asked for since the last rewind
  std::size_t begin_ = 0;       // first unconsumed byte
  std::size_t end_ = 0;         // one past the last byte read
  std::size_t floor_ = 0;       // bytes below this offset are held and never moved
  unsigned holds_ = 0;          // live Holds
  std::uint64_t generation_ = 0;  // counts buffers replaced while held
  std::vector<ReadBuffer> retired_;  // replaced buffers that Holds still view
  // With lend_: buffers given up while a write may still lend from them;
  // freed once the peer's next bytes arrive (it has read what we lent).
  std::vector<ReadBuffer> parked_;
};

}  // namespace spinrpc
