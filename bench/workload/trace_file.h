// The workload trace's C++ reader (spinrpc-replay). What a valid file is:
// bench/workload/README.md, "A valid trace"; bench/workload/trace_file.mjs
// is the JS reader and follows the same definition with the same messages
// (tests/interop/workload_trace.test.mjs runs both over every file in
// tests/workload/traces/).
#pragma once

#include <cstdint>    // std::int64_t, std::uint32_t, std::uint64_t
#include <stdexcept>  // std::runtime_error
#include <string>     // std::string
#include <vector>     // std::vector

namespace spinrpc::bench {

inline constexpr int kTraceVersion = 2;

struct TraceRequest {
  std::uint32_t method;         // index into Trace::methods
  std::uint64_t request_bytes;
  std::uint64_t reply_bytes;
  std::int64_t server_ns;       // -1: not recorded
  std::int64_t gap_ns;          // client work after the reply, before the next request; -1: none
};

struct Trace {
  std::vector<std::string> header;   // the '#' lines before the first request
  std::vector<std::string> methods;  // the names of the '# methods' line
  std::vector<TraceRequest> requests;
};

/// A file that is not a valid trace; what() is "FILE: line N: what is wrong"
/// (or "FILE: what is wrong" for the bytes before there are lines: the file
/// cannot be read, its gzip data is cut short or corrupt, or bytes follow it).
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads and checks the whole trace at `path`: gzip-compressed (one member,
/// nothing after it) when the name ends in ".gz", plain text otherwise.
/// Throws TraceError.
Trace read_trace(const std::string& path);

}  // namespace spinrpc::bench
