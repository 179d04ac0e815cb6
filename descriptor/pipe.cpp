#include "descriptor/pipe.h"

#include <fcntl.h>   // O_CLOEXEC, F_GETPIPE_SZ, F_SETPIPE_SZ
#include <unistd.h>  // ::pipe2

#include <algorithm>  // std::min
#include <bit>        // std::bit_ceil

#include "descriptor/syscall.h"

namespace spinrpc {

PipePair make_pipe() {
  int fds[2];
  // pipe2 cannot fail with EINTR; a failure here is EMFILE/ENFILE.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_syscall_error(errno, "create pipe", -1);
  // Out of 0..2 (see the header).
  PipePair pair;
  pair.read_end = UniqueFd(move_above_stdio(fds[0]));
  const int read_err = errno;
  pair.write_end = UniqueFd(move_above_stdio(fds[1]));
  if (!pair.read_end) throw_syscall_error(read_err, "move a pipe end above stdio", fds[0]);
  if (!pair.write_end) throw_syscall_error(errno, "move a pipe end above stdio", fds[1]);
  return pair;
}

void grow_pipe(int fd, std::size_t& known, std::size_t bytes) noexcept {
  if (known == 0) {
    const int now = ::fcntl(fd, F_GETPIPE_SZ);
    known = now > 0 ? static_cast<std::size_t>(now) : kMaxPipeBytes;  // unknown: leave it
  }
  const std::size_t want = std::min(std::bit_ceil(bytes), kMaxPipeBytes);
  if (want <= known) return;
  const int got = ::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(want));
  known = got > 0 ? static_cast<std::size_t>(got) : kMaxPipeBytes;
}

}  // namespace spinrpc
