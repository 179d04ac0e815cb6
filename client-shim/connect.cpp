#include "client-shim/connect.h"

#include <fcntl.h>       // ::open, ::fcntl, O_*
#include <sys/socket.h>  // ::socket, ::connect
#include <sys/un.h>      // sockaddr_un

#include <cstring>       // std::memcpy
#include <system_error>  // std::system_error
#include <thread>        // std::this_thread::sleep_for

#include "channel/syscall.h"

namespace spinrpc {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kRetryPause{5};

[[noreturn]] void fail(int err, const std::string& what) {
  throw std::system_error(err, std::generic_category(), what);
}

std::string within(const std::string& path, std::chrono::milliseconds timeout) {
  return "cannot connect to " + path + " within " + std::to_string(timeout.count()) + " ms";
}

// Retries `attempt` (returning an fd, or -1 with errno) while errno is one of
// `retry_a`/`retry_b`, until `timeout`.
template <class Attempt>
UniqueFd retry_until(Attempt&& attempt, int retry_a, int retry_b, const std::string& path,
                     std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    UniqueFd fd = attempt();
    if (fd) return fd;
    const int err = errno;
    if (err != retry_a && err != retry_b) fail(err, "cannot connect to " + path);
    if (Clock::now() >= deadline) fail(err, within(path, timeout));
    std::this_thread::sleep_for(kRetryPause);
  }
}

UniqueFd dup_cloexec(const UniqueFd& fd) {
  UniqueFd copy(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
  if (!copy) throw_syscall_error(errno, "duplicate", fd.get());
  return copy;
}

}  // namespace

Connection connect_unix_socket(const std::string& path, std::chrono::milliseconds timeout) {
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    fail(ENAMETOOLONG, "cannot connect to " + path + ": a Unix socket path must have 1 to 107 bytes");
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd socket = retry_until(
      [&] {
        UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (!fd) fail(errno, "cannot create a socket for " + path);
        // Not check_syscall: ENOENT and ECONNREFUSED are answers here
        // ("not listening yet"), and an interrupted connect is simply tried
        // again on a fresh socket.
        if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
          const int err = errno == EINTR ? ECONNREFUSED : errno;
          fd.reset();
          errno = err;
        }
        return fd;
      },
      ENOENT, ECONNREFUSED, path, timeout);
  UniqueFd out = dup_cloexec(socket);
  return {std::move(socket), std::move(out)};
}

Connection connect_fifo_pair(const std::string& to_server, const std::string& from_server,
                             std::chrono::milliseconds timeout) {
  // O_NONBLOCK: an open for writing fails with ENXIO instead of blocking
  // while the server has no reader on its request FIFO yet.
  UniqueFd out = retry_until(
      [&] { return UniqueFd(::open(to_server.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)); }, ENOENT,
      ENXIO, to_server, timeout);
  const int flags = ::fcntl(out.get(), F_GETFL);
  if (flags < 0 || ::fcntl(out.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    fail(errno, "cannot set up " + to_server);
  }
  // Blocking: returns once the server opens its reply FIFO for writing, so
  // the first read cannot mistake "no writer yet" for EOF.
  const int in = check_syscall([&] { return ::open(from_server.c_str(), O_RDONLY | O_CLOEXEC); },
                               "open", -1);
  if (in < 0) fail(errno, "cannot connect to " + from_server);
  return {UniqueFd(in), std::move(out)};
}

}  // namespace spinrpc
