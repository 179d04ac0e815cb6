// PagePopulator against the kernel: the pages of a fresh anonymous mapping
// become resident (mincore) a step at a time, then all at once; the partial
// pages at either end of a block are left alone.
#include <sys/mman.h>  // ::mmap, ::munmap, ::mincore
#include <unistd.h>    // ::sysconf

#include <cstddef>  // std::byte, std::size_t
#include <vector>   // std::vector

#include <doctest/doctest.h>

#include "descriptor/page_offset_bytes.h"
#include "node/src/page_populator.h"

namespace {

using spinrpc::kPageBytes;
using spinrpc::node::PagePopulator;

// A fresh private anonymous mapping: no page resident until touched.
struct Mapping {
  explicit Mapping(std::size_t pages) : bytes(pages * kPageBytes) {
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(m != MAP_FAILED);
    data = static_cast<std::byte*>(m);
  }
  ~Mapping() { ::munmap(data, bytes); }
  // Which of its pages are resident.
  std::vector<bool> resident() const {
    std::vector<unsigned char> v(bytes / kPageBytes);
    REQUIRE(::mincore(data, bytes, v.data()) == 0);
    std::vector<bool> out;
    for (unsigned char c : v) out.push_back((c & 1) != 0);
    return out;
  }
  std::size_t resident_count() const {
    std::size_t n = 0;
    for (bool r : resident()) n += r ? 1 : 0;
    return n;
  }
  std::byte* data;
  std::size_t bytes;
};

TEST_CASE("PagePopulator makes a block's pages resident a step at a time, then the rest") {
  REQUIRE(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) == kPageBytes);
  constexpr std::size_t kSteps = 3;
  const std::size_t step_pages = PagePopulator::kStepBytes / kPageBytes;
  Mapping m(kSteps * step_pages + 5);
  CHECK(m.resident_count() == 0);
  PagePopulator p;
  p.reset({m.data, m.bytes});
  CHECK(p.page_bytes() == m.bytes);
  CHECK(p.step());
  if (p.populated_bytes() == p.page_bytes()) {
    // The kernel refused MADV_POPULATE_WRITE (before Linux 5.14): the
    // populator gives up and the read faults the pages in.
    MESSAGE("MADV_POPULATE_WRITE refused: nothing to check");
    return;
  }
  CHECK(p.populated_bytes() == PagePopulator::kStepBytes);
  CHECK(m.resident_count() == step_pages);
  CHECK(m.resident()[0]);
  CHECK_FALSE(m.resident()[step_pages]);
  p.finish();
  CHECK(p.populated_bytes() == m.bytes);
  CHECK(m.resident_count() == m.bytes / kPageBytes);
  CHECK_FALSE(p.step());
}

TEST_CASE("PagePopulator leaves the partial pages at a block's ends alone") {
  Mapping m(8);
  PagePopulator p;
  // From 100 bytes into the first page to 100 bytes into the last.
  p.reset({m.data + 100, 7 * kPageBytes});
  CHECK(p.page_bytes() == 6 * kPageBytes);
  p.finish();
  if (m.resident_count() == 0) {
    MESSAGE("MADV_POPULATE_WRITE refused: nothing to check");
    return;
  }
  const std::vector<bool> r = m.resident();
  CHECK_FALSE(r[0]);
  for (std::size_t i = 1; i < 7; ++i) CHECK(r[i]);
  CHECK_FALSE(r[7]);
}

TEST_CASE("PagePopulator asks only for the pages not in yet") {
  const std::size_t step_pages = PagePopulator::kStepBytes / kPageBytes;
  // Past one mincore(2) span, so that runs cross a span's end.
  Mapping m(2 * 512 + 7);
  // Every other run of 3 pages written by hand: in before the populator runs.
  std::size_t in_before = 0;
  for (std::size_t page = 0; page * kPageBytes < m.bytes; page += 6) {
    for (std::size_t i = page; i < page + 3 && i * kPageBytes < m.bytes; ++i, ++in_before) m.data[i * kPageBytes] = std::byte{1};
  }
  REQUIRE(m.resident_count() == in_before);
  PagePopulator p;
  p.reset({m.data, m.bytes});
  CHECK(p.step());
  if (m.resident_count() == in_before) {
    MESSAGE("MADV_POPULATE_WRITE refused: nothing to check");
    return;
  }
  // The first step's pages that were not in: those at 3, 4, 5 of every 6.
  std::size_t out_in_step = 0;
  for (std::size_t i = 0; i < step_pages; ++i) out_in_step += i % 6 >= 3 ? 1 : 0;
  CHECK(p.advised_bytes() == out_in_step * kPageBytes);
  p.finish();
  CHECK(m.resident_count() == m.bytes / kPageBytes);
  CHECK(p.advised_bytes() == m.bytes - in_before * kPageBytes);
  // All in now: populating the block again asks for nothing.
  PagePopulator again;
  again.reset({m.data, m.bytes});
  again.finish();
  CHECK(again.advised_bytes() == 0);
  CHECK(again.done());
}

TEST_CASE("PagePopulator on a block smaller than a page does nothing") {
  Mapping m(1);
  PagePopulator p;
  p.reset({m.data + 16, 1000});
  CHECK(p.page_bytes() == 0);
  CHECK_FALSE(p.step());
  p.finish();
  CHECK(m.resident_count() == 0);
}

}  // namespace
