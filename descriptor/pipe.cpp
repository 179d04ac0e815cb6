#include "descriptor/pipe.h"

#include <fcntl.h>   // O_CLOEXEC
#include <unistd.h>  // ::pipe2

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

}  // namespace spinrpc
