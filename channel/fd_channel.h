#pragma once

#include <cstddef>   // std::byte, std::size_t
#include <cstdint>   // std::uint64_t
#include <memory>    // std::unique_ptr
#include <optional>  // std::optional
#include <vector>    // std::vector

#include "channel/channel_stats.h"
#include "channel/spin_policy.h"
#include "channel/spin_reader.h"
#include "channel/unique_fd.h"
#include "protocol/frame.h"

namespace spinrpc {

/// How an FdChannel buffers and what it accepts.
struct ChannelOptions {
  /// Frame size limit, checked before any buffer grows (protocol/frame.h).
  Limits limits;
  /// Initial read buffer, in bytes; also the read-ahead per read(2) for
  /// small frames. 64 KiB holds one pipe's worth (the Linux default pipe
  /// capacity), so a burst never needs two reads.
  std::size_t initial_buffer_bytes = std::size_t{64} << 10;
  /// A read buffer grown beyond this many bytes for one big frame is given
  /// back once that frame is consumed, so one 200 MiB message does not pin
  /// 200 MiB for the rest of the session. Growth up to it is kept, so
  /// steady traffic of 1 MiB messages never reallocates.
  std::size_t retained_buffer_bytes = std::size_t{16} << 20;
  /// How the reader waits for bytes. The default (budget 0) is a plain
  /// blocking read; spinrpc-server and SyncRpcChannel pass
  /// resolve_spin_policy() (channel/spin_config.h).
  SpinPolicy spin;
};

/// Reads and writes whole frames over a pair of file descriptors (the same
/// fd twice for a socket). Reads are buffered: one read(2) takes whatever
/// the kernel holds, up to the buffer's free space, and frames are decoded
/// in place, so name and payload are views, never copies. Each write is one
/// writev(2) of header, name and payload (more only if the kernel takes part).
///
/// Views returned by a read stay valid until the next read on this channel,
/// unless a Hold keeps them longer (see hold_frame()).
///
/// Waiting for bytes follows options.spin (SpinReader): with a budget, the
/// reader polls for up to that many µs before it blocks; writes never spin.
///
/// WARNING: one thread at a time. Separate channels are independent.
class FdChannel {
 public:
  /// Owns both fds. For a socket, pass two UniqueFds holding dup'ed fds.
  /// Throws std::system_error if `in`'s flags cannot be read or set (the
  /// spin reader switches O_NONBLOCK on it), so `in` must be a valid fd.
  FdChannel(UniqueFd in, UniqueFd out, ChannelOptions options = {});
  FdChannel(FdChannel&&) noexcept;
  FdChannel& operator=(FdChannel&&) noexcept;
  ~FdChannel();

  /// Returns the next frame, blocking until it is whole. Returns std::nullopt
  /// on EOF between frames (the peer simply exited). Throws PeerClosed on EOF
  /// inside a frame, ProtocolError on malformed bytes or a frame over
  /// options.limits, std::system_error on an OS failure.
  std::optional<FrameView> try_read_frame();

  /// As try_read_frame(), but EOF between frames also throws PeerClosed.
  FrameView read_frame();

  /// Writes one whole frame; blocks until the kernel has taken all of it
  /// (waiting for POLLOUT if the fd is non-blocking). Throws PeerClosed on
  /// EPIPE/ECONNRESET, std::length_error for a field of 4 GiB or more,
  /// std::system_error on other OS failures. SIGPIPE must be ignored or
  /// blocked by the process (the server and the client shim both see to it).
  void write_frame(MessageType type, ByteView name, ByteView payload);

  /// Keeps the frame returned by the last read valid until the Hold is
  /// destroyed, although further frames are read meanwhile: a server handler
  /// keeps its request's payload while it Calls back into the client. Frames
  /// read while the Hold lives are not covered: each stays valid until the
  /// next read, as usual, unless it is held too. Holds nest and end in
  /// reverse order. Costs nothing unless the buffer must grow while held;
  /// then the old buffer is kept until the last Hold ends. The channel must
  /// not be moved while a Hold lives (the Hold points at it).
  class Hold {
   public:
    Hold(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    Hold& operator=(Hold&&) = delete;
    ~Hold();

   private:
    friend class FdChannel;
    Hold(FdChannel* channel, std::size_t floor, std::uint64_t generation) noexcept
        : channel_(channel), saved_floor_(floor), saved_generation_(generation) {}
    FdChannel* channel_;             // null once moved from
    std::size_t saved_floor_;        // floor_ to restore on release
    std::uint64_t saved_generation_; // buffer generation when taken
  };
  [[nodiscard]] Hold hold_frame() noexcept;

  /// Bounds the reads that follow: a read that has no byte by `deadline`
  /// throws TimedOut (channel/timed_out.h), after which the channel is not
  /// usable. std::nullopt removes the bound. Writes are not bounded.
  void set_read_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
    reader_.set_deadline(deadline);
  }

  /// The reader's counters and spin policy (docs/SPIN.md#counters).
  const ChannelStats& stats() const noexcept { return reader_.stats(); }

  /// The borrowed descriptors (owned by this channel).
  int in_fd() const noexcept { return in_.get(); }
  int out_fd() const noexcept { return out_.get(); }

 private:
  void release_hold(std::size_t saved_floor, std::uint64_t saved_generation) noexcept;
  // Makes room for `need` bytes from begin_; may move, grow or replace the buffer.
  void reserve_for(std::size_t need);
  void replace_buffer(std::size_t capacity);
  std::size_t initial_capacity() const noexcept;
  std::size_t read_some();

  UniqueFd in_;
  UniqueFd out_;
  ChannelOptions options_;
  SpinReader reader_;  // waits on in_ by options_.spin
  std::unique_ptr<std::byte[]> buffer_;  // uninitialised storage, capacity_ bytes
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;       // first unconsumed byte
  std::size_t end_ = 0;         // one past the last byte read
  std::size_t frame_size_ = 0;  // bytes of the frame last returned; consumed at the next read
  std::size_t floor_ = 0;       // bytes below this offset are held and never moved
  unsigned holds_ = 0;          // live Holds
  std::uint64_t generation_ = 0;  // counts buffers replaced while held
  std::vector<std::unique_ptr<std::byte[]>> retired_;  // replaced buffers that Holds still view
};

}  // namespace spinrpc
