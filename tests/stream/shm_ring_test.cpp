// SharedRing and the streams over it (stream/shm_ring_linux.h, stream/shm_streams_linux.h)
// within one process: the client's ring made by create(), the server's
// mapped again from the same memfd by open() (two mappings, as two
// processes have), each side's pipes beside the ring made by make_pipe().
// A writer thread plays the peer where a side must wait; every wait is
// bounded by a hang guard (a deadline, or kHangGuard), never a timing.
#include <fcntl.h>     // ::fcntl, F_ADD_SEALS, F_SEAL_*
#include <signal.h>    // ::signal, SIGPIPE, SIG_IGN
#include <sys/mman.h>  // ::memfd_create, ::mmap, ::munmap
#include <sys/uio.h>   // iovec
#include <unistd.h>    // ::ftruncate, ::gettid

#include <algorithm>     // std::equal, std::min
#include <atomic>        // std::atomic
#include <cerrno>        // EBADMSG
#include <chrono>        // std::chrono
#include <cstddef>       // std::byte, std::size_t
#include <cstdint>       // std::uint32_t, std::uint64_t
#include <cstring>       // std::memcpy
#include <memory>        // std::shared_ptr, std::make_shared
#include <optional>      // std::optional
#include <span>          // std::span
#include <string>        // std::string
#include <system_error>  // std::system_error
#include <thread>        // std::thread
#include <utility>       // std::move
#include <vector>        // std::vector

#include <doctest/doctest.h>

#include "descriptor/pipe.h"
#include "descriptor/unique_fd.h"
#include "stream/peer_closed.h"
#include "stream/shm_ring_linux.h"
#include "stream/shm_streams_linux.h"
#include "stream/streams.h"
#include "stream/timed_out.h"
#include "tests/support/proc.h"
#include "tests/support/splitmix64.h"
#include "stream/fd_streams_posix.h"

namespace {

// A write to a pipe whose reader is gone (a doorbell after the peer left)
// must be EPIPE, not the end of this process: as in every process that
// writes streams (stream/output_stream.h; spinrpc-server and the shim see to it).
const bool kSigpipeIgnored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

using spinrpc::PeerClosed;
using spinrpc::RingCorrupt;
using spinrpc::SharedRing;
using spinrpc::Streams;
using spinrpc::TimedOut;
using spinrpc::UniqueFd;
using spinrpc::test::kHangGuard;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kRing = 4096;

Clock::time_point hang_guard() { return Clock::now() + kHangGuard; }

// Both ends of one connection on a ring of `ring_bytes`, with the pipes the
// connection began on kept beside it. `client_out_pipe_copy`, when given,
// receives a second write end of the client → server pipe, so that the
// client's ring writer can go while the pipe stays open (only the ring's
// closed flag then says EOF).
struct Connection {
  std::shared_ptr<SharedRing> client_ring;
  std::shared_ptr<SharedRing> server_ring;
  Streams client;
  Streams server;
};

// How the server's side maps the ring: a mapping of its own, as another
// process has; or the client's very mapping, so that ThreadSanitizer,
// which tells memory apart by address, follows the bytes from one thread
// to the other and checks the ring's release/acquire on head and tail.
enum class Mapping { own, shared_with_client };

Connection connect(std::size_t ring_bytes = kRing, UniqueFd* client_out_pipe_copy = nullptr,
                   Mapping mapping = Mapping::own) {
  auto client_ring = std::make_shared<SharedRing>(SharedRing::create(ring_bytes));
  auto server_ring = std::make_shared<SharedRing>(SharedRing::open(client_ring->fd()));
  if (mapping == Mapping::shared_with_client) server_ring = client_ring;
  spinrpc::PipePair to_server = spinrpc::make_pipe();
  spinrpc::PipePair to_client = spinrpc::make_pipe();
  if (client_out_pipe_copy != nullptr) *client_out_pipe_copy = UniqueFd::duplicate(to_server.write_end.get());
  Streams client_pipes = spinrpc::fd_streams(std::move(to_client.read_end), std::move(to_server.write_end),
                                             spinrpc::BufferOptions{}, false);
  Streams server_pipes = spinrpc::fd_streams(std::move(to_server.read_end), std::move(to_client.write_end),
                                             spinrpc::BufferOptions{}, false);
  Connection c;
  c.client = spinrpc::shm_streams(client_ring, SharedRing::Side::client, std::move(client_pipes));
  c.server = spinrpc::shm_streams(server_ring, SharedRing::Side::server, std::move(server_pipes));
  c.client_ring = std::move(client_ring);
  c.server_ring = std::move(server_ring);
  return c;
}

std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
  spinrpc::test::SplitMix64 rng{seed};
  std::vector<std::byte> bytes(n);
  for (auto& b : bytes) b = static_cast<std::byte>(rng.next());
  return bytes;
}

// One write_all of `bytes`, split into two iovec parts at `split`.
void write_bytes(spinrpc::OutputStream& out, const std::vector<std::byte>& bytes, std::size_t split = 0) {
  split = std::min(split, bytes.size());
  iovec parts[2] = {{const_cast<std::byte*>(bytes.data()), split},
                    {const_cast<std::byte*>(bytes.data()) + split, bytes.size() - split}};
  out.write_all(parts, nullptr);
}

// Reads exactly `n` bytes in reads of at most `chunk`; fails on an early EOF.
std::vector<std::byte> read_exactly(spinrpc::InputStream& in, std::size_t n, std::size_t chunk = 65536) {
  std::vector<std::byte> got(n);
  std::size_t at = 0;
  const auto deadline = hang_guard();
  while (at < n) {
    const std::size_t r = in.read_blocking(got.data() + at, std::min(chunk, n - at), deadline);
    REQUIRE_MESSAGE(r > 0, "EOF after " << at << " of " << n << " bytes");
    at += r;
  }
  return got;
}

std::uint64_t reader_sleeps(const spinrpc::InputStream& in) {
  spinrpc::StreamCounters c;
  in.add_counters(c);
  return c.ring_sleeps;
}

spinrpc::StreamCounters counters_of(const spinrpc::OutputStream& out) {
  spinrpc::StreamCounters c;
  out.add_counters(c);
  return c;
}

// ── Bytes across the ring ──────────────────────────────────────────────

TEST_CASE("the ring carries messages of every size in order across its wrap, larger ones streaming through") {
  Mapping mapping = Mapping::own;
  SUBCASE("each side its own mapping") { mapping = Mapping::own; }
  SUBCASE("one mapping for both sides") { mapping = Mapping::shared_with_client; }
  Connection c = connect(kRing, nullptr, mapping);
  REQUIRE(c.server_ring->ring_bytes() == kRing);
  const std::vector<std::size_t> sizes = {0,    1,    7,    100,  4095, 4096,  4097, 1,
                                          8191, 8192, 8193, 3,    65536, 65537, 1 << 20, 12345};
  std::vector<std::vector<std::byte>> messages;
  std::size_t total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    messages.push_back(pattern(sizes[i], i + 1));
    total += sizes[i];
  }
  std::thread writer([&] {
    c.client.out->set_deadline(hang_guard());
    for (std::size_t i = 0; i < messages.size(); ++i) write_bytes(*c.client.out, messages[i], i * 37);
  });
  // Read in odd chunk sizes so that the reads straddle the wrap too.
  const std::vector<std::byte> got = read_exactly(*c.server.in, total, 1531);
  writer.join();
  std::size_t at = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    CAPTURE(i);
    CAPTURE(sizes[i]);
    CHECK(std::equal(messages[i].begin(), messages[i].end(), got.begin() + static_cast<std::ptrdiff_t>(at)));
    at += sizes[i];
  }
  // The other direction, on the same ring, independently.
  const std::vector<std::byte> back = pattern(3 * kRing + 5, 99);
  std::thread replier([&] {
    c.server.out->set_deadline(hang_guard());
    write_bytes(*c.server.out, back, kRing - 1);
  });
  CHECK(read_exactly(*c.client.in, back.size(), 777) == back);
  replier.join();
  // A message larger than the ring cannot have gone in one piece: the
  // writer waited for room.
  CHECK(counters_of(*c.client.out).ring_full_waits > 0);
}

TEST_CASE("try_read says -1 while the ring is empty and the writer is there") {
  Connection c = connect();
  std::byte buf[16];
  CHECK(c.server.in->try_read(buf, sizeof buf) == -1);
  CHECK_FALSE(c.server.in->readable_now());
  const std::vector<std::byte> one = pattern(5, 7);
  write_bytes(*c.client.out, one);
  CHECK(c.server.in->readable_now());
  CHECK(c.server.in->try_read(buf, sizeof buf) == 5);
  CHECK(std::equal(one.begin(), one.end(), buf));
  CHECK(c.server.in->try_read(buf, sizeof buf) == -1);
  CHECK(std::string(c.server.in->traits().name) == "shared memory");
}

// ── EOF ────────────────────────────────────────────────────────────────

TEST_CASE("a destroyed writer is EOF through the closed flag, and only after every byte is read") {
  // The client → server pipe stays open through a copy: only the flag can end the read.
  UniqueFd pipe_copy;
  Connection c = connect(kRing, &pipe_copy);
  const std::vector<std::byte> sent = pattern(3000, 3);
  write_bytes(*c.client.out, sent);
  c.client.out.reset();
  CHECK(c.server_ring->inbound(SharedRing::Side::server).control->producer.closed.load() == 1);
  CHECK(c.server.in->readable_now());
  std::vector<std::byte> got;
  std::byte buf[100];
  for (;;) {
    const std::size_t n = c.server.in->read_blocking(buf, sizeof buf, hang_guard());
    if (n == 0) break;
    got.insert(got.end(), buf, buf + n);
  }
  CHECK(got == sent);
  // EOF stays EOF.
  CHECK(c.server.in->try_read(buf, sizeof buf) == 0);
  CHECK(c.server.in->read_blocking(buf, sizeof buf, hang_guard()) == 0);
}

TEST_CASE("a writer destroyed with more than a ring's worth still in flight: every byte, then EOF") {
  UniqueFd pipe_copy;
  Connection c = connect(kRing, &pipe_copy);
  const std::vector<std::byte> sent = pattern(5 * kRing + 17, 4);
  std::thread writer([&] {
    c.client.out->set_deadline(hang_guard());
    write_bytes(*c.client.out, sent, 1000);
    c.client.out.reset();  // closed flag while the reader is still behind
  });
  std::vector<std::byte> got;
  std::vector<std::byte> buf(333);
  for (;;) {
    const std::size_t n = c.server.in->read_blocking(buf.data(), buf.size(), hang_guard());
    if (n == 0) break;
    got.insert(got.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
  }
  writer.join();
  CHECK(got == sent);
}

TEST_CASE("a writer whose process went (its pipe closed, no closed flag) is EOF once the ring is empty") {
  Connection c = connect();
  const std::vector<std::byte> sent = pattern(200, 5);
  write_bytes(*c.client.out, sent);
  // What a SIGKILL leaves: the pipe end closed, the flag never stored.
  auto& control = *c.server_ring->inbound(SharedRing::Side::server).control;
  c.client.out.reset();
  control.producer.closed.store(0);  // as if the writer died before storing it
  CHECK(read_exactly(*c.server.in, sent.size()) == sent);
  std::byte buf[8];
  CHECK(c.server.in->read_blocking(buf, sizeof buf, hang_guard()) == 0);
}

TEST_CASE("bytes on the pipe beside the ring are doorbells: a stray one wakes the reader, which sleeps on") {
  UniqueFd pipe_copy;
  Connection c = connect(kRing, &pipe_copy);
  const char stray = 'x';
  REQUIRE(::write(pipe_copy.get(), &stray, 1) == 1);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::byte message[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
    iovec part{message, sizeof message};
    c.client.out->write_all(std::span(&part, 1), nullptr);
  });
  std::byte buf[8];
  const std::size_t n = c.server.in->read_blocking(buf, sizeof buf, hang_guard());
  writer.join();
  REQUIRE(n == 3);
  CHECK(buf[0] == std::byte{1});
  CHECK(buf[2] == std::byte{3});
}

// ── open() refusing memory that is not a ring of ours ─────────────────

struct FakeHeader {
  std::uint64_t magic = spinrpc::kRingMagic;
  std::uint32_t version = spinrpc::kRingVersion;
  std::uint32_t ring_bytes = kRing;
};

// A memfd of `size` bytes whose first bytes are `header`, sealed with `seals`
// (0: none; with MFD_ALLOW_SEALING unless `allow_sealing` is false).
UniqueFd fake_ring(std::size_t size, FakeHeader header, unsigned seals, bool allow_sealing = true) {
  UniqueFd fd(::memfd_create("fake-ring", MFD_CLOEXEC | (allow_sealing ? MFD_ALLOW_SEALING : 0U)));
  REQUIRE(fd);
  REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(size)) == 0);
  if (size >= sizeof header) {
    void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    REQUIRE(map != MAP_FAILED);
    std::memcpy(static_cast<char*>(map) + offsetof(spinrpc::RingHeader, magic), &header.magic, 8);
    std::memcpy(static_cast<char*>(map) + offsetof(spinrpc::RingHeader, version), &header.version, 4);
    std::memcpy(static_cast<char*>(map) + offsetof(spinrpc::RingHeader, ring_bytes), &header.ring_bytes, 4);
    ::munmap(map, size);
  }
  if (seals != 0) REQUIRE(::fcntl(fd.get(), F_ADD_SEALS, seals) == 0);
  return fd;
}

constexpr unsigned kSeals = F_SEAL_SHRINK | F_SEAL_GROW;
constexpr std::size_t kFullSize = spinrpc::kRingPageBytes + 2 * kRing;

// Runs open(fd), which must throw RingCorrupt (EBADMSG); returns what() for
// closer checks. what() is one sentence: the errno text std::system_error
// would append ("Bad message") says nothing the sentence does not.
std::string refused(int fd) {
  try {
    SharedRing::open(fd);
  } catch (const RingCorrupt& e) {
    CHECK(e.code() == std::error_code(EBADMSG, std::generic_category()));
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find(": Bad message") == std::string::npos);
    CHECK(what.rfind("the offered shared memory", 0) == 0);
    return what;
  }
  FAIL("open() took memory that is not a ring of ours");
  return {};
}

TEST_CASE("open() takes a well-formed sealed memfd made by hand, as it takes create()'s") {
  const UniqueFd fd = fake_ring(kFullSize, FakeHeader{}, kSeals);
  const SharedRing ring = SharedRing::open(fd.get());
  CHECK(ring.ring_bytes() == kRing);
  CHECK_FALSE(ring.accepted());
  // The descriptor is borrowed: still open.
  CHECK(::fcntl(fd.get(), F_GETFD) >= 0);
}

TEST_CASE("open() refuses a descriptor that is not a memfd") {
  spinrpc::PipePair pipe = spinrpc::make_pipe();
  CHECK(refused(pipe.read_end.get()).find("is not a memfd") != std::string::npos);
  const UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  REQUIRE(null);
  CHECK(refused(null.get()).find("is not a memfd") != std::string::npos);
}

TEST_CASE("open() refuses an unsealed memfd, and one sealed against shrinking only") {
  CHECK(refused(fake_ring(kFullSize, FakeHeader{}, 0).get()).find("not sealed") != std::string::npos);
  CHECK(refused(fake_ring(kFullSize, FakeHeader{}, 0, /*allow_sealing=*/false).get()).find("not sealed") !=
        std::string::npos);
  CHECK(refused(fake_ring(kFullSize, FakeHeader{}, F_SEAL_SHRINK).get()).find("not sealed") != std::string::npos);
}

TEST_CASE("open() refuses a memfd sealed against writing: it cannot be mapped for writing (std::system_error)") {
  const UniqueFd fd = fake_ring(kFullSize, FakeHeader{}, kSeals | F_SEAL_WRITE);
  CHECK_THROWS_AS(SharedRing::open(fd.get()), std::system_error);
}

TEST_CASE("open() refuses a wrong magic or version") {
  FakeHeader magic;
  magic.magic ^= 1;
  CHECK(refused(fake_ring(kFullSize, magic, kSeals).get()).find("not a spinrpc ring") != std::string::npos);
  FakeHeader version;
  version.version = spinrpc::kRingVersion + 1;
  CHECK(refused(fake_ring(kFullSize, version, kSeals).get()).find("not a spinrpc ring") != std::string::npos);
  // And a ring create() made, its magic overwritten afterwards.
  SharedRing made = SharedRing::create(kRing);
  void* map = ::mmap(nullptr, spinrpc::kRingPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, made.fd(), 0);
  REQUIRE(map != MAP_FAILED);
  static_cast<spinrpc::RingHeader*>(map)->magic = 0;
  ::munmap(map, spinrpc::kRingPageBytes);
  CHECK(refused(made.fd()).find("not a spinrpc ring") != std::string::npos);
}

TEST_CASE("open() refuses a size that disagrees with the header") {
  FakeHeader header;  // says 4096-byte rings
  CHECK(refused(fake_ring(spinrpc::kRingPageBytes + 2 * 8192, header, kSeals).get()).find("does not match") !=
        std::string::npos);
  CHECK(refused(fake_ring(kFullSize - 1, header, kSeals).get()).find("does not match") != std::string::npos);
  header.ring_bytes = 6000;  // not a power of two, though the length matches
  CHECK(refused(fake_ring(spinrpc::kRingPageBytes + 2 * 6000, header, kSeals).get()).find("does not match") !=
        std::string::npos);
  header.ring_bytes = 2048;  // below the minimum
  CHECK(refused(fake_ring(spinrpc::kRingPageBytes + 2 * 2048, header, kSeals).get()).find("does not match") !=
        std::string::npos);
  CHECK(refused(fake_ring(100, FakeHeader{}, kSeals).get()).find("smaller than its header") != std::string::npos);
  CHECK(refused(fake_ring(0, FakeHeader{}, kSeals).get()).find("smaller than its header") != std::string::npos);
}

TEST_CASE("create() refuses a ring size that is not a power of two from 4096 to 2^30") {
  CHECK_THROWS_AS(SharedRing::create(4095), std::invalid_argument);
  CHECK_THROWS_AS(SharedRing::create(6000), std::invalid_argument);
  CHECK_THROWS_AS(SharedRing::create(2048), std::invalid_argument);
  CHECK_THROWS_AS(SharedRing::create(std::size_t{1} << 31), std::invalid_argument);
  const SharedRing ring = SharedRing::create(8192);
  CHECK(ring.ring_bytes() == 8192);
  CHECK(ring.fd() > 2);
  CHECK((::fcntl(ring.fd(), F_GETFD) & FD_CLOEXEC) != 0);
  CHECK((::fcntl(ring.fd(), F_GET_SEALS) & (kSeals | F_SEAL_SEAL)) == (kSeals | F_SEAL_SEAL));
}

// ── Indices that break the rules ──────────────────────────────────────

TEST_CASE("the reader throws RingCorrupt for a head past the ring's size or behind its tail") {
  Connection c = connect();
  auto& control = *c.client_ring->outbound(SharedRing::Side::client).control;
  const std::vector<std::byte> sent = pattern(10, 6);
  write_bytes(*c.client.out, sent);
  CHECK(read_exactly(*c.server.in, 10) == sent);  // the reader's tail is 10
  std::byte buf[64];

  SUBCASE("head one past a full ring") { control.producer.head.store(10 + kRing + 1); }
  SUBCASE("head far ahead") { control.producer.head.store(0x80000000U); }
  SUBCASE("head moved back behind the tail") { control.producer.head.store(9); }
  SUBCASE("head moved back to 0") { control.producer.head.store(0); }

  try {
    c.server.in->try_read(buf, sizeof buf);
    FAIL("no RingCorrupt");
  } catch (const RingCorrupt& e) {
    CHECK(std::string(e.what()).find("head index") != std::string::npos);
  }
  CHECK_THROWS_AS(c.server.in->read_blocking(buf, sizeof buf, hang_guard()), RingCorrupt);
  // readable_now() does not throw: the read that follows says why.
  CHECK(c.server.in->readable_now());
}

TEST_CASE("a head exactly a full ring ahead is not corrupt: the reader takes the ring's bytes") {
  Connection c = connect();
  auto& control = *c.client_ring->outbound(SharedRing::Side::client).control;
  control.producer.head.store(kRing);
  std::vector<std::byte> buf(2 * kRing);
  CHECK(c.server.in->try_read(buf.data(), buf.size()) == static_cast<long>(kRing));
}

TEST_CASE("the writer throws RingCorrupt when the reader's tail moves back or past its head") {
  Connection c = connect();
  auto& control = *c.server_ring->inbound(SharedRing::Side::server).control;
  c.client.out->set_deadline(hang_guard());
  // Fill the ring, let the reader take half, and write 1000 more: the
  // writer reads the tail (2048) once to find room for them.
  write_bytes(*c.client.out, pattern(kRing, 8));
  read_exactly(*c.server.in, kRing / 2);
  write_bytes(*c.client.out, pattern(1000, 9));
  REQUIRE(control.consumer.tail.load() == kRing / 2);
  // The next write needs more room than what the writer last saw left.
  SUBCASE("tail moved back") { control.consumer.tail.store(kRing / 2 - 1); }
  SUBCASE("tail moved back to 0") { control.consumer.tail.store(0); }
  SUBCASE("tail past the head") { control.consumer.tail.store(kRing + 1000 + 1); }
  SUBCASE("tail far ahead") { control.consumer.tail.store(0xfffff000U); }
  try {
    write_bytes(*c.client.out, pattern(2000, 10));
    FAIL("no RingCorrupt");
  } catch (const RingCorrupt& e) {
    CHECK(std::string(e.what()).find("tail index") != std::string::npos);
  }
}

TEST_CASE("a tail that catches up with the head exactly is not corrupt: the writer has the whole ring") {
  Connection c = connect();
  auto& control = *c.server_ring->inbound(SharedRing::Side::server).control;
  c.client.out->set_deadline(hang_guard());
  write_bytes(*c.client.out, pattern(kRing, 11));
  control.consumer.tail.store(kRing);  // as if the reader had taken it all
  write_bytes(*c.client.out, pattern(kRing, 12));
  CHECK(counters_of(*c.client.out).ring_full_waits == 0);
}

// ── The writer's endings ──────────────────────────────────────────────

TEST_CASE("the writer with a full ring throws PeerClosed once the reader's pipe end is closed") {
  Connection c = connect();
  c.server.in.reset();  // the reader's ring stream and its pipe end go
  // A deadline far past the liveness period: a writer that missed the
  // closed pipe would throw TimedOut instead and fail the check below.
  c.client.out->set_deadline(hang_guard());
  try {
    write_bytes(*c.client.out, pattern(kRing + 1, 13));
    FAIL("the write of more than the ring returned with no reader");
  } catch (const PeerClosed& e) {
    CHECK(e.where() == PeerClosed::Where::writing);
  }
  CHECK(counters_of(*c.client.out).ring_full_waits >= 1);
}

TEST_CASE("the writer with room left writes although the reader is gone (as a pipe's buffer would take it)") {
  Connection c = connect();
  c.server.in.reset();
  c.client.out->set_deadline(hang_guard());
  CHECK_NOTHROW(write_bytes(*c.client.out, pattern(kRing, 14)));
}

TEST_CASE("TimedOut: a reader with nothing to read and a writer with no room, past their deadlines") {
  Connection c = connect();
  std::byte buf[8];
  SUBCASE("the reader, a deadline ahead") {
    CHECK_THROWS_AS(c.server.in->read_blocking(buf, sizeof buf, Clock::now() + std::chrono::milliseconds(20)),
                    TimedOut);
    CHECK(reader_sleeps(*c.server.in) >= 1);
  }
  SUBCASE("the reader, a deadline passed already") {
    CHECK_THROWS_AS(c.server.in->read_blocking(buf, sizeof buf, Clock::now() - std::chrono::seconds(1)),
                    TimedOut);
  }
  SUBCASE("the writer, the reader alive but taking nothing") {
    c.client.out->set_deadline(Clock::now() + std::chrono::milliseconds(20));
    CHECK_THROWS_AS(write_bytes(*c.client.out, pattern(kRing + 1, 15)), TimedOut);
  }
  SUBCASE("bytes there are read although the deadline has passed") {
    write_bytes(*c.client.out, pattern(3, 16));
    CHECK(c.server.in->read_blocking(buf, sizeof buf, Clock::now() - std::chrono::seconds(1)) == 3);
  }
}

// ── Sleeping and waking ───────────────────────────────────────────────

TEST_CASE("a reader asleep on its doorbell is woken by a write") {
  Connection c = connect();
  auto& control = *c.server_ring->inbound(SharedRing::Side::server).control;
  // Rounds until one write finds the reader's asleep flag up (a round can
  // miss it only in the instant between the flag and the reader's look).
  bool woken = false;
  for (int round = 0; round < 20 && !woken; ++round) {
    std::atomic<int> tid{0};
    std::size_t got = 0;
    std::byte buf[8];
    std::thread reader([&] {
      tid = static_cast<int>(::gettid());
      got = c.server.in->read_blocking(buf, sizeof buf, hang_guard());
    });
    REQUIRE(spinrpc::test::eventually([&] {
      return tid != 0 && control.reader.asleep.load() == 1 && spinrpc::test::thread_state(tid) == "S";
    }));
    const std::uint64_t wakes_before = counters_of(*c.client.out).ring_wakes;
    const std::byte one{static_cast<unsigned char>(round)};
    iovec part{const_cast<std::byte*>(&one), 1};
    c.client.out->write_all(std::span(&part, 1), nullptr);
    reader.join();
    CHECK(got == 1);
    CHECK(buf[0] == one);
    woken = counters_of(*c.client.out).ring_wakes > wakes_before;
  }
  CHECK(woken);
  CHECK(reader_sleeps(*c.server.in) >= 1);
}

TEST_CASE("a writer asleep on a full ring is woken by a read") {
  Connection c = connect();
  auto& control = *c.server_ring->inbound(SharedRing::Side::server).control;
  const std::vector<std::byte> sent = pattern(2 * kRing, 17);
  std::atomic<int> tid{0};
  std::thread writer([&] {
    tid = static_cast<int>(::gettid());
    c.client.out->set_deadline(hang_guard());
    write_bytes(*c.client.out, sent);
  });
  REQUIRE(spinrpc::test::eventually([&] {
    return tid != 0 && control.writer.asleep.load() == 1 && spinrpc::test::thread_state(tid) == "S";
  }));
  CHECK(read_exactly(*c.server.in, sent.size(), 100) == sent);
  writer.join();
  spinrpc::StreamCounters reader_counters;
  c.server.in->add_counters(reader_counters);
  CHECK(reader_counters.ring_wakes >= 1);
  CHECK(counters_of(*c.client.out).ring_full_waits >= 1);
}

}  // namespace
