#include "channel/pipe.h"

#include <fcntl.h>   // O_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ

#include <climits>  // INT_MAX
#include <unistd.h>  // ::pipe2

#include "channel/syscall.h"

namespace spinrpc {

PipePair make_pipe() {
  int fds[2];
  // pipe2 cannot fail with EINTR; a failure here is EMFILE/ENFILE.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_syscall_error(errno, "create pipe", -1);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::size_t try_set_pipe_capacity(int fd, std::size_t bytes) noexcept {
  if (bytes <= static_cast<std::size_t>(INT_MAX)) ::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(bytes));
  const int now = ::fcntl(fd, F_GETPIPE_SZ);
  return now < 0 ? 0 : static_cast<std::size_t>(now);
}

}  // namespace spinrpc
