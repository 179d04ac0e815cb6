#include "channel/syscall.h"

#include <fcntl.h>  // ::fcntl, O_NONBLOCK

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

}  // namespace spinrpc
