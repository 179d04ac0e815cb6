#pragma once

#include <cstdio>   // std::fprintf
#include <cstdlib>  // std::abort

// FUZZ_CHECK(cond, what): an invariant of the code under test. On failure it
// prints one line and aborts, which libFuzzer reports as a crash (and saves
// the input) and the corpus replay reports as a failed ctest. Not assert():
// the replay runs in RelWithDebInfo, where NDEBUG turns assert off.
#define FUZZ_CHECK(cond, what)                                                                  \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "fuzz invariant failed at %s:%d: %s (%s)\n", __FILE__, __LINE__,     \
                   what, #cond);                                                                \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)
