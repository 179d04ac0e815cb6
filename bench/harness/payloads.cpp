#include "bench/harness/payloads.h"

#include <cstdint>  // std::uint32_t

namespace spinrpc::bench {

std::vector<std::vector<std::byte>> make_payloads(std::size_t bytes, std::size_t count) {
  std::vector<std::vector<std::byte>> payloads(count, std::vector<std::byte>(bytes));
  std::uint32_t x = 0x2545f491;  // xorshift32, the same generator as echo_latency.mjs
  for (std::size_t k = 0; k < count; ++k) {
    std::vector<std::byte>& p = payloads[k];
    for (std::byte& b : p) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      b = static_cast<std::byte>(x & 0xff);
    }
    if (bytes >= 4) {
      for (std::size_t i = 0; i < 4; ++i) p[i] = static_cast<std::byte>((k >> (8 * (3 - i))) & 0xff);
    }
  }
  return payloads;
}

}  // namespace spinrpc::bench
