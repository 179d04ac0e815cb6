#include "descriptor/descriptor_table.h"

#include <sched.h>  // ::unshare, CLONE_FILES

#include "descriptor/glibc_extensions.h"
#include "descriptor/sanitizers.h"

namespace spinrpc {

bool leave_descriptor_table() noexcept {
  // Closing every fd with CLOSE_RANGE_UNSHARE copies nothing: the kernel
  // gives the thread a fresh empty table, and no file sees a close (no
  // flush-on-close of a FUSE or NFS file). Not even stderr is kept: a copy
  // of it held the file after the process closed or replaced its fd 2, and
  // a reader of it waited for EOF until the channel closed. Under a
  // sanitizer the thread keeps the table, so that
  // a report from it reaches stderr.
  if constexpr (kUnderSanitizer) return false;
  return close_every_descriptor_unshared() == 0;
}

bool own_descriptor_table() noexcept { return ::unshare(CLONE_FILES) == 0; }

}  // namespace spinrpc
