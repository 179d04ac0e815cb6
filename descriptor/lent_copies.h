#pragma once

#include <cstddef>  // std::byte, std::size_t
#include <memory>   // std::unique_ptr
#include <vector>   // std::vector

#include "descriptor/page_offset_bytes.h"

namespace spinrpc {

/// The buffers a ByteStream lends to a pipe in place of the caller's bytes
/// (BufferOptions::LargeWrites::lend_copies). A buffer lent may be referred
/// to by the pipe until the reader has copied it out; it is written again
/// only after the pipe has been seen empty (ioctl FIONREAD 0: all we put
/// in was read). The one kept for reuse stays warm, which is the point:
/// fresh pages for every big reply cost a page fault each (docs/NODE.md,
/// "Large payloads").
///
/// WARNING: one thread at a time.
class LentCopies {
 public:
  /// At most kMaxLent buffers may be in the pipe at once; a writer asking
  /// for more copies into the pipe instead (take() returns null). A
  /// request–reply peer has at most one reply in the pipe.
  static constexpr std::size_t kMaxLent = 2;

  /// `retained_bytes`: a buffer larger than this is freed, not kept, once
  /// the pipe is seen empty (BufferOptions::retained_buffer_bytes).
  explicit LentCopies(std::size_t retained_bytes) noexcept : retained_bytes_(retained_bytes) {}

  /// Memory for `bytes` bytes that nothing in the pipe refers to, counted
  /// as lent from now on; null when kMaxLent buffers may still be in the
  /// pipe. Throws std::bad_alloc. Call reclaim_if_read() first, before any
  /// byte of the message is written: the pipe then holds only what was
  /// written before.
  std::byte* take(std::size_t bytes);

  /// Makes the lent buffers ours again if the pipe is empty (one ioctl,
  /// only while something is lent). The byte stream asks before it writes
  /// a message, and before it waits for the peer's next one, so a big
  /// buffer is not kept lent (and held) for a whole idle spell. Asked with
  /// the message's header already in the pipe, a request–reply reader
  /// that had not taken the header yet would cost a second buffer, and the
  /// next reply would be copied (docs/NODE.md, "Large payloads").
  void reclaim_if_read(int pipe_fd);

 private:
  struct Buffer {
    PageOffsetBytes bytes;  // at kLendPageOffset: see descriptor/page_offset_bytes.h
    std::size_t capacity = 0;
  };
  std::size_t retained_bytes_;
  Buffer spare_;               // not in the pipe: written by the next take()
  std::vector<Buffer> lent_;   // may be in the pipe
};

}  // namespace spinrpc
