#pragma once

#include <cstdint>  // std::uint64_t
#include <string>   // std::string

namespace spinrpc::bench {

/// The payload of a benchWork request (bench/peers/bench_methods.h, answered by
/// spinrpc-bench-server): the server burns `busy_us` µs of CPU, then
/// replies `reply_bytes` bytes.
inline std::string bench_work_request(std::uint64_t busy_us, std::uint64_t reply_bytes) {
  return R"({"busyUs":)" + std::to_string(busy_us) + R"(,"replyBytes":)" + std::to_string(reply_bytes) + "}";
}

/// What benchWork replies: `reply_bytes` times 'x' (the integrity check's
/// expected bytes).
inline std::string bench_work_reply(std::uint64_t reply_bytes) { return std::string(reply_bytes, 'x'); }

}  // namespace spinrpc::bench
