#pragma once
// Fresh directories for the trace files of one test case. They all live in
// one directory per test process, removed when the process ends, after the
// trace registry's exit writer (trace_registry.h) has written every file
// again: a ring stays registered until exit, so its directory must too.

#include <stdlib.h>  // ::mkdtemp

#include <algorithm>   // std::sort
#include <filesystem>  // std::filesystem
#include <stdexcept>   // std::runtime_error
#include <string>      // std::string
#include <vector>      // std::vector

namespace spinrpc::test {

namespace detail {
// The process's directory. Made before main (a namespace-scope static), so
// its destructor runs after every std::atexit function registered later,
// the exit writer among them.
struct ProcessScratch {
  std::string path;
  ProcessScratch() {
    std::string pattern = (std::filesystem::temp_directory_path() / "spinrpc-trace-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot make " + pattern);
    path = pattern;
  }
  ~ProcessScratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};
inline ProcessScratch process_scratch;
}  // namespace detail

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = detail::process_scratch.path + "/case-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot make " + pattern);
    path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const noexcept { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  /// The names of the files in it, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

}  // namespace spinrpc::test
