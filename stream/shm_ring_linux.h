#pragma once

#include <atomic>        // std::atomic
#include <bit>           // std::endian
#include <cstddef>       // std::byte, std::size_t
#include <cstdint>       // std::uint32_t, std::uint64_t
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <system_error>  // std::system_error

#include "descriptor/unique_fd.h"

namespace spinrpc {

/// Bytes read from the shared memory broke its rules: an index that moved
/// back or past the other, a header that is not ours. What a peer that
/// scribbles on the ring gets: its own requests fail, the reader does not
/// crash, hang or read out of bounds (docs/SHARED-MEMORY.md, "Input from
/// another process"). A std::system_error (EBADMSG), so every caller that
/// handles an OS failure handles it; what() says which rule, in one
/// sentence (without the errno text std::system_error would append).
class RingCorrupt : public std::system_error {
 public:
  explicit RingCorrupt(const std::string& what)
      : std::system_error(EBADMSG, std::generic_category(), what), sentence_(what) {}
  const char* what() const noexcept override { return sentence_.what(); }

 private:
  std::runtime_error sentence_;  // copied without throwing, as an exception must be
};

/// One direction's control words, each group on a cache line of its own so
/// that a line is written by one side only (docs/SHARED-MEMORY.md,
/// "Layout"). Indices are byte counts modulo 2^32; `head - tail` (mod
/// 2^32) is the bytes in the ring and never exceeds its size.
struct alignas(64) RingProducerLine {
  std::atomic<std::uint32_t> head;    ///< bytes published; the futex word a reader sleeps on
  std::atomic<std::uint32_t> closed;  ///< 1: the writer is done (its last head is final)
};
struct alignas(64) RingConsumerLine {
  std::atomic<std::uint32_t> tail;  ///< bytes taken; the futex word a writer short of room sleeps on
};
struct alignas(64) RingWaiterLine {
  std::atomic<std::uint32_t> asleep;  ///< 1 while its side may be in FUTEX_WAIT (rarely written)
};
struct RingControl {
  RingProducerLine producer;
  RingConsumerLine consumer;
  RingWaiterLine reader;  ///< written by the reader: it may sleep on producer.head
  RingWaiterLine writer;  ///< written by the writer: it may sleep on consumer.tail
};

/// The first page of the shared memory: what it is, and the two directions'
/// control words. The rings follow it, client → server first.
struct alignas(64) RingHeader {
  std::uint64_t magic;    ///< kRingMagic
  std::uint32_t version;  ///< kRingVersion
  std::uint32_t ring_bytes;  ///< each direction's ring, a power of two
  std::atomic<std::uint32_t> accepted;  ///< kRingAccepted once the server takes the offer
};
struct RingPage {
  RingHeader header;
  RingControl to_server;
  RingControl to_client;
};

inline constexpr std::uint64_t kRingMagic = 0x31474e4952505053ULL;  // "SPPRING1", little-endian
inline constexpr std::uint32_t kRingVersion = 1;
inline constexpr std::uint32_t kRingAccepted = 0x41434b31;  // "1KCA": not a value memory starts with
inline constexpr std::size_t kRingPageBytes = 4096;
/// Each direction's ring by default: 1 MiB, a grown pipe's size, so that a
/// message the size of most of tsgo's big replies streams through in one
/// lap, while a small one stays one copy in and one copy out
/// (docs/SHARED-MEMORY.md, "Sizes").
inline constexpr std::size_t kDefaultRingBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMinRingBytes = 4096;
inline constexpr std::size_t kMaxRingBytes = std::size_t{1} << 30;

static_assert(std::endian::native == std::endian::little, "the layout is little-endian");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "atomics in shared memory must be lock-free");
static_assert(sizeof(RingPage) <= kRingPageBytes);

/// The shared memory of one connection, mapped: a sealed memfd made by the
/// client (create) and inherited by the server it spawns (open). Two
/// single-producer single-consumer byte rings, one each way
/// (docs/SHARED-MEMORY.md). Move-only; unmaps on destruction.
class SharedRing {
 public:
  /// Which end of the connection this process is.
  enum class Side { client, server };

  /// One direction as one side sees it: its control words and ring bytes,
  /// the size read once and checked.
  struct Direction {
    RingControl* control;
    std::byte* bytes;
    std::uint32_t size;  ///< a power of two
  };

  /// Client: a new memfd of kRingPageBytes + 2 × `ring_bytes` (a power of
  /// two in [kMinRingBytes, kMaxRingBytes]), sealed against shrinking,
  /// growing and further sealing, close-on-exec, numbered 3 or above, and
  /// its header written. Throws std::system_error (memfd_create, ftruncate,
  /// fcntl, mmap), std::invalid_argument for a bad size.
  static SharedRing create(std::size_t ring_bytes = kDefaultRingBytes);

  /// Server: maps the memfd `fd` offered by the client (borrowed; the
  /// caller closes it afterwards), after checking that it is a regular file
  /// sealed against shrinking and growing (so no access can fault), and
  /// that its header is ours and its size what the header says, each read
  /// once. Throws RingCorrupt for memory that is not a ring of ours,
  /// std::system_error for an OS failure.
  static SharedRing open(int fd);

  SharedRing(SharedRing&& other) noexcept;
  SharedRing& operator=(SharedRing&& other) noexcept;
  SharedRing(const SharedRing&) = delete;
  SharedRing& operator=(const SharedRing&) = delete;
  ~SharedRing();

  /// The memfd (client, until released), to hand to the child.
  int fd() const noexcept { return fd_.get(); }
  /// Closes the memfd; the mapping stays.
  void close_fd() noexcept { fd_.reset(); }

  /// Server: says that it takes the offer (a release store of
  /// kRingAccepted), before its first reply goes out on the pipe.
  void accept() noexcept;
  /// Client: whether the server took the offer, read after its first reply.
  bool accepted() const noexcept;

  /// The direction this side reads, and the one it writes.
  Direction inbound(Side side) const noexcept;
  Direction outbound(Side side) const noexcept;

  /// Bytes of each direction's ring.
  std::uint32_t ring_bytes() const noexcept { return ring_bytes_; }

 private:
  SharedRing(UniqueFd fd, void* map, std::size_t map_bytes, std::uint32_t ring_bytes) noexcept
      : fd_(std::move(fd)), map_(map), map_bytes_(map_bytes), ring_bytes_(ring_bytes) {}
  RingPage& page() const noexcept { return *static_cast<RingPage*>(map_); }
  Direction direction(bool to_server) const noexcept;

  UniqueFd fd_;
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  std::uint32_t ring_bytes_ = 0;  // read once, checked
};

}  // namespace spinrpc
