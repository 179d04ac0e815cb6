#pragma once

#include <sys/types.h>  // ssize_t
#include <sys/uio.h>    // iovec

#include <array>     // std::array
#include <cstddef>   // std::byte, std::size_t
#include <cstdint>   // std::uint64_t
#include <optional>  // std::optional
#include <span>      // std::span

#include "descriptor/lent_copies.h"
#include "descriptor/pipe.h"
#include "descriptor/unique_fd.h"
#include "stream/buffer_options.h"
#include "stream/output_stream.h"

namespace spinrpc {

/// An OutputStream over one descriptor. A message is one write(2) of its
/// parts copied together when they total at most 4 KiB (cheaper than
/// writev's iovec import), else one writev(2); more only if the kernel
/// takes part. On a pipe, parts of kLendMinBytes or more go in as
/// BufferOptions::large_writes says. Blocks until the kernel has taken all
/// (waiting for POLLOUT if the descriptor is non-blocking, until the
/// deadline if one is set: a blocking descriptor cannot be bounded, so a
/// caller that needs bounded writes hands over a non-blocking one, as
/// SyncRpcChannel does). The descriptor's flags are never changed.
///
/// POSIX: a Windows handle would be a sibling (`*_win32`), not a branch
/// here (docs/CONVENTIONS.md#platforms).
class FdOutputStream final : public OutputStream {
 public:
  /// The smallest part lent to a pipe: one default pipe's capacity. Below
  /// it, copying costs less than pinning pages.
  static constexpr std::size_t kLendMinBytes = kDefaultPipeBytes;
  /// LargeWrites::lend_copies copies a big part this many bytes at a time,
  /// each step just before it is lent, so that the reader starts on the
  /// first while the rest is copied.
  static constexpr std::size_t kLendStepBytes = std::size_t{256} << 10;

  /// Takes `out` (may be empty: a stream that is never written). Uses
  /// options.large_writes, read_while_writing and retained_buffer_bytes.
  /// `read_ahead_fd` (borrowed, -1: none): the input watched while a write
  /// waits and a WhileWriteWaits was given; it must outlive this stream's
  /// writes (fd_streams() passes its own input's).
  FdOutputStream(UniqueFd out, const BufferOptions& options, int read_ahead_fd = -1);

  void write_all(std::span<iovec> parts, WhileWriteWaits* while_waiting = nullptr) override;
  void set_deadline(const Deadline& deadline) noexcept override { deadline_ = deadline; }
  bool lends_callers_memory() const noexcept override { return lend_ && !lent_copies_; }
  void reclaim_lent() noexcept override;
  void add_counters(StreamCounters& into) const noexcept override {
    into.lent_parts += lent_parts_;
    into.unlent_parts += unlent_parts_;
  }

  /// The descriptor written to (owned).
  int fd() const noexcept { return out_.get(); }

 private:
  enum class WriteWith { as_found, own_nonblocking, send_dontwait };
  void write_copied(iovec* iov, int count, WhileWriteWaits* while_waiting);
  void write_lent(iovec part, WhileWriteWaits* while_waiting);
  // One write(2)/writev(2)/sendmsg(2), as write_with_ says.
  ssize_t write_once(const iovec* iov, int count);
  // Until out_ can take bytes (or the deadline), reading ahead meanwhile
  // when asked to.
  void wait_until_writable(WhileWriteWaits* while_waiting);

  UniqueFd out_;
  int read_ahead_fd_;  // borrowed: the input watched while a write waits (-1: none)
  Deadline deadline_;
  std::array<std::byte, 4096> gather_;  // a small message's parts, made one
  WriteWith write_with_ = WriteWith::as_found;
  UniqueFd nonblocking_out_;  // with own_nonblocking: out_'s pipe, opened again O_NONBLOCK
  bool input_ended_ = false;  // read-ahead met the end of input: watch it no more
  bool lend_ = false;  // large_writes lends and out_ is a pipe: vmsplice big parts
  std::optional<LentCopies> lent_copies_;  // LargeWrites::lend_copies on a pipe
  std::size_t pipe_bytes_ = 0;  // out_'s capacity as last set or read; 0 = unknown
  std::uint64_t lent_parts_ = 0;    // parts lent (vmsplice)
  std::uint64_t unlent_parts_ = 0;  // big parts copied although lending is on
};

}  // namespace spinrpc
