#pragma once
// Where the tests' real peers are, from the environment ctest sets
// (tests/CMakeLists.txt, spinrpc_add_test): build/bin for ours, the interop
// suite's npm install for tsgo. A missing peer is a failure, never a skip.
// Call these from inside a test case: they FAIL it.

#include <unistd.h>  // ::access, X_OK

#include <cstdlib>  // std::getenv
#include <string>   // std::string

#include <doctest/doctest.h>

namespace spinrpc::test {

/// An executable in build/bin (SPINRPC_BIN_DIR), which must be built.
inline std::string bin_path(const std::string& name) {
  const char* dir = std::getenv("SPINRPC_BIN_DIR");
  if (dir == nullptr || *dir == '\0') FAIL("SPINRPC_BIN_DIR is not set: run these tests through ctest");
  std::string path = std::string(dir) + "/" + name;
  if (::access(path.c_str(), X_OK) != 0) {
    FAIL(name << " is not built at " << path << ": build the " << name << " target");
  }
  return path;
}

/// The real tsgo from the interop suite's npm install (SPINRPC_TSGO).
inline std::string tsgo_path() {
  const char* path = std::getenv("SPINRPC_TSGO");
  if (path == nullptr || *path == '\0') {
    FAIL("SPINRPC_TSGO is not set: run these tests through ctest, after `npm ci` in tests/interop");
  }
  if (::access(path, X_OK) != 0) {
    FAIL("tsgo is not installed at " << std::string(path) << ": run `npm ci` in tests/interop");
  }
  return path;
}

}  // namespace spinrpc::test
