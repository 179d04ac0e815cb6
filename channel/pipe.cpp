#include "channel/pipe.h"

#include <fcntl.h>   // O_CLOEXEC
#include <unistd.h>  // ::pipe2

#include "channel/syscall.h"

namespace spinrpc {

PipePair make_pipe() {
  int fds[2];
  // pipe2 cannot fail with EINTR; a failure here is EMFILE/ENFILE.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_syscall_error(errno, "create pipe", -1);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace spinrpc
