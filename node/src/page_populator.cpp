#include "node/src/page_populator.h"

#include <sys/mman.h>  // ::madvise

#include <algorithm>  // std::min
#include <cerrno>     // errno, EINTR
#include <cstdint>    // std::uintptr_t

#include "channel/page_offset_bytes.h"

namespace spinrpc::node {

namespace {

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14
#endif

std::byte* round_to_page(std::byte* p, bool up) {
  auto a = reinterpret_cast<std::uintptr_t>(p);
  if (up) a += kPageBytes - 1;
  return reinterpret_cast<std::byte*>(a / kPageBytes * kPageBytes);
}

}  // namespace

void PagePopulator::reset(std::span<std::byte> block) noexcept {
  begin_ = round_to_page(block.data(), true);
  end_ = round_to_page(block.data() + block.size(), false);
  if (end_ < begin_) end_ = begin_;
  done_ = 0;
}

bool PagePopulator::populate(std::size_t bytes) noexcept {
  if (bytes == 0) return false;
  int result = 0;
  // EINTR: a signal came while the pages were faulted in; the rest is
  // asked again (the ones in already cost a page-table walk).
  while ((result = ::madvise(begin_ + done_, bytes, MADV_POPULATE_WRITE)) != 0 && errno == EINTR) {
  }
  if (result != 0) {
    done_ = page_bytes();  // refused (EINVAL before Linux 5.14): the read faults the rest in
    return false;
  }
  done_ += bytes;
  return done_ < page_bytes();
}

bool PagePopulator::step() noexcept { return populate(std::min(kStepBytes, page_bytes() - done_)); }

void PagePopulator::finish() noexcept { populate(page_bytes() - done_); }

}  // namespace spinrpc::node
