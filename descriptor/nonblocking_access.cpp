#include "descriptor/nonblocking_access.h"

#include <sys/stat.h>  // ::fstat, S_ISFIFO, S_ISSOCK

#include "descriptor/syscall.h"

namespace spinrpc {

NonBlockingAccess nonblocking_access(int fd, int access) {
  NonBlockingAccess result;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return result;
  if (S_ISSOCK(st.st_mode)) {
    result.kind = NonBlockingAccess::Kind::socket;
  } else if (S_ISFIFO(st.st_mode)) {
    // A read(2) on our own description is cheaper than preadv2, which
    // imports an iovec (docs/SPIN-NOTES.md#descriptors-left-as-found).
    const int own = reopen_nonblocking(fd, access);
    if (own >= 0) {
      result.kind = NonBlockingAccess::Kind::own_description;
      result.own = UniqueFd(own);
    }
  }
  return result;
}

}  // namespace spinrpc
