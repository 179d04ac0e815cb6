// bench/workload/trace_file.cpp's read_trace over every file in tests/workload/traces/:
// each valid one gives the requests and methods expected.tsv names, each
// other one a TraceError whose what() is exactly "FILE: " and expected.tsv's
// text (bench/workload/README.md, "A valid trace").
#include <doctest/doctest.h>

#include <dirent.h>  // ::opendir, ::readdir, ::closedir

#include <fstream>  // std::ifstream
#include <map>      // std::map
#include <set>      // std::set
#include <string>   // std::string, std::getline

#include "bench/workload/trace_file.h"

namespace spinrpc::bench {
namespace {

const std::string kDir = SPINRPC_WORKLOAD_TESTS;

std::map<std::string, std::string> expected() {
  std::map<std::string, std::string> out;
  std::ifstream in(kDir + "/expected.tsv");
  REQUIRE(in);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    out.emplace(line.substr(0, tab), line.substr(tab + 1));
  }
  return out;
}

std::set<std::string> files() {
  std::set<std::string> out;
  DIR* dir = ::opendir((kDir + "/traces").c_str());
  REQUIRE(dir != nullptr);
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') out.emplace(entry->d_name);
  }
  ::closedir(dir);
  return out;
}

TEST_CASE("read_trace judges every shared trace file as expected.tsv says") {
  const std::map<std::string, std::string> want = expected();
  std::set<std::string> listed;
  for (const auto& [name, said] : want) listed.insert(name);
  CHECK(files() == listed);
  int refused = 0;
  for (const auto& [name, said] : want) {
    CAPTURE(name);
    const std::string path = kDir + "/traces/" + name;
    if (said.rfind("a valid trace", 0) == 0) {
      const Trace trace = read_trace(path);
      CHECK(said == "a valid trace, version 2: " + std::to_string(trace.requests.size()) + " requests, " +
                        std::to_string(trace.methods.size()) + " methods");
    } else {
      ++refused;
      try {
        read_trace(path);
        FAIL_CHECK("read as valid");
      } catch (const TraceError& e) {
        CHECK(std::string(e.what()) == path + ": " + said);
      }
    }
  }
  CHECK(refused >= 40);
}

TEST_CASE("read_trace gives the fields of each request line") {
  const Trace trace = read_trace(kDir + "/traces/good.trace.gz");
  REQUIRE(trace.requests.size() == 5);
  CHECK(trace.methods == std::vector<std::string>{"echo", "getSourceFile", "release"});
  CHECK(trace.header.size() == 4);
  const TraceRequest& r = trace.requests[2];  // "1 159 467 -1 588590"
  CHECK(r.method == 1);
  CHECK(r.request_bytes == 159);
  CHECK(r.reply_bytes == 467);
  CHECK(r.server_ns == -1);
  CHECK(r.gap_ns == 588590);
  const Trace largest = read_trace(kDir + "/traces/largest.trace");
  CHECK(largest.requests[1].request_bytes == 9007199254740991ULL);
}

}  // namespace
}  // namespace spinrpc::bench
