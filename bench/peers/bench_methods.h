#pragma once

#include <cstdint>  // std::uint64_t

namespace spinrpc {
class Server;
}  // namespace spinrpc

namespace spinrpc::bench {

/// Largest reply benchWork produces, in bytes (64 MiB): parameters come off
/// the wire, so the reply buffer is bounded like any frame.
inline constexpr std::uint64_t kMaxBenchReplyBytes = std::uint64_t{64} << 20;
/// Longest busy-work benchWork does, in µs (10 s).
inline constexpr std::uint64_t kMaxBenchBusyUs = 10'000'000;

/// Registers the method set the benchmarks drive on spinrpc-bench-server
/// (spinrpc-server itself answers tsgo's surface only):
///
///   benchWork {"busyUs": N, "replyBytes": M}
///     burns N µs of CPU on the server's thread (a busy loop, as a type
///     checker would), then replies M bytes ('x' repeated). Both default to
///     0. Parsed with simdjson. Throws (an Error reply) for malformed JSON,
///     a negative or non-integer value, or values over the limits above.
void register_bench_methods(Server& server);

}  // namespace spinrpc::bench
