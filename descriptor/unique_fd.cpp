#include "descriptor/unique_fd.h"

#include <fcntl.h>   // ::fcntl, F_DUPFD_CLOEXEC
#include <unistd.h>  // ::close

#include <cerrno>        // errno
#include <cstring>       // std::strerror
#include <string>        // std::string, std::to_string
#include <system_error>  // std::system_error

#include "descriptor/stderr_lines.h"
#include "descriptor/syscall.h"

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
    // Never waits: stderr may be a full pipe nobody reads.
    write_stderr_without_waiting("spinrpc: cannot close fd " + std::to_string(old) + ": " +
                                 std::strerror(errno) + "\n");
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
