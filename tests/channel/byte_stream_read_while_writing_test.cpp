// ByteStream with BufferOptions::read_while_writing (spinrpc-server --async):
// a peer that writes everything it has before it reads anything is read
// while our write waits, over pipes (our own non-blocking description) and
// over a socket pair (MSG_DONTWAIT), and the fds we were given keep their
// flags. Without it both sides block writing: the write deadline turns that
// into a failure here instead of a hang.
#include <doctest/doctest.h>

#include <fcntl.h>       // ::fcntl, O_NONBLOCK
#include <poll.h>        // ::poll
#include <sys/socket.h>  // ::socketpair
#include <unistd.h>      // ::read, ::write

#include <atomic>   // std::atomic
#include <chrono>   // std::chrono::seconds
#include <cstddef>  // std::byte, std::size_t
#include <string>   // std::string
#include <thread>   // std::thread
#include <vector>   // std::vector

#include "channel/byte_stream.h"
#include "descriptor/pipe.h"
#include "wait/spin_policy.h"
#include "descriptor/unique_fd.h"
#include "stream/fd_streams_posix.h"

namespace spinrpc {
namespace {

constexpr std::size_t kPeerSends = std::size_t{1} << 20;  // past any pipe's or socket's buffer
constexpr std::size_t kWeSend = std::size_t{512} << 10;

std::byte at(std::size_t i) { return static_cast<std::byte>((i * 7 + i / 4096) & 0xff); }

// Writes `bytes` to `fd` (non-blocking, so a peer that never reads cannot
// hang the test), giving up 20 s after the last progress; returns how many
// went. Then reads `expect` bytes from `back`.
struct Peer {
  std::size_t sent = 0;
  std::size_t received = 0;
  void run(int fd, int back, std::size_t expect) {
    std::vector<std::byte> out(kPeerSends);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = at(i);
    while (sent < out.size()) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 20'000) <= 0) return;  // stuck: the stream is not reading
      const ssize_t n = ::write(fd, out.data() + sent, out.size() - sent);
      if (n > 0) sent += static_cast<std::size_t>(n);
    }
    std::vector<std::byte> in(64 << 10);
    while (received < expect) {
      pollfd p{back, POLLIN, 0};
      if (::poll(&p, 1, 20'000) <= 0) return;
      const ssize_t n = ::read(back, in.data(), in.size());
      if (n == 0) return;
      if (n > 0) received += static_cast<std::size_t>(n);
    }
  }
};

void set_nonblocking(int fd) { REQUIRE(::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) == 0); }

// The stream reads from `in` and writes to `out`; the peer writes to
// `peer_out` and reads from `peer_in`.
void check_reads_while_writing(UniqueFd in, UniqueFd out, int peer_out, int peer_in) {
  const int in_flags = ::fcntl(in.get(), F_GETFL);
  const int out_flags = ::fcntl(out.get(), F_GETFL);
  BufferOptions options;
  options.read_while_writing = true;
  const int in_fd = in.get();
  const int out_fd = out.get();
  ByteStream stream(fd_streams(std::move(in), std::move(out), options, false), options, SpinPolicy{});
  CHECK(::fcntl(in_fd, F_GETFL) == in_flags);  // ours to leave as found
  CHECK(::fcntl(out_fd, F_GETFL) == out_flags);

  Peer peer;
  std::thread peer_thread([&] { peer.run(peer_out, peer_in, kWeSend); });
  std::vector<std::byte> reply(kWeSend, std::byte{0x5a});
  iovec part{reply.data(), reply.size()};
  stream.set_deadline(std::chrono::steady_clock::now() + std::chrono::seconds(20));
  bool wrote = false;
  try {
    stream.write_all({&part, 1});
    wrote = true;
  } catch (const std::exception& e) {
    const std::string what = std::string("write_all: ") + e.what();
    MESSAGE(what);
  }
  CHECK(wrote);
  // What the peer sent arrived whole and in order, much of it read while
  // our write waited. (Bounded by the same deadline: a peer that gave up
  // leaves its end open, and a read would wait for it forever.)
  std::size_t checked = 0;
  bool same = true;
  try {
    while (checked < kPeerSends) {
      if (stream.buffered().empty() && stream.fill(1) == 0) break;
      const ByteView got = stream.buffered();
      for (std::size_t i = 0; i < got.size(); ++i) same = same && got[i] == at(checked + i);
      checked += got.size();
      stream.consume(got.size());
    }
  } catch (const std::exception& e) {
    const std::string what = std::string("reading: ") + e.what();
    MESSAGE(what);
  }
  stream.set_deadline(std::nullopt);
  peer_thread.join();  // only now are the peer's counts ours to read
  CHECK(peer.sent == kPeerSends);
  CHECK(peer.received == kWeSend);
  CHECK(checked == kPeerSends);
  CHECK(same);
}

TEST_CASE("read_while_writing: a peer that writes all before it reads is read while our write waits (pipes)") {
  PipePair to_stream = make_pipe();
  PipePair from_stream = make_pipe();
  set_nonblocking(to_stream.write_end.get());  // the peer's end only
  const int peer_out = to_stream.write_end.get();
  const int peer_in = from_stream.read_end.get();
  check_reads_while_writing(std::move(to_stream.read_end), std::move(from_stream.write_end), peer_out, peer_in);
}

TEST_CASE("read_while_writing: the same over a socket pair (one fd both ways)") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  UniqueFd ours(sv[0]);
  UniqueFd peer(sv[1]);
  set_nonblocking(peer.get());
  const int dup_ours = ::fcntl(ours.get(), F_DUPFD_CLOEXEC, 3);
  REQUIRE(dup_ours >= 0);
  check_reads_while_writing(std::move(ours), UniqueFd(dup_ours), peer.get(), peer.get());
}

}  // namespace
}  // namespace spinrpc
