#pragma once
// A counting replacement of the global operator new/delete, for the tests
// that check a steady state allocates nothing (the standard library's
// allocations included). The replacement lives in count_allocations.cpp: a
// program may define it once, so compile that file into each test
// executable that needs it (its CMakeLists), and the replacement then holds
// for the whole process.

#include <cstddef>  // std::size_t

namespace spinrpc::test {

/// Resets the count to 0, then counts every allocation from now on, on any
/// thread.
void start_counting_allocations() noexcept;

/// Stops counting; the count keeps its value.
void stop_counting_allocations() noexcept;

/// The allocations counted since the last start_counting_allocations().
std::size_t counted_allocations() noexcept;

}  // namespace spinrpc::test
