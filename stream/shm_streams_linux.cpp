#include "stream/shm_streams_linux.h"

#include <fcntl.h>  // O_WRONLY
#include <poll.h>   // ::poll, POLLOUT, POLLERR, POLLHUP
#include <unistd.h> // ::write

#include <algorithm>  // std::min
#include <array>      // std::array
#include <atomic>     // std::atomic, std::memory_order
#include <cerrno>     // ETIMEDOUT
#include <cstring>    // std::memcpy
#include <optional>   // std::optional
#include <stdexcept>  // std::invalid_argument
#include <string>     // std::to_string
#include <utility>    // std::move

#include "descriptor/syscall.h"
#include "stream/fd_output_stream_posix.h"
#include "stream/futex_linux.h"
#include "stream/peer_closed.h"
#include "stream/timed_out.h"

namespace spinrpc {
namespace {

using Clock = std::chrono::steady_clock;

// How long a writer with a full ring tries again before it sleeps: the
// reader copying out the last lap frees room within microseconds.
constexpr std::chrono::microseconds kRoomSpin{20};

// How long the next futex wait may last: the liveness period, cut to the
// deadline. Throws TimedOut once the deadline has passed.
std::chrono::nanoseconds sleep_limit(const std::optional<Clock::time_point>& deadline, const char* what) {
  std::chrono::nanoseconds limit = kRingLivenessPeriod;
  if (!deadline) return limit;
  const auto left = *deadline - Clock::now();
  if (left.count() <= 0) throw TimedOut(what);
  return std::min<std::chrono::nanoseconds>(limit, left);
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The bytes of a ring from index `at` (mod its size) into `dst`, across its end.
void copy_out(const SharedRing::Direction& d, std::uint32_t at, std::byte* dst, std::size_t len) noexcept {
  const std::uint32_t offset = at & (d.size - 1);
  const std::size_t first = std::min<std::size_t>(len, d.size - offset);
  std::memcpy(dst, d.bytes + offset, first);
  if (first < len) std::memcpy(dst + first, d.bytes, len - first);
}

void copy_in(const SharedRing::Direction& d, std::uint32_t at, const std::byte* src, std::size_t len) noexcept {
  const std::uint32_t offset = at & (d.size - 1);
  const std::size_t first = std::min<std::size_t>(len, d.size - offset);
  std::memcpy(d.bytes + offset, src, first);
  if (first < len) std::memcpy(d.bytes, src + first, len - first);
}

// The fast half of the wake protocol's Dekker pair: publishes `value`,
// then reads the peer's asleep flag, a full fence between them
// (docs/SHARED-MEMORY.md, "Memory ordering").
inline std::uint32_t store_then_load(std::atomic<std::uint32_t>& index, std::uint32_t value,
                                     const std::atomic<std::uint32_t>& asleep) noexcept {
  index.store(value, std::memory_order_seq_cst);
  return asleep.load(std::memory_order_seq_cst);
}

// The slow half: sets the asleep flag, a full fence before the caller looks
// at the index again.
inline void announce_sleep(std::atomic<std::uint32_t>& asleep) noexcept {
  asleep.store(1, std::memory_order_seq_cst);
}

// Reads the peer's direction. tail_ is ours: the copy in shared memory is
// only ever written, never read back.
class ShmInputStream final : public InputStream {
 public:
  // A try is a load of the head's cache line (StreamTraits::Tries); the
  // peer is the pipe's.
  ShmInputStream(std::shared_ptr<SharedRing> ring, SharedRing::Direction direction, std::unique_ptr<InputStream> pipe)
      : InputStream(StreamTraits{StreamTraits::Tries::memory_load, "shared memory", pipe->traits().peer, nullptr}),
        ring_(std::move(ring)), dir_(direction), control_(*direction.control), pipe_(std::move(pipe)) {}

  long try_read(std::byte* buf, std::size_t len) override {
    std::uint32_t available = published();
    if (available == 0) {
      // The next bytes land here: asking for the line while head is polled
      // overlaps its transfer with head's, instead of one after the other.
      __builtin_prefetch(dir_.bytes + (tail_ & (dir_.size - 1)));
      // The writer's last head is stored before `closed`: once `closed`
      // is seen, a second look at head finds everything it published.
      if (control_.producer.closed.load(std::memory_order_acquire) == 0) return -1;
      available = published();
      if (available == 0) return 0;
    }
    return static_cast<long>(take(buf, std::min<std::size_t>(len, available)));
  }

  std::size_t read_blocking(std::byte* buf, std::size_t len, const Deadline& deadline) override {
    for (;;) {
      if (const long n = try_read(buf, len); n >= 0) return static_cast<std::size_t>(n);
      if (!sleep_for_bytes(deadline)) {
        // The peer is gone: what it published before it went is read first.
        const long n = try_read(buf, len);
        return n > 0 ? static_cast<std::size_t>(n) : 0;
      }
    }
  }

  bool readable_now() override {
    try {
      return published() != 0 || control_.producer.closed.load(std::memory_order_acquire) != 0;
    } catch (const RingCorrupt&) {
      return true;  // the read that follows says so
    }
  }

  void add_counters(StreamCounters& into) const noexcept override {
    pipe_->add_counters(into);
    into.ring_sleeps += sleeps_;
    into.ring_wakes += wakes_;
  }

 private:
  // The bytes the writer has published and we have not taken: head read
  // once, checked against our own tail.
  std::uint32_t published() const {
    const std::uint32_t head = control_.producer.head.load(std::memory_order_acquire);
    const std::uint32_t available = head - tail_;
    if (available > dir_.size) {
      throw RingCorrupt("the shared-memory ring is corrupt: the peer's head index (" + std::to_string(head) +
                        ") is not within the ring's " + std::to_string(dir_.size) + " bytes of our tail (" +
                        std::to_string(tail_) + ")");
    }
    return available;
  }

  std::size_t take(std::byte* buf, std::size_t n) {
    copy_out(dir_, tail_, buf, n);
    tail_ += static_cast<std::uint32_t>(n);
    // Store tail, then read the writer's flag; the writer stores its flag,
    // then reads tail (docs/SHARED-MEMORY.md, "Memory ordering").
    if (store_then_load(control_.consumer.tail, tail_, control_.writer.asleep) != 0) {
      futex_wake_shared(control_.consumer.tail);
      ++wakes_;
    }
    return n;
  }

  // Sleeps in a read of the pipe beside the ring until the writer rings
  // it (a byte, written when it finds us asleep), the peer is gone (EOF:
  // false) or the deadline passes (TimedOut). The doorbell is the pipe, not
  // a futex: a pipe's wake-up is a sync one, which the scheduler places on
  // the waker's CPU, as over pipes (docs/SHARED-MEMORY.md, "Wake protocol").
  bool sleep_for_bytes(const Deadline& deadline) {
    announce_sleep(control_.reader.asleep);
    bool alive = true;
    if (control_.producer.head.load(std::memory_order_seq_cst) == tail_ &&
        control_.producer.closed.load(std::memory_order_seq_cst) == 0) {
      ++sleeps_;
      try {
        alive = pipe_->read_blocking(doorbells_.data(), doorbells_.size(), deadline) > 0;
      } catch (...) {
        control_.reader.asleep.store(0, std::memory_order_relaxed);
        throw;
      }
    }
    control_.reader.asleep.store(0, std::memory_order_relaxed);
    return alive;
  }

  std::array<std::byte, 64> doorbells_;  // rung bytes, drained up to this many at a time
  std::shared_ptr<SharedRing> ring_;  // keeps the mapping
  SharedRing::Direction dir_;
  RingControl& control_;
  std::unique_ptr<InputStream> pipe_;
  std::uint32_t tail_ = 0;
  std::uint64_t sleeps_ = 0;
  std::uint64_t wakes_ = 0;
};

// Writes our direction. head_ is ours; tail_seen_ the reader's tail as last
// read (and checked), reread only when the room it leaves is too small.
class ShmOutputStream final : public OutputStream {
 public:
  ShmOutputStream(std::shared_ptr<SharedRing> ring, SharedRing::Direction direction, std::unique_ptr<FdOutputStream> pipe)
      : ring_(std::move(ring)), dir_(direction), control_(*direction.control), pipe_(std::move(pipe)),
        doorbell_(reopen_nonblocking(pipe_->fd(), O_WRONLY)) {}

  ~ShmOutputStream() override {
    // EOF for the reader, as a closed pipe is: after the last head. The
    // pipes close after this, which wakes a sleeping reader too.
    control_.producer.closed.store(1, std::memory_order_seq_cst);
    ring_doorbell();
  }

  void write_all(std::span<iovec> parts, WhileWriteWaits* /*while_waiting*/) override {
    notify_before_write();
    std::size_t unpublished = 0;
    for (iovec& part : parts) {
      const auto* src = static_cast<const std::byte*>(part.iov_base);
      std::size_t left = part.iov_len;
      while (left > 0) {
        std::size_t room = room_for(left);
        if (room == 0) {
          publish();
          unpublished = 0;
          room = wait_for_room();
        }
        const std::size_t n = std::min({left, room, kRingPublishEvery - unpublished});
        copy_in(dir_, head_, src, n);
        head_ += static_cast<std::uint32_t>(n);
        src += n;
        left -= n;
        unpublished += n;
        if (unpublished == kRingPublishEvery) {
          publish();
          unpublished = 0;
        }
      }
      part.iov_len = 0;
    }
    publish();
  }

  void set_deadline(const Deadline& deadline) noexcept override { deadline_ = deadline; }

  void add_counters(StreamCounters& into) const noexcept override {
    pipe_->add_counters(into);  // what the first exchange counted
    into.ring_wakes += wakes_;
    into.ring_full_waits += full_waits_;
  }

 private:
  std::uint32_t room() const noexcept { return dir_.size - (head_ - tail_seen_); }

  // The room for up to `want` bytes: from the tail last seen, or, when that
  // leaves less, from the reader's tail read again (once, and checked: it
  // only moves forward, never past our head).
  std::size_t room_for(std::size_t want) {
    if (room() >= want) return want;
    const std::uint32_t tail = control_.consumer.tail.load(std::memory_order_acquire);
    if (tail - tail_seen_ > head_ - tail_seen_) {
      throw RingCorrupt("the shared-memory ring is corrupt: the peer's tail index (" + std::to_string(tail) +
                        ") is not between its last value (" + std::to_string(tail_seen_) + ") and our head (" +
                        std::to_string(head_) + ")");
    }
    tail_seen_ = tail;
    return std::min<std::size_t>(want, room());
  }

  void publish() {
    if (store_then_load(control_.producer.head, head_, control_.reader.asleep) != 0) ring_doorbell();
  }

  // One byte on the pipe beside the ring, never waiting: a full pipe holds
  // unread doorbells already, and a reader that is gone sees EOF anyway.
  void ring_doorbell() noexcept {
    static constexpr char kBell = 0;
    const int fd = doorbell_ ? doorbell_.get() : -1;
    if (fd < 0) {
      // No non-blocking description of our own (no /proc): only when poll
      // says a byte fits.
      pollfd p{pipe_->fd(), POLLOUT, 0};
      if (::poll(&p, 1, 0) != 1 || (p.revents & POLLOUT) == 0) return;
    }
    if (retry_on_eintr([&] { return ::write(fd >= 0 ? fd : pipe_->fd(), &kBell, 1); }) == 1) ++wakes_;
  }

  // The ring is full: tries again for kRoomSpin, then sleeps on the
  // reader's tail. Returns the room found; throws TimedOut past the
  // deadline, PeerClosed when the reader is gone.
  std::size_t wait_for_room() {
    ++full_waits_;
    const Clock::time_point spin_until = Clock::now() + kRoomSpin;
    do {
      if (const std::size_t n = room_for(1); n > 0) return room();
      cpu_relax();
    } while (Clock::now() < spin_until);
    if (reader_gone()) throw PeerClosed("cannot write to peer: it closed the connection", PeerClosed::Where::writing);
    for (;;) {
      const std::chrono::nanoseconds limit = sleep_limit(deadline_, "the peer took no more bytes before the deadline");
      announce_sleep(control_.writer.asleep);
      const std::uint32_t tail = control_.consumer.tail.load(std::memory_order_seq_cst);
      int result = 0;
      if (room_for(1) == 0) result = futex_wait_shared(control_.consumer.tail, tail, limit);
      control_.writer.asleep.store(0, std::memory_order_relaxed);
      if (room_for(1) > 0) return room();
      if (result == ETIMEDOUT && reader_gone()) {
        throw PeerClosed("cannot write to peer: it closed the connection", PeerClosed::Where::writing);
      }
    }
  }

  // The pipe beside the ring: POLLERR once the reader has closed its end.
  bool reader_gone() const noexcept {
    pollfd p{pipe_->fd(), POLLOUT, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
  }

  std::shared_ptr<SharedRing> ring_;  // keeps the mapping
  SharedRing::Direction dir_;
  RingControl& control_;
  std::unique_ptr<FdOutputStream> pipe_;  // the pipe beside the ring: doorbells and liveness
  UniqueFd doorbell_;  // our own O_NONBLOCK description of pipe_'s pipe, or none
  Deadline deadline_;
  std::uint32_t head_ = 0;
  std::uint32_t tail_seen_ = 0;
  std::uint64_t wakes_ = 0;
  std::uint64_t full_waits_ = 0;
};

}  // namespace

Streams shm_streams(std::shared_ptr<SharedRing> ring, SharedRing::Side side, Streams pipes) {
  // The doorbell is a byte on the output's pipe, written without waiting
  // through a description of our own: a descriptor's business.
  auto* pipe_out = dynamic_cast<FdOutputStream*>(pipes.out.get());
  if (pipe_out == nullptr) throw std::invalid_argument("shm_streams: the streams beside a ring must be descriptors");
  std::unique_ptr<FdOutputStream> doorbell_pipe(pipe_out);
  pipes.out.release();
  const SharedRing::Direction in = ring->inbound(side);
  const SharedRing::Direction out = ring->outbound(side);
  Streams streams;
  streams.in = std::make_unique<ShmInputStream>(ring, in, std::move(pipes.in));
  streams.out = std::make_unique<ShmOutputStream>(std::move(ring), out, std::move(doorbell_pipe));
  return streams;
}

}  // namespace spinrpc
