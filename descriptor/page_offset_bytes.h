#pragma once

#include <cstddef>  // std::byte, std::size_t
#include <memory>   // std::unique_ptr

namespace spinrpc {

/// Uninitialised heap memory that starts a chosen distance past a page
/// boundary, for the big buffers the kernel copies pipe pages into or out
/// of. It copies them with `rep movsb`, which on AMD EPYC goes at a third
/// of its speed when the destination lies less than 64 bytes past the
/// source modulo 4 KiB (docs/NODE.md, "Large payloads"). The other end's big buffers
/// usually start a few bytes past a page boundary (malloc's mmap'd chunks,
/// Node's ArrayBuffers, fresh pipe pages), so ours keep well away from it:
/// kReadPageOffset for what we read into, kLendPageOffset for what we lend,
/// far from each other too, for two spinrpc ends.
inline constexpr std::size_t kPageBytes = 4096;
inline constexpr std::size_t kReadPageOffset = kPageBytes / 2;
inline constexpr std::size_t kLendPageOffset = kPageBytes / 4;

/// Frees what allocate_at_page_offset returned.
struct PageOffsetDelete {
  std::size_t offset = 0;
  void operator()(std::byte* data) const noexcept;
};
using PageOffsetBytes = std::unique_ptr<std::byte[], PageOffsetDelete>;

/// `bytes` bytes starting `offset` (< kPageBytes) bytes past a page
/// boundary. Throws std::bad_alloc.
PageOffsetBytes allocate_at_page_offset(std::size_t bytes, std::size_t offset);

}  // namespace spinrpc
