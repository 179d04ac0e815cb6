#include "descriptor/page_offset_bytes.h"

#include <new>  // ::operator new, ::operator delete, std::align_val_t

namespace spinrpc {

PageOffsetBytes allocate_at_page_offset(std::size_t bytes, std::size_t offset) {
  auto* page = static_cast<std::byte*>(::operator new(bytes + offset, std::align_val_t{kPageBytes}));
  return PageOffsetBytes(page + offset, PageOffsetDelete{offset});
}

void PageOffsetDelete::operator()(std::byte* data) const noexcept {
  ::operator delete(data - offset, std::align_val_t{kPageBytes});
}

}  // namespace spinrpc
