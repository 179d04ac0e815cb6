#include "stream/fd_output_stream_posix.h"

#include <fcntl.h>       // ::vmsplice, O_WRONLY
#include <poll.h>        // ::poll
#include <sys/socket.h>  // msghdr, MSG_DONTWAIT, MSG_NOSIGNAL
#include <sys/stat.h>    // ::fstat, S_ISFIFO
#include <sys/uio.h>     // ::writev
#include <unistd.h>      // ssize_t

#include <algorithm>  // std::copy_n, std::min
#include <chrono>     // std::chrono
#include <cstring>    // std::memcpy
#include <utility>    // std::move

#include "descriptor/nonblocking_access.h"
#include "descriptor/syscall.h"
#include "stream/peer_closed.h"
#include "stream/timed_out.h"

namespace spinrpc {
namespace {

// poll(2)'s timeout for a write's wait: -1 without a deadline. Throws
// TimedOut once the deadline has passed.
int write_timeout_ms(const OutputStream::Deadline& deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) throw TimedOut("the peer took no more bytes before the deadline");
  return static_cast<int>(left.count());
}

bool is_pipe(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

[[noreturn]] void throw_reader_gone() {
  throw PeerClosed("cannot write to peer: it closed the connection", PeerClosed::Where::writing);
}

}  // namespace

FdOutputStream::FdOutputStream(UniqueFd out, const BufferOptions& options, int read_ahead_fd)
    : out_(std::move(out)), read_ahead_fd_(read_ahead_fd) {
  BufferOptions::LargeWrites large_writes = options.large_writes;
  if (options.read_while_writing && out_) {
    large_writes = BufferOptions::LargeWrites::copy;  // vmsplice would wait for room
    NonBlockingAccess access = nonblocking_access(out_.get(), O_WRONLY);
    if (access.kind == NonBlockingAccess::Kind::socket) {
      write_with_ = WriteWith::send_dontwait;
    } else if (access.kind == NonBlockingAccess::Kind::own_description) {
      nonblocking_out_ = std::move(access.own);
      write_with_ = WriteWith::own_nonblocking;
    }
  }
  lend_ = large_writes != BufferOptions::LargeWrites::copy && out_ && is_pipe(out_.get());
  if (lend_ && large_writes == BufferOptions::LargeWrites::lend_copies) {
    lent_copies_.emplace(options.retained_buffer_bytes);
  }
}

void FdOutputStream::reclaim_lent() noexcept {
  if (lent_copies_) lent_copies_->reclaim_if_read(out_.get());
}

void FdOutputStream::write_all(std::span<iovec> parts, WhileWriteWaits* while_waiting) {
  // The peer may be blocked waiting for these bytes: the hook acts now,
  // before its wake-up is placed.
  notify_before_write();
  // Nothing of this message is in the pipe yet, so an empty pipe means the
  // reader has read every buffer lent before: they can be written again.
  // (Asked later, at the big part, the pipe would hold this message's own
  // header, and a reader that had not taken it yet would cost a buffer.)
  reclaim_lent();
  if (!lend_) {
    write_copied(parts.data(), static_cast<int>(parts.size()), while_waiting);
    return;
  }
  // In order: runs of small parts copied with one writev, big parts lent.
  std::size_t run = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].iov_len < kLendMinBytes) continue;
    if (i > run) write_copied(parts.data() + run, static_cast<int>(i - run), while_waiting);
    write_lent(parts[i], while_waiting);
    run = i + 1;
  }
  if (parts.size() > run) write_copied(parts.data() + run, static_cast<int>(parts.size() - run), while_waiting);
}

void FdOutputStream::write_lent(iovec part, WhileWriteWaits* while_waiting) {
  const int fd = out_.get();
  std::byte* const source = static_cast<std::byte*>(part.iov_base);
  const std::size_t total = part.iov_len;
  // What the pipe is lent: the caller's bytes, or a copy of ours.
  std::byte* lent = source;
  // How many bytes of `lent` hold the message so far.
  std::size_t ready = total;
  if (lent_copies_) {
    lent = lent_copies_->take(total);
    if (lent == nullptr) {
      // The reader has not caught up (a pipelining peer): copy into the pipe.
      ++unlent_parts_;
      write_copied(&part, 1, while_waiting);
      return;
    }
    ready = 0;
  }
  grow_pipe(fd, pipe_bytes_, total);
  for (std::size_t sent = 0; sent < total;) {
    // A copy is made a step ahead of what is lent, not whole before the
    // first vmsplice: the reader copies the first steps out while the rest
    // is copied in (docs/NODE.md, "Large payloads").
    if (ready < total && ready - sent < kLendStepBytes) {
      const std::size_t step = std::min(kLendStepBytes, total - ready);
      std::memcpy(lent + ready, source + ready, step);
      ready += step;
    }
    iovec piece{lent + sent, ready - sent};
    // No SPLICE_F_GIFT: the pages stay the caller's; the pipe only refers
    // to them until the reader has copied them out (BufferOptions). With a
    // deadline, SPLICE_F_NONBLOCK: vmsplice(2) ignores the pipe's
    // O_NONBLOCK and would otherwise wait for room forever.
    const ssize_t n = retry_on_eintr([&] { return ::vmsplice(fd, &piece, 1, deadline_ ? SPLICE_F_NONBLOCK : 0u); });
    if (n < 0) {
      const int err = errno;
      if (err == EAGAIN) {
        wait_until_writable(nullptr);
        continue;
      }
      if (err == EPIPE) throw_reader_gone();
      if (err == EINVAL || err == ENOSYS || err == EPERM) {
        // No vmsplice here (a seccomp filter, an odd pipe): copy from now
        // on, the rest straight from the caller's bytes.
        ++unlent_parts_;
        lend_ = false;
        iovec rest{source + sent, total - sent};
        write_copied(&rest, 1, while_waiting);
        return;
      }
      throw_syscall_error(err, "vmsplice to", fd);
    }
    sent += static_cast<std::size_t>(n);
  }
  ++lent_parts_;
}

void FdOutputStream::write_copied(iovec* iov, int count, WhileWriteWaits* while_waiting) {
  const int fd = out_.get();
  // A small message in several parts (header, method, payload) is copied
  // into one run and written with write(2): writev's iovec import costs
  // more than a copy of a few hundred bytes
  // (docs/SPIN-NOTES.md#descriptors-left-as-found).
  iovec gathered;
  if (count > 1) {
    std::size_t total = 0;
    for (int i = 0; i < count; ++i) total += iov[i].iov_len;
    if (total <= gather_.size()) {
      std::byte* at = gather_.data();
      for (int i = 0; i < count; ++i) at = std::copy_n(static_cast<const std::byte*>(iov[i].iov_base), iov[i].iov_len, at);
      gathered = {gather_.data(), total};
      iov = &gathered;
      count = 1;
    }
  }
  while (count > 0) {
    const ssize_t n = check_syscall([&] { return write_once(iov, count); }, "write to", fd);
    if (n < 0) {
      // Branch: pipe or socket full on a non-blocking fd.
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait_until_writable(while_waiting);
        continue;
      }
      // Branch: EPIPE/ECONNRESET, the reader is gone.
      throw_reader_gone();
    }
    // Branch: partial write; skip what the kernel took and go on.
    auto left = static_cast<std::size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
}

ssize_t FdOutputStream::write_once(const iovec* iov, int count) {
  switch (write_with_) {
    case WriteWith::send_dontwait: {
      msghdr message{};
      message.msg_iov = const_cast<iovec*>(iov);
      message.msg_iovlen = static_cast<std::size_t>(count);
      return sendmsg_uncancellable(out_.get(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    case WriteWith::own_nonblocking:
      return count == 1 ? write_uncancellable(nonblocking_out_.get(), iov->iov_base, iov->iov_len)
                        : ::writev(nonblocking_out_.get(), iov, count);
    case WriteWith::as_found:
      break;
  }
  return count == 1 ? write_uncancellable(out_.get(), iov->iov_base, iov->iov_len)
                    : ::writev(out_.get(), iov, count);
}

void FdOutputStream::wait_until_writable(WhileWriteWaits* while_waiting) {
  const int out = out_.get();
  for (;;) {
    const int in = while_waiting != nullptr && !input_ended_ ? read_ahead_fd_ : -1;
    const int timeout_ms = write_timeout_ms(deadline_);
    // The peer may be blocked writing to us, waiting for us to read before
    // it reads what we write: read while we wait (a socket is one fd both
    // ways, and both events come on it).
    pollfd p[2] = {{out, POLLOUT, 0}, {in, POLLIN, 0}};
    const nfds_t count = in < 0 || in == out ? 1 : 2;
    if (in >= 0 && in == out) p[0].events |= POLLIN;
    if (check_syscall([&] { return ::poll(p, count, timeout_ms); }, "poll", out) <= 0) continue;
    const short in_events = count == 2 ? p[1].revents : (in >= 0 ? p[0].revents : 0);
    if (in >= 0 && (in_events & (POLLIN | POLLHUP | POLLERR)) != 0) {
      if (!while_waiting->read_ahead()) input_ended_ = true;
    }
    if ((p[0].revents & (POLLOUT | POLLHUP | POLLERR)) != 0) return;  // or the write says EPIPE
  }
}

}  // namespace spinrpc
