#include "channel/descriptor_table.h"

#include <linux/close_range.h>  // CLOSE_RANGE_UNSHARE
#include <sched.h>              // ::unshare, CLONE_FILES
#include <unistd.h>             // ::close_range

namespace spinrpc {

bool leave_descriptor_table() noexcept {
  // Closing every fd with CLOSE_RANGE_UNSHARE copies nothing: the kernel
  // gives the thread a fresh empty table.
  return ::close_range(0, ~0U, CLOSE_RANGE_UNSHARE) == 0;
}

bool own_descriptor_table() noexcept { return ::unshare(CLONE_FILES) == 0; }

}  // namespace spinrpc
