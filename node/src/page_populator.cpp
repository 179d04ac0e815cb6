#include "node/src/page_populator.h"

#include <sys/mman.h>  // ::madvise

#include <algorithm>  // std::min
#include <array>      // std::array
#include <cstdint>    // std::uintptr_t

#include "descriptor/page_offset_bytes.h"
#include "descriptor/syscall.h"  // retry_on_eintr

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

bool PagePopulator::advise(std::byte* from, std::size_t bytes) noexcept {
  // EINTR: a signal came while the pages were faulted in; the rest is
  // asked again (the ones in already cost a page-table walk).
  const int result = retry_on_eintr([&] { return ::madvise(from, bytes, MADV_POPULATE_WRITE); });
  advised_ += bytes;
  return result == 0;
}

bool PagePopulator::populate(std::size_t bytes) noexcept {
  if (bytes == 0) return false;
  // Only the pages not in yet are asked for: on pages already in,
  // MADV_POPULATE_WRITE still takes and drops a reference to each, which
  // costs far more than mincore(2) asking which are in (docs/NODE.md,
  // "The reply's pages").
  std::array<unsigned char, kResidencyPages> in{};
  std::byte* const end = begin_ + done_ + bytes;
  bool ok = true;
  for (std::byte* chunk = begin_ + done_; ok && chunk < end; chunk += kResidencyPages * kPageBytes) {
    const std::size_t pages = std::min<std::size_t>(kResidencyPages, static_cast<std::size_t>(end - chunk) / kPageBytes);
    if (::mincore(chunk, pages * kPageBytes, in.data()) != 0) {
      ok = advise(chunk, pages * kPageBytes);  // not told: ask for them all
      continue;
    }
    // Each run of pages not in, with one madvise.
    for (std::size_t i = 0; ok && i < pages;) {
      if ((in[i] & 1) != 0) {
        ++i;
        continue;
      }
      std::size_t run = i + 1;
      while (run < pages && (in[run] & 1) == 0) ++run;
      ok = advise(chunk + i * kPageBytes, (run - i) * kPageBytes);
      i = run;
    }
  }
  if (!ok) {
    done_ = page_bytes();  // refused (EINVAL before Linux 5.14): the read faults the rest in
    return false;
  }
  done_ += bytes;
  return done_ < page_bytes();
}

bool PagePopulator::step() noexcept { return populate(std::min(kStepBytes, page_bytes() - done_)); }

void PagePopulator::finish() noexcept { populate(page_bytes() - done_); }

}  // namespace spinrpc::node
