#include "descriptor/lent_copies.h"

#include <sys/ioctl.h>  // ::ioctl, FIONREAD

#include <utility>  // std::move

namespace spinrpc {

void LentCopies::reclaim_if_read(int pipe_fd) {
  if (lent_.empty()) return;
  int queued = -1;
  // Refused (not a pipe after all): nothing is ever reclaimed, and take()
  // stops lending at kMaxLent; the writes are then copied.
  if (::ioctl(pipe_fd, FIONREAD, &queued) != 0 || queued != 0) return;
  // The reader has copied out everything we put in: keep the biggest
  // buffer that may be kept, free the rest.
  for (Buffer& b : lent_) {
    if (b.capacity > retained_bytes_) continue;
    if (b.capacity > spare_.capacity) spare_ = std::move(b);
  }
  lent_.clear();
}

std::byte* LentCopies::take(std::size_t bytes) {
  if (lent_.size() >= kMaxLent) return nullptr;
  if (spare_.capacity < bytes) {
    spare_ = {};  // freed before the bigger one is allocated
    spare_.bytes = allocate_at_page_offset(bytes, kLendPageOffset);
    spare_.capacity = bytes;
  }
  lent_.push_back(std::move(spare_));
  spare_ = {};
  return lent_.back().bytes.get();
}

}  // namespace spinrpc
