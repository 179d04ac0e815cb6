#include "channel/syscall.h"

#include <string>        // std::string
#include <system_error>  // std::system_error

namespace spinrpc {

void throw_syscall_error(int err, const char* what, int fd) {
  throw std::system_error(err, std::generic_category(),
                          std::string("cannot ") + what + " fd " + std::to_string(fd));
}

}  // namespace spinrpc
