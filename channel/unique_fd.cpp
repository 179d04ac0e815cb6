#include "channel/unique_fd.h"

#include <fcntl.h>   // ::fcntl, F_DUPFD_CLOEXEC
#include <unistd.h>  // ::close

#include <cerrno>        // errno
#include <cstdio>        // std::fprintf
#include <cstring>       // std::strerror
#include <system_error>  // std::system_error

#include "channel/syscall.h"

namespace spinrpc {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

UniqueFd::~UniqueFd() { reset(); }

UniqueFd UniqueFd::duplicate(int fd, int lowest) {
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, lowest);  // no EINTR for F_DUPFD
  if (copy < 0) throw_syscall_error(errno, "duplicate", fd);
  return UniqueFd(copy);
}

int UniqueFd::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset(int fd) noexcept {
  const int old = fd_;
  fd_ = fd;
  if (old >= 0 && ::close(old) != 0 && errno != EINTR) {
    std::fprintf(stderr, "spinrpc: cannot close fd %d: %s\n", old, std::strerror(errno));
  }
}

void UniqueFd::close() {
  const int old = release();
  if (old >= 0 && ::close(old) != 0 && errno != EINTR) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot close fd " + std::to_string(old));
  }
}

}  // namespace spinrpc
