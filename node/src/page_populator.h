#pragma once

#include <cstddef>  // std::byte, std::size_t
#include <span>     // std::span

namespace spinrpc::node {

/// Faults in the pages of a block of memory ahead of a read into it, a
/// step at a time or all at once, with madvise(MADV_POPULATE_WRITE). The
/// Node binding's big binary replies are read into a new Buffer, and on
/// the VMs we measure faulting new pages in during the read's copy is most
/// of a big reply's cost, and a populate done while the server works costs
/// the round trip nothing (docs/NODE.md, "Large payloads", has the
/// figures). On memory whose pages are in already (a Buffer Node's
/// allocator reused) the advice still walks every page, so mincore(2) is
/// asked first and only the pages not in are populated. A
/// page read but never written maps the shared zero page, counts as in,
/// and is faulted in by the read's copy, as without the populator.
///
/// Only whole pages inside the block are populated: its partial first and
/// last pages may belong to someone else's allocation, and writing there
/// (which MADV_POPULATE_WRITE does not, but a fallback would) is not ours
/// to do; they fault in during the read as before. Kernels before 5.14
/// refuse the advice (EINVAL): the populator then stops, and the read
/// faults the pages in as it always did.
class PagePopulator {
 public:
  /// Populated per step(): 16 pages, a step short enough that a reply
  /// arriving meanwhile waits for no more than one (docs/NODE.md, "Large
  /// payloads").
  static constexpr std::size_t kStepBytes = std::size_t{64} << 10;

  /// Starts on `block` (forgets any earlier one; the memory is not owned).
  void reset(std::span<std::byte> block) noexcept;

  /// Populates the next kStepBytes; returns whether any remain.
  bool step() noexcept;

  /// Populates all that remains.
  void finish() noexcept;

  /// Whether nothing is left to populate (also before the first reset()).
  bool done() const noexcept { return done_ == page_bytes(); }

  /// Bytes of pages asked for with MADV_POPULATE_WRITE since construction:
  /// pages already in (mincore) are skipped.
  std::size_t advised_bytes() const noexcept { return advised_; }

  /// Bytes populated so far of the block's whole pages, and their total.
  std::size_t populated_bytes() const noexcept { return done_; }
  std::size_t page_bytes() const noexcept { return end_ - begin_; }

 private:
  /// Pages whose residency one mincore(2) call asks for (a 2 MiB span).
  static constexpr std::size_t kResidencyPages = 512;

  bool populate(std::size_t bytes) noexcept;
  bool advise(std::byte* from, std::size_t bytes) noexcept;

  std::byte* begin_ = nullptr;  // the first whole page
  std::byte* end_ = nullptr;    // past the last whole page
  std::size_t done_ = 0;        // from begin_
  std::size_t advised_ = 0;     // see advised_bytes()
};

}  // namespace spinrpc::node
