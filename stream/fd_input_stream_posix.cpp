#include "stream/fd_input_stream_posix.h"

#include <fcntl.h>       // ::fcntl, O_RDONLY
#include <poll.h>        // ::poll
#include <sys/socket.h>  // MSG_DONTWAIT
#include <sys/stat.h>    // ::fstat, S_ISSOCK
#include <sys/uio.h>     // ::preadv2, RWF_NOWAIT
#include <unistd.h>      // ::read, ::getpid, ::getppid

#include <string>   // std::to_string
#include <utility>  // std::move

#include "descriptor/nonblocking_access.h"
#include "descriptor/peer_process.h"
#include "descriptor/pipe.h"
#include "descriptor/syscall.h"
#include "stream/peer_closed.h"
#include "stream/timed_out.h"

namespace spinrpc {

FdInputStream::FdInputStream(UniqueFd fd, bool for_spinning, bool may_grow_pipe)
    : InputStream(StreamTraits{}), fd_(std::move(fd)) {
  mutable_traits().peer = this;
  if (may_grow_pipe) mutable_traits().size_hint = this;
  // The fd must be open; its flags are only read, never changed.
  check_syscall([&] { return ::fcntl(fd_.get(), F_GETFL); }, "get flags of", fd_.get());
  if (!for_spinning) return;
  NonBlockingAccess access = nonblocking_access(fd_.get(), O_RDONLY);
  switch (access.kind) {
    case NonBlockingAccess::Kind::socket:
      try_with_ = TryWith::recv_dontwait;
      break;
    case NonBlockingAccess::Kind::own_description:
      nonblocking_ = std::move(access.own);
      try_with_ = TryWith::own_nonblocking;
      break;
    case NonBlockingAccess::Kind::as_found:
      break;  // preadv2, and poll if refused
  }
}

long FdInputStream::peer_gone(int err) const {
  // ECONNRESET: a socket whose peer closed while bytes we sent were still
  // unread in it (a Response, a Call): not a clean end; tsgo reports it too
  // ("read: connection reset by peer", exit 1).
  if (err == ECONNRESET) {
    throw PeerClosed("the peer closed the connection without reading what was sent to it (fd " +
                         std::to_string(fd_.get()) + ")",
                     PeerClosed::Where::writing);
  }
  return 0;  // EPIPE: the same as EOF
}

long FdInputStream::read_now(std::byte* buf, std::size_t len) {
  const ssize_t n = check_syscall([&] { return ::read(fd_.get(), buf, len); }, "read from", fd_.get());
  if (n >= 0) return n;
  if (errno == ECONNRESET || errno == EPIPE) return peer_gone(errno);
  // Branch: EAGAIN, the fd is non-blocking (as we found it) and empty.
  return -1;
}

long FdInputStream::try_read(std::byte* buf, std::size_t len) {
  if (try_with_ == TryWith::own_nonblocking || try_with_ == TryWith::recv_dontwait) {
    const ssize_t n = check_syscall(
        [&] {
          return try_with_ == TryWith::own_nonblocking ? read_uncancellable(nonblocking_.get(), buf, len)
                                                        : recv_uncancellable(fd_.get(), buf, len, MSG_DONTWAIT);
        },
        "read from", fd_.get());
    if (n >= 0) return n;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    return peer_gone(errno);
  }
  if (try_with_ == TryWith::preadv2_nowait) {
    // One system call, as a read on a non-blocking fd, without touching the
    // fd's flags: pipes and sockets take RWF_NOWAIT for the one call.
    iovec iov{buf, len};
    const ssize_t n = retry_on_eintr([&] { return ::preadv2(fd_.get(), &iov, 1, -1, RWF_NOWAIT); });
    if (n >= 0) return n;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    if (errno == ECONNRESET || errno == EPIPE) return peer_gone(errno);
    // Branch: EOPNOTSUPP (a FIFO, a terminal) or EINVAL (an old kernel): ask
    // poll(2) from now on.
    if (errno != EOPNOTSUPP && errno != EINVAL) throw_syscall_error(errno, "read from", fd_.get());
    try_with_ = TryWith::poll_then_read;
  }
  // poll with timeout 0, and read only when it says there is something (or
  // EOF, or an error): the read cannot block then.
  if (!readable_now()) return -1;
  return read_now(buf, len);
}

bool FdInputStream::readable_now() {
  pollfd p{fd_.get(), POLLIN, 0};
  return check_syscall([&] { return ::poll(&p, 1, 0); }, "poll", fd_.get()) > 0;
}

std::size_t FdInputStream::read_blocking(std::byte* buf, std::size_t len, const Deadline& deadline) {
  // Branch: a deadline. Wait in poll(2) with the time left, then read: one
  // extra system call per wait, paid only by callers who set a deadline.
  if (deadline) wait_readable_until(deadline);
  for (;;) {
    const long n = read_now(buf, len);
    if (n >= 0) return static_cast<std::size_t>(n);
    // EAGAIN: the fd is non-blocking (as it came to us, or another process
    // that shares the file description changed it): wait in poll.
    pollfd p{fd_.get(), POLLIN, 0};
    check_syscall([&] { return ::poll(&p, 1, -1); }, "poll", fd_.get());
  }
}

void FdInputStream::wait_readable_until(const Deadline& deadline) {
  using Clock = std::chrono::steady_clock;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
    if (left.count() <= 0) throw TimedOut("no reply before the deadline");
    pollfd p{fd_.get(), POLLIN, 0};
    const int ready = check_syscall([&] { return ::poll(&p, 1, static_cast<int>(left.count())); },
                                    "poll", fd_.get());
    if (ready > 0) return;  // bytes, EOF or an error: the read says which
  }
}

int FdInputStream::peer_pid() const noexcept {
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) return 0;
  if (S_ISSOCK(st.st_mode)) {
    const int pid = socket_peer_pid(fd_.get());
    return pid != ::getpid() ? pid : 0;
  }
  // On a pipe, the nearest ancestor that holds its write end; init and a
  // launcher that left are nobody to follow.
  int ancestor = ::getppid();
  for (int generation = 0; generation < kFollowGenerations && ancestor > 1; ++generation) {
    if (holds_write_end(ancestor, fd_.get())) return ancestor;
    ancestor = parent_of(ancestor);
  }
  return 0;
}

void FdInputStream::message_arriving(std::size_t message_bytes, std::size_t buffered_bytes) noexcept {
  // More than a pipeful still to come: the writer would wait for us before it ends.
  if (message_bytes < buffered_bytes + kDefaultPipeBytes) return;
  grow_pipe(fd_.get(), pipe_bytes_, message_bytes);
}

}  // namespace spinrpc
