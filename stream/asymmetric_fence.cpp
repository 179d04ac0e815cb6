#include "stream/asymmetric_fence.h"

#include <linux/membarrier.h>  // MEMBARRIER_CMD_*
#include <sys/syscall.h>       // SYS_membarrier
#include <unistd.h>            // ::syscall

namespace spinrpc {
namespace {

long membarrier(int command) noexcept { return ::syscall(SYS_membarrier, command, 0, 0); }

}  // namespace

bool register_for_heavy_fence() noexcept {
  const long supported = membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
}

bool heavy_fence() noexcept { return membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0; }

}  // namespace spinrpc
