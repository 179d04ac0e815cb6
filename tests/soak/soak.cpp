// spinrpc-soak: many echo round trips between the client shim and a real
// spinrpc-server, checking every reply and both processes' memory.
//
//   spinrpc-soak [--round-trips N] [--seed S] [--server PATH] [--progress N]
//
// Sizes are seeded and drawn from 0..1 MiB: 90% 0..256 bytes, 9% 257 B..64 KiB,
// 1% 64 KiB+1..1 MiB (about 8 KiB a message on average, so a million round
// trips move about 8 GiB each way). Each payload is a slice of a seeded random
// pool with the round-trip number stamped into its first 8 bytes, so a reply
// that belongs to another request cannot pass. Every reply's size and 64-bit
// checksum must equal the request's.
//
// VmRSS of this process and of the server (/proc/.../status) is sampled after
// a warm-up that grows every buffer to its largest (three 1 MiB echoes and
// 2 000 random ones) and again at the end; each must grow by less than
// 1 MiB (not judged in an AddressSanitizer build, see below). Exits 0 if
// every reply matched and memory stayed put, 1 otherwise,
// 2 for a bad command line. Defaults: 1 000 000 round trips, seed 1, the
// spinrpc-server next to this executable.
#include <unistd.h>  // ::readlink

#include <algorithm>  // std::min
#include <chrono>     // std::chrono
#include <cstddef>    // std::byte, std::size_t
#include <cstdint>    // std::uint64_t
#include <cstdio>     // std::printf, std::fprintf, std::fflush
#include <cstring>    // std::memcpy, std::strcmp
#include <exception>  // std::exception
#include <fstream>    // std::ifstream
#include <string>     // std::string, std::stoull
#include <vector>     // std::vector

#include "client-shim/sync_rpc_channel.h"
#include "tests/support/sanitizers.h"
#include "tests/support/splitmix64.h"

namespace {

constexpr std::size_t kMaxPayloadBytes = std::size_t{1} << 20;
constexpr long kMaxGrowthKib = 1024;

// Under AddressSanitizer resident memory is not this program's: freed blocks
// sit in its quarantine and fake stack frames (detect_stack_use_after_return)
// touch new pages for a long while, so RSS creeps up with no leak at all.
// There the growth is printed but not judged; LeakSanitizer checks leaks.
using spinrpc::test::kUnderAddressSanitizer;

using Rng = spinrpc::test::SplitMix64;

// 90% small, 9% medium, 1% large (see the file comment).
std::size_t draw_size(Rng& rng) {
  const std::uint64_t bucket = rng.next() % 100;
  if (bucket < 90) return rng.between(0, 256);
  if (bucket < 99) return rng.between(257, std::size_t{64} << 10);
  return rng.between((std::size_t{64} << 10) + 1, kMaxPayloadBytes);
}

// A 64-bit checksum, eight bytes at a time (fast enough not to dominate).
std::uint64_t checksum(const std::byte* data, std::size_t size) {
  std::uint64_t h = 0x243f6a8885a308d3ULL ^ size;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  for (; i < size; ++i) h = (h ^ std::to_integer<std::uint64_t>(data[i])) * 0x100000001b3ULL;
  h ^= h >> 33;
  return h * 0xff51afd7ed558ccdULL;
}

// VmRSS in KiB of /proc/<who>/status ("self" or a pid); -1 if unreadable.
long vm_rss_kib(const std::string& who) {
  std::ifstream status("/proc/" + who + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

std::string default_server() {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "spinrpc-server";
  std::string path(self, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "spinrpc-server";
}

struct Options {
  std::uint64_t round_trips = 1'000'000;
  std::uint64_t seed = 1;
  std::uint64_t progress = 100'000;  // print a line every this many; 0: never
  std::string server = default_server();
};

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    try {
      if (arg == "--round-trips") options.round_trips = std::stoull(value);
      else if (arg == "--seed") options.seed = std::stoull(value);
      else if (arg == "--progress") options.progress = std::stoull(value);
      else if (arg == "--server") options.server = value;
      else return false;
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

// The run: payload pool, counters, the one checking round trip.
class Soak {
 public:
  Soak(spinrpc::SyncRpcChannel& channel, std::uint64_t seed)
      : channel_(channel), pool_(2 * kMaxPayloadBytes), send_(kMaxPayloadBytes) {
    Rng fill{seed ^ 0x5eed5eed5eed5eedULL};
    for (std::size_t i = 0; i < pool_.size(); i += 8) {
      const std::uint64_t w = fill.next();
      std::memcpy(pool_.data() + i, &w, 8);
    }
  }

  // One echo of `size` bytes; false (and a line on stderr) if the reply differs.
  bool round_trip(std::size_t size, Rng& rng) {
    const std::size_t offset = rng.between(0, pool_.size() - size);
    std::memcpy(send_.data(), pool_.data() + offset, size);
    std::memcpy(send_.data(), &count_, std::min<std::size_t>(size, 8));  // stamp
    const std::uint64_t sent_sum = checksum(send_.data(), size);
    const spinrpc::ByteView reply = channel_.request_bytes("echo", {send_.data(), size});
    const std::uint64_t got_sum = checksum(reply.data(), reply.size());
    ++count_;
    bytes_ += size;
    total_sum_ ^= sent_sum + count_;
    if (reply.size() == size && got_sum == sent_sum) return true;
    std::fprintf(stderr,
                 "spinrpc-soak: CORRUPT reply at round trip %llu: sent %zu bytes (checksum "
                 "%016llx), got %zu bytes (checksum %016llx)\n",
                 static_cast<unsigned long long>(count_), size,
                 static_cast<unsigned long long>(sent_sum), reply.size(),
                 static_cast<unsigned long long>(got_sum));
    return false;
  }

  std::uint64_t count() const { return count_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t total_checksum() const { return total_sum_; }

 private:
  spinrpc::SyncRpcChannel& channel_;
  std::vector<std::byte> pool_;  // seeded random bytes payloads are cut from
  std::vector<std::byte> send_;  // the payload being sent; never reallocated
  std::uint64_t count_ = 0;      // round trips done, warm-up included
  std::uint64_t bytes_ = 0;      // payload bytes sent (each also came back)
  std::uint64_t total_sum_ = 0;  // folds every checksum, printed as a run's fingerprint
};

}  // namespace

constexpr char kUsage[] = "usage: spinrpc-soak [--round-trips N] [--seed S] [--server PATH] [--progress N]\n";

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Options options;
  if (!parse(argc, argv, options)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  try {
    spinrpc::SyncRpcChannel channel(options.server, {"--api"});
    const std::string server_pid = std::to_string(channel.pid());
    Soak soak(channel, options.seed);
    std::printf("spinrpc-soak: server %s (pid %s), seed %llu, %llu round trips\n",
                options.server.c_str(), server_pid.c_str(),
                static_cast<unsigned long long>(options.seed),
                static_cast<unsigned long long>(options.round_trips));
    std::printf("spinrpc-soak: sizes 90%% 0..256 B, 9%% 257 B..64 KiB, 1%% 64 KiB..1 MiB (uniform within each)\n");

    // Warm-up: the largest payload first, so every buffer on both sides has
    // grown to its final size before memory is sampled.
    Rng warm{options.seed ^ 0x7761726dULL};
    bool ok = true;
    for (int i = 0; i < 3; ++i) ok = soak.round_trip(kMaxPayloadBytes, warm) && ok;
    ok = soak.round_trip(0, warm) && ok;
    for (int i = 0; i < 2000; ++i) ok = soak.round_trip(draw_size(warm), warm) && ok;
    const long self_start = vm_rss_kib("self");
    const long server_start = vm_rss_kib(server_pid);
    const std::uint64_t warm_count = soak.count();
    const std::uint64_t warm_bytes = soak.bytes();
    std::printf("spinrpc-soak: after %llu warm-up round trips: VmRSS client %ld KiB, server %ld KiB\n",
                static_cast<unsigned long long>(warm_count), self_start, server_start);
    std::fflush(stdout);

    Rng rng{options.seed};
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t corrupt = 0;
    for (std::uint64_t i = 1; i <= options.round_trips; ++i) {
      if (!soak.round_trip(draw_size(rng), rng)) ++corrupt;
      if (options.progress != 0 && i % options.progress == 0 && i != options.round_trips) {
        std::printf("spinrpc-soak: %llu round trips, VmRSS client %ld KiB, server %ld KiB\n",
                    static_cast<unsigned long long>(i), vm_rss_kib("self"), vm_rss_kib(server_pid));
        std::fflush(stdout);
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long self_end = vm_rss_kib("self");
    const long server_end = vm_rss_kib(server_pid);
    const std::uint64_t trips = soak.count() - warm_count;
    const double mib = static_cast<double>(soak.bytes() - warm_bytes) / (1024.0 * 1024.0);

    std::printf("spinrpc-soak: %llu round trips in %.1f s (%.0f/s), %.1f MiB each way, "
                "%llu corrupt replies, checksum fingerprint %016llx\n",
                static_cast<unsigned long long>(trips), seconds,
                seconds > 0 ? static_cast<double>(trips) / seconds : 0.0, mib,
                static_cast<unsigned long long>(corrupt),
                static_cast<unsigned long long>(soak.total_checksum()));
    std::printf("spinrpc-soak: VmRSS client %ld -> %ld KiB (%+ld), server %ld -> %ld KiB (%+ld); "
                "limit +%ld KiB each\n",
                self_start, self_end, self_end - self_start, server_start, server_end,
                server_end - server_start, kMaxGrowthKib);
    const int status = channel.close();
    if (status != 0) {
      std::fprintf(stderr, "spinrpc-soak: the server ended with wait status %d, not a clean exit\n", status);
      ok = false;
    }
    if (corrupt != 0 || !ok) ok = false;
    if (self_start < 0 || server_start < 0 || self_end < 0 || server_end < 0) {
      std::fprintf(stderr, "spinrpc-soak: cannot read VmRSS\n");
      ok = false;
    } else if (kUnderAddressSanitizer) {
      std::printf("spinrpc-soak: VmRSS growth not judged under AddressSanitizer\n");
    } else if (self_end - self_start >= kMaxGrowthKib || server_end - server_start >= kMaxGrowthKib) {
      std::fprintf(stderr, "spinrpc-soak: FAILED: resident memory grew by 1 MiB or more\n");
      ok = false;
    }
    std::printf("spinrpc-soak: %s\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spinrpc-soak: %s\n", e.what());
    return 1;
  }
}
