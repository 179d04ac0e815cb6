#include "bench/harness/integrity.h"

#include <algorithm>  // std::min, std::mismatch
#include <cstdio>     // std::fflush, std::fprintf
#include <cstdlib>    // std::_Exit
#include <cstring>    // std::memcmp

namespace spinrpc::bench {

void integrity_failure(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "spinrpc-bench: INTEGRITY FAILURE: %s\n", message.c_str());
  std::fflush(stderr);
  // _Exit, not exit: in a forked child, exit() would flush stdio buffers
  // copied from the parent (Google Benchmark's console and JSON output)
  // a second time.
  std::_Exit(kIntegrityExitStatus);
}

void check_reply(ByteView expected, ByteView got, std::string_view benchmark, std::size_t request) {
  if (expected.size() == got.size() &&
      (expected.empty() || std::memcmp(expected.data(), got.data(), expected.size()) == 0)) {
    return;
  }
  const std::size_t common = std::min(expected.size(), got.size());
  const auto diff = std::mismatch(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(common), got.begin());
  const auto offset = static_cast<std::size_t>(diff.first - expected.begin());
  integrity_failure(std::string(benchmark) + ", request " + std::to_string(request) + ": expected " +
                    std::to_string(expected.size()) + " bytes, got " + std::to_string(got.size()) +
                    " bytes, first difference at offset " + std::to_string(offset));
}

}  // namespace spinrpc::bench
