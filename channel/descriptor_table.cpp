#include "channel/descriptor_table.h"

#include <linux/close_range.h>  // CLOSE_RANGE_UNSHARE
#include <sched.h>              // ::unshare, CLONE_FILES
#include <unistd.h>             // ::close_range

namespace spinrpc {

bool leave_descriptor_table() noexcept {
  // A copy of the table with every fd closed but stderr, kept for whatever
  // reports from this thread (a sanitizer's): closing copies releases
  // nothing the other threads hold.
  if (::close_range(0, 1, CLOSE_RANGE_UNSHARE) != 0) return false;
  ::close_range(3, ~0U, 0);
  return true;
}

bool own_descriptor_table() noexcept { return ::unshare(CLONE_FILES) == 0; }

}  // namespace spinrpc
