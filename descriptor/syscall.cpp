#include "descriptor/syscall.h"

#include <fcntl.h>   // ::fcntl, ::open, O_NONBLOCK
#include <unistd.h>  // ::read, ::close, STDERR_FILENO

#include <string>        // std::string
#include <system_error>  // std::system_error

namespace spinrpc {

void throw_syscall_error(int err, const char* what, int fd) {
  throw std::system_error(err, std::generic_category(),
                          std::string("cannot ") + what + " fd " + std::to_string(fd));
}

void set_nonblocking(int fd, bool on) {
  const int flags = check_syscall([&] { return ::fcntl(fd, F_GETFL); }, "get flags of", fd);
  const int wanted = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (wanted != flags) check_syscall([&] { return ::fcntl(fd, F_SETFL, wanted); }, "set flags of", fd);
}

int move_above_stdio(int fd) noexcept {
  if (fd < 0 || fd > STDERR_FILENO) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  const int err = errno;
  ::close(fd);  // the low number goes back to being closed, as found
  errno = err;
  return moved;
}

int reopen_nonblocking(int fd, int access) {
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return move_above_stdio(::open(path.c_str(), access | O_NONBLOCK | O_CLOEXEC));
}

std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text(max_bytes, '\0');
  std::size_t got = 0;
  while (got < max_bytes) {
    const ssize_t n = retry_on_eintr([&] { return ::read(fd, text.data() + got, max_bytes - got); });
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

}  // namespace spinrpc
