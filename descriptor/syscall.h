#pragma once

#include <cerrno>  // errno, EINTR, EAGAIN, EWOULDBLOCK, EPIPE, ECONNRESET
#include <cstddef>  // std::size_t
#include <optional>  // std::optional
#include <string>    // std::string

#include <sys/socket.h>   // struct msghdr, ::recv, ::sendmsg
#include <sys/syscall.h>  // SYS_read, SYS_write, SYS_recvfrom, SYS_sendmsg
#include <sys/types.h>    // ssize_t
#include <unistd.h>       // ::syscall, ::read, ::write

#include "descriptor/sanitizers.h"

namespace spinrpc {

/// Throws std::system_error(err) with the message "cannot <what> fd <fd>".
[[noreturn]] void throw_syscall_error(int err, const char* what, int fd);

/// Sets or clears O_NONBLOCK on `fd`'s open file description. Only for a
/// description this process created and holds alone (a pipe end it made, a
/// socket it connected, a FIFO it opened): every holder sees the flag, so
/// spinrpc never changes it on one it was given (docs/HARDENING.md,
/// "Descriptors left as found"). Throws std::system_error.
void set_nonblocking(int fd, bool on);

/// `fd` itself when it is 3 or above; else a close-on-exec copy numbered 3
/// or above, and `fd` is closed. For the fds spinrpc keeps open: in a
/// process started with stdout or stderr closed, the lowest free number is
/// 1 or 2, and an fd of ours kept there becomes the process's "stderr"
/// (its diagnostics written into our pipe or file) and a spawned child's
/// inherited fd 2. Returns -1 with errno set (and `fd` closed) when no copy
/// can be made; -1 given, -1 returned.
int move_above_stdio(int fd) noexcept;

/// A new open file description of the pipe or FIFO behind `fd`, opened
/// through /proc/self/fd for `access` (O_RDONLY or O_WRONLY) with
/// O_NONBLOCK and close-on-exec: O_NONBLOCK there is ours alone, and `fd`
/// stays as it was found (docs/HARDENING.md, "Descriptors left as found").
/// The new fd (3 or above: move_above_stdio), or -1 without /proc or when
/// it is refused (the caller then does without).
int reopen_nonblocking(int fd, int access);

/// True for the errno values a caller handles as a result, not a failure:
/// EAGAIN/EWOULDBLOCK (nothing to read yet, pipe full) and EPIPE/ECONNRESET
/// (the peer is gone; the caller throws its own typed PeerClosed).
constexpr bool is_expected_errno(int err) noexcept {
  return err == EAGAIN || err == EWOULDBLOCK || err == EPIPE || err == ECONNRESET;
}

/// The first `max_bytes` bytes of a small file (/proc, /sys), or
/// std::nullopt when it cannot be opened or read. Plain open(2) and read(2):
/// no iostream, whose first use initialises the C++ locale (a cost in a
/// server's start-up: docs/NODE.md, "Spawn to first reply"). Never throws
/// but std::bad_alloc.
std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes = 4096);

/// read(2) and write(2) without glibc's cancellation bookkeeping, for the
/// hot path: a spinning wait's tries and a message's write. glibc's read()
/// and write() are cancellation points: in a process with a second thread
/// (spinrpc-server's signal watcher and occupier; every Node process) each
/// call switches the thread to asynchronous cancellation and back, two
/// atomic operations. spinrpc never cancels a thread. Same results and
/// errno as read(2) and write(2); what it saves a spun round trip is in
/// docs/SPIN-NOTES.md#where-a-spun-round-trip-goes. Under a sanitizer,
/// the C library's calls, which it intercepts (buffer checks, TSan's
/// ordering through a descriptor).
inline ssize_t read_uncancellable(int fd, void* buf, std::size_t len) noexcept {
  if constexpr (kUnderSanitizer) return ::read(fd, buf, len);
  return ::syscall(SYS_read, fd, buf, len);
}
inline ssize_t write_uncancellable(int fd, const void* buf, std::size_t len) noexcept {
  if constexpr (kUnderSanitizer) return ::write(fd, buf, len);
  return ::syscall(SYS_write, fd, buf, len);
}
/// The same for a socket: recv(2) and sendmsg(2).
inline ssize_t recv_uncancellable(int fd, void* buf, std::size_t len, int flags) noexcept {
  if constexpr (kUnderSanitizer) return ::recv(fd, buf, len, flags);
  return ::syscall(SYS_recvfrom, fd, buf, len, flags, nullptr, nullptr);
}
inline ssize_t sendmsg_uncancellable(int fd, const struct msghdr* message, int flags) noexcept {
  if constexpr (kUnderSanitizer) return ::sendmsg(fd, message, flags);
  return ::syscall(SYS_sendmsg, fd, message, flags);
}

/// The one EINTR rule (docs/CONVENTIONS.md#system-calls), for a call whose
/// failure the caller handles itself: runs `call` (which returns -1 and sets
/// errno on failure) again while it fails with EINTR, and returns its
/// result, errno intact. Never throws (unless `call` does). Never use it for
/// close(2), which must not be retried.
template <class Call>
auto retry_on_eintr(Call&& call) noexcept(noexcept(call())) -> decltype(call()) {
  for (;;) {
    auto result = call();
    if (result != -1 || errno != EINTR) return result;
  }
}

/// The throwing form: retry_on_eintr, then for is_expected_errno() failures
/// -1 with errno intact; any other failure throws std::system_error naming
/// `what` and `fd`. Never use it for close(2).
template <class Call>
auto check_syscall(Call&& call, const char* what, int fd) {
  auto result = retry_on_eintr(call);
  if (result != -1) return result;
  const int err = errno;
  if (is_expected_errno(err)) return result;
  throw_syscall_error(err, what, fd);
}

}  // namespace spinrpc
