#pragma once

#include <cstddef>  // std::byte, std::size_t

#include "descriptor/unique_fd.h"
#include "stream/input_stream.h"

namespace spinrpc {

/// An InputStream over one descriptor: a pipe, a FIFO, a socket, a file or
/// a terminal. Its flags are never changed (descriptor/nonblocking_access.h).
/// A try is one system call that cannot block: read(2) on our own
/// non-blocking description of a pipe or FIFO; recv(MSG_DONTWAIT) on a
/// socket; otherwise preadv2(RWF_NOWAIT), or where that is refused (a
/// terminal) poll(2) with timeout 0 and a read only when it reports
/// something. Blocking is a plain read on the descriptor itself (poll first
/// if it came non-blocking, or with a deadline).
/// docs/SPIN-NOTES.md#descriptors-left-as-found measures them.
///
/// POSIX: a Windows handle would be a sibling (`*_win32`), not a branch
/// here (docs/CONVENTIONS.md#platforms).
class FdInputStream final : public InputStream, private PeerLookup, private MessageSizeHint {
 public:
  /// Takes `fd`. Throws std::system_error if it is not an open descriptor.
  /// `for_spinning`: tries will be made, so a pipe is opened once more
  /// through /proc now (without it, try_read falls back to preadv2).
  /// `may_grow_pipe`: a message announced through the traits' size_hint
  /// may grow a pipe (BufferOptions::grow_read_pipe); without it the
  /// traits offer none. Traits: a system call per try, "descriptor", the
  /// peer's pid through peer_pid().
  FdInputStream(UniqueFd fd, bool for_spinning, bool may_grow_pipe);

  long try_read(std::byte* buf, std::size_t len) override;
  std::size_t read_blocking(std::byte* buf, std::size_t len, const Deadline& deadline) override;
  bool readable_now() override;

  /// A socket's SO_PEERCRED, or the nearest of a few ancestors that holds
  /// our pipe's write end (the parent, or the client behind a wrapper that
  /// did not exec: `sh -c`, `timeout`); 0 when neither tells. Reads /proc:
  /// not for the hot path.
  int peer_pid() const noexcept override;

  /// The pipe rule: only when more than a pipeful of the message is still
  /// to come would the writer wait for us before it ends, so only then is
  /// the pipe grown to hold the message (up to kMaxPipeBytes,
  /// descriptor/pipe.h; docs/NODE.md, "tsgo's big replies").
  void message_arriving(std::size_t message_bytes, std::size_t buffered_bytes) noexcept override;

  /// The descriptor read from (owned).
  int fd() const noexcept { return fd_.get(); }

 private:
  enum class TryWith { own_nonblocking, recv_dontwait, preadv2_nowait, poll_then_read };
  // read(2) now: bytes, 0 at EOF, -1 on EAGAIN (a non-blocking fd).
  long read_now(std::byte* buf, std::size_t len);
  // ECONNRESET throws PeerClosed; EPIPE is EOF (returns 0).
  long peer_gone(int err) const;
  void wait_readable_until(const Deadline& deadline);
  static constexpr int kFollowGenerations = 4;

  UniqueFd fd_;
  UniqueFd nonblocking_;  // own_nonblocking: our O_NONBLOCK description of fd_'s pipe
  TryWith try_with_ = TryWith::preadv2_nowait;
  std::size_t pipe_bytes_ = 0;  // the pipe's capacity as last set or read; 0 = unknown
};

}  // namespace spinrpc
