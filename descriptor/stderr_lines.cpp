#include "descriptor/stderr_lines.h"

#include <limits.h>  // PIPE_BUF
#include <poll.h>    // ::poll
#include <unistd.h>  // ::write

#include <cerrno>  // errno
#include <string>  // std::string, std::to_string

#include "descriptor/syscall.h"  // retry_on_eintr

namespace spinrpc {
namespace {

using Clock = std::chrono::steady_clock;

// Up to one PIPE_BUF piece: after POLLOUT a pipe takes that much without
// blocking (pipe writes of at most PIPE_BUF are all or nothing).
constexpr std::size_t kPiece = PIPE_BUF;

// Waits up to `timeout_ms` (0: not at all) for room on fd 2. False when
// there is none, or when fd 2 cannot be written at all.
bool room_on_stderr(int timeout_ms) {
  pollfd p{2, POLLOUT, 0};
  const int ready = retry_on_eintr([&] { return ::poll(&p, 1, timeout_ms); });
  return ready > 0 && (p.revents & POLLOUT) != 0 && (p.revents & (POLLERR | POLLNVAL)) == 0;
}

// One write of at most kPiece bytes once poll said there is room. Returns the
// bytes taken, 0 for "full after all" (EAGAIN), -1 for "give up".
long write_piece(std::string_view text) {
  const std::size_t size = text.size() < kPiece ? text.size() : kPiece;
  const ssize_t n = retry_on_eintr([&] { return ::write(2, text.data(), size); });
  if (n >= 0) return n;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
  return -1;  // EPIPE (nobody will ever read), EBADF, EIO: nothing to do
}

}  // namespace

void write_stderr_before_exit(std::string_view text, std::chrono::milliseconds patience) {
  const Clock::time_point deadline = Clock::now() + patience;
  while (!text.empty()) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (!room_on_stderr(static_cast<int>(left.count() > 0 ? left.count() : 0))) return;
    const long n = write_piece(text);
    if (n < 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void write_stderr_without_waiting(std::string_view text) {
  std::string cut;
  if (text.size() > kPiece) {
    // Keep the start (it says what the line is about) and say how much went.
    std::string marker = "... [" + std::to_string(text.size()) + " bytes, cut]\n";
    cut.assign(text.substr(0, kPiece - marker.size()));
    cut += marker;
    text = cut;
  }
  if (!room_on_stderr(0)) return;
  write_piece(text);  // whole or nothing: at most PIPE_BUF bytes
}

}  // namespace spinrpc
