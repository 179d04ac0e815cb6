#pragma once

// Helpers for the channel tests: real pipes and socketpairs, and a writer
// thread that dribbles bytes in chunks.

#include <fcntl.h>          // ::fcntl, F_DUPFD_CLOEXEC, O_NONBLOCK
#include <linux/sockios.h>  // SIOCOUTQ
#include <poll.h>           // ::poll
#include <sys/ioctl.h>      // ::ioctl, FIONREAD
#include <sys/socket.h>     // ::socketpair
#include <unistd.h>         // ::write

#include <algorithm>     // std::min
#include <atomic>        // std::atomic
#include <cerrno>        // errno
#include <cstddef>       // std::size_t
#include <cstring>       // std::strerror
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <system_error>  // std::system_error
#include <thread>        // std::thread
#include <utility>       // std::move
#include <vector>        // std::vector

#include "channel/frame_channel.h"
#include "descriptor/pipe.h"
#include "descriptor/unique_fd.h"
#include "tests/support/fd_channel.h"
#include "tests/protocol/frame_test_util.h"

namespace spinrpc::test {

enum class Transport { Pipe, SocketPair };

inline const char* to_string(Transport t) { return t == Transport::Pipe ? "pipe" : "socketpair"; }

/// Two connected stream sockets, both born close-on-exec.
struct SocketPair {
  UniqueFd a;
  UniqueFd b;
};

inline SocketPair make_socketpair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair");
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

/// A close-on-exec duplicate (a socket channel owns one fd per direction).
inline UniqueFd dup_cloexec(int fd) { return UniqueFd::duplicate(fd); }

inline void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw std::system_error(errno, std::generic_category(), "fcntl O_NONBLOCK");
  }
}

/// A one-way byte link: the channel reads `read_end`, a test writes `write_end`.
struct Link {
  Transport transport;
  UniqueFd read_end;
  UniqueFd write_end;
};

inline Link make_link(Transport t) {
  if (t == Transport::Pipe) {
    PipePair p = make_pipe();
    return {t, std::move(p.read_end), std::move(p.write_end)};
  }
  SocketPair s = make_socketpair();
  return {t, std::move(s.a), std::move(s.b)};
}

/// The channel on the reading side of a link. For a socket it owns a dup
/// of the socket as its output, as a real socket channel does; for a pipe
/// it has no output (these channels only read).
inline FrameChannel reading_channel(Link& link, ChannelOptions options = {}) {
  UniqueFd out = link.transport == Transport::SocketPair ? dup_cloexec(link.read_end.get())
                                                         : UniqueFd();
  return fd_channel(std::move(link.read_end), std::move(out), options);
}

/// Writes `all` into `link` in one write(2), closes the writing end, and
/// returns the channel that reads it: every byte, then EOF, is there before
/// the channel reads at all.
inline FrameChannel preloaded_channel(Link& link, const std::vector<std::byte>& all,
                                   ChannelOptions options = {}) {
  if (::write(link.write_end.get(), all.data(), all.size()) != static_cast<ssize_t>(all.size())) {
    throw std::runtime_error(std::string("preloading the channel failed: ") + std::strerror(errno));
  }
  link.write_end.reset();
  return reading_channel(link, options);
}

/// Bytes written into `fd` that its reader has not taken yet.
inline int unread_bytes(int fd, Transport t) {
  int n = 0;
  // A pipe answers FIONREAD on either end; a socket's writer asks SIOCOUTQ.
  if (::ioctl(fd, t == Transport::Pipe ? FIONREAD : SIOCOUTQ, &n) != 0) return -1;
  return n;
}

/// Writes `bytes` into a link's write end from its own thread, `chunk` bytes
/// per write(2) (0: all at once). In lockstep mode it waits after each write
/// until the reader has taken every byte, so the reader sees each chunk on
/// its own: every cut of every frame is exercised, not a lucky few. The fd
/// is closed after the last byte (EOF), unless keep_open, in which case it
/// stays open until the Dribbler is destroyed.
///
/// Never blocks for good: the fd is non-blocking (only this thread uses
/// this end), and every wait also ends when the reader closed its end or
/// the Dribbler is being destroyed. Uses no doctest macros (not thread-safe);
/// finish() returns what went wrong.
class Dribbler {
 public:
  struct Options {
    std::size_t chunk = 0;
    bool lockstep = true;
    bool keep_open = false;
  };

  Dribbler(Link& link, Bytes bytes, Options options)
      : fd_(std::move(link.write_end)), transport_(link.transport), bytes_(std::move(bytes)),
        options_(options) {
    set_nonblocking(fd_.get());
    thread_ = std::thread([this] { run(); });
  }
  Dribbler(const Dribbler&) = delete;
  Dribbler& operator=(const Dribbler&) = delete;
  ~Dribbler() { finish(); }

  /// Joins the writer (after telling it to stop waiting) and returns "" or
  /// the error it met.
  std::string finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return error_;
  }

  /// Waits for the writer to write everything, then joins it.
  std::string wait() {
    if (thread_.joinable()) thread_.join();
    return error_;
  }

 private:
  // True while neither the test nor the reader has gone away.
  bool peer_alive() {
    pollfd p{fd_.get(), 0, 0};  // POLLERR/POLLHUP are always reported
    return !stop_ && ::poll(&p, 1, 0) >= 0 && (p.revents & (POLLERR | POLLHUP)) == 0;
  }

  void run() {
    std::size_t off = 0;
    while (off < bytes_.size()) {
      const std::size_t chunk = options_.chunk == 0 ? bytes_.size() : options_.chunk;
      const std::size_t end = std::min(off + chunk, bytes_.size());
      while (off < end) {
        const ssize_t n = ::write(fd_.get(), bytes_.data() + off, end - off);
        if (n > 0) {
          off += static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
          pollfd p{fd_.get(), POLLOUT, 0};
          if (stop_) return;
          ::poll(&p, 1, 10);  // wakes on space; rechecks stop_ now and then
        } else {
          error_ = std::string("write: ") + std::strerror(errno);
          return;
        }
      }
      if (options_.lockstep) {
        while (unread_bytes(fd_.get(), transport_) > 0) {
          if (!peer_alive()) return;
          std::this_thread::yield();
        }
      }
    }
    if (options_.keep_open) {
      while (!stop_) {
        pollfd p{fd_.get(), 0, 0};
        ::poll(&p, 1, 10);
      }
    }
    fd_.reset();
  }

  UniqueFd fd_;
  Transport transport_;
  Bytes bytes_;
  Options options_;
  std::atomic<bool> stop_{false};
  std::string error_;  // read only after join
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace spinrpc::test
