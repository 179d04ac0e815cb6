#include "tests/support/count_allocations.h"

#include <atomic>   // std::atomic
#include <cstdlib>  // std::malloc, std::free
#include <new>      // std::bad_alloc, std::nothrow_t

// Replacing the global operator new/delete is the only way to see every
// allocation, the standard library's included. Every non-aligned form is
// replaced so that a sanitizer's own versions never meet ours (ASan reports
// its nothrow new paired with our delete). All of them stay out of line:
// inlined, GCC 12 sees malloc() or free() meet a new or delete expression
// and warns of a mismatch.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_allocations{0};

void* counted_malloc(std::size_t size) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  return std::malloc(size == 0 ? 1 : size);
}

void* counted_new(std::size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}
}  // namespace

namespace spinrpc::test {

void start_counting_allocations() noexcept {
  g_allocations = 0;
  g_counting = true;
}

void stop_counting_allocations() noexcept { g_counting = false; }

std::size_t counted_allocations() noexcept { return g_allocations.load(); }

}  // namespace spinrpc::test

[[gnu::noinline]] void* operator new(std::size_t size) { return counted_new(size); }
[[gnu::noinline]] void* operator new[](std::size_t size) { return counted_new(size); }
[[gnu::noinline]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_malloc(size);
}
[[gnu::noinline]] void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_malloc(size);
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
