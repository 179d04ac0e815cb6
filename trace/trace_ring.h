#pragma once

#include <chrono>       // std::chrono::steady_clock
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t
#include <memory>       // std::unique_ptr
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "trace/trace_record.h"

namespace spinrpc::trace {

/// Method and callback names, each stored once, so that a Record holds a
/// 4-byte id and a request copies no string. Fixed capacity, allocated up
/// front: kMaxNames names, kArenaBytes of text; a name past either is id 1,
/// written as "(names table full)". Id 0 is "no name".
class NameTable {
 public:
  static constexpr std::size_t kMaxNames = 4096;
  static constexpr std::size_t kArenaBytes = 256 * 1024;
  NameTable();
  /// The id of `name` (adds it if new). Never allocates.
  std::uint32_t intern(std::string_view name) noexcept;
  /// The name an id stands for ("" for 0).
  std::string_view name(std::uint32_t id) const noexcept;

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    std::uint32_t id = 0;  // 0: empty slot
  };
  std::vector<Slot> slots_;              // open addressing, 2 × kMaxNames
  std::vector<char> arena_;              // the names' bytes
  std::vector<std::uint32_t> by_id_;     // id -> slot index
  std::size_t used_bytes_ = 0;
};

/// One channel's trace: a ring of Records for the last `max_requests`
/// requests (kRecordsPerRequest each), in memory mapped up front with
/// MAP_NORESERVE, so that only the pages a run fills are backed. Filled on
/// the request path by the channel's thread; read by the writer
/// (trace_writer.h) at close(), at exit or on SIGTERM.
///
/// A request is the records between one begin_request() and the next: the
/// client begins one as it writes a Request, the server as it reads one.
/// The writer keeps the last max_requests of them whose records are all in
/// the ring; a request whose Calls make it longer than kRecordsPerRequest
/// records pushes out more than one older request.
///
/// WARNING: one thread records at a time (the channel's).
class Ring {
 public:
  using Clock = std::chrono::steady_clock;
  /// Records a ring holds per request it keeps: a client request without
  /// Calls makes 4 or 5, a server's 5 or 6; each Call adds about 4.
  static constexpr std::size_t kRecordsPerRequest = 12;

  /// A ring for `max_requests` (> 0) requests, named `label` in the trace
  /// (its thread's row), recorded on the calling thread. Throws
  /// std::system_error if the memory cannot be mapped.
  Ring(std::size_t max_requests, std::string label);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  /// The clock, read, and remembered as last(): a span that starts where
  /// the one before ended takes last() and reads no clock. Before the
  /// first, last() is when the ring was made.
  Clock::time_point now() noexcept { return last_ = Clock::now(); }
  Clock::time_point last() const noexcept { return last_; }
  /// Remembers a clock read made elsewhere (SpinReader's) as last().
  void note(Clock::time_point at) noexcept { last_ = at; }

  /// Starts the next request: the records that follow belong to it.
  void begin_request() noexcept { ++seq_; }
  /// Where the ring is now, for begin_request_since().
  std::uint64_t mark() const noexcept { return appended_; }
  /// Starts the next request with the records appended since `mark`
  /// (mark()) in it: the server knows a frame is a Request only once it is
  /// read, and the waits of that read are the new request's.
  void begin_request_since(std::uint64_t mark) noexcept;

  /// Appends a span from `start` to `end`, with the CPU it ends on.
  void span(Kind kind, std::uint8_t detail, Clock::time_point start, Clock::time_point end, std::uint64_t a = 0,
            std::uint32_t b = 0, std::uint32_t name = 0) noexcept;
  /// Appends an instant event named `what` (interned) at `at`.
  void instant(std::string_view what, Clock::time_point at, std::uint64_t a = 0) noexcept;

  /// The id of a method or callback name, for span()'s `name`.
  std::uint32_t intern(std::string_view name) noexcept { return names_.intern(name); }

  // For the writer.
  struct Contents {
    std::span<const Record> older;  // oldest first; empty until the ring wraps
    std::span<const Record> newer;  // then these, oldest first
    bool wrapped;
  };
  Contents contents() const noexcept;
  const NameTable& names() const noexcept { return names_; }
  const std::string& label() const noexcept { return label_; }
  int tid() const noexcept { return tid_; }
  std::size_t max_requests() const noexcept { return max_requests_; }
  std::uint32_t requests_begun() const noexcept { return seq_; }
  /// The seq of the last record the ring wrote over (0 before it wraps):
  /// the oldest request left is partial only if it is this one.
  std::uint32_t overwritten_seq() const noexcept { return overwritten_seq_; }

 private:
  Record* records_ = nullptr;
  std::size_t capacity_ = 0;  // records
  std::size_t next_ = 0;      // where the next record goes
  std::uint64_t appended_ = 0;  // records appended since the ring was made
  bool wrapped_ = false;
  std::uint32_t seq_ = 0;
  std::uint32_t overwritten_seq_ = 0;  // see overwritten_seq()
  Clock::time_point last_{};
  std::size_t max_requests_;
  std::string label_;
  int tid_;
  NameTable names_;
};

/// A handler's or a callback's span (docs/TRACE.md#events): it begins where
/// the ring's last span ended (the Request's or the Call's read) and ends
/// when the scope does, whether the code inside returns or throws. With a
/// null ring it records nothing and reads no clock.
class ScopedSpan {
 public:
  ScopedSpan(Ring* ring, Kind kind, std::uint8_t detail, std::string_view name) noexcept
      : ring_(ring), kind_(kind), detail_(detail) {
    if (ring_ == nullptr) return;
    start_ = ring_->last();
    name_ = ring_->intern(name);
  }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;
  ~ScopedSpan() {
    if (ring_ != nullptr) ring_->span(kind_, detail_, start_, ring_->now(), 0, 0, name_);
  }

 private:
  Ring* ring_;
  Kind kind_;
  std::uint8_t detail_;
  Ring::Clock::time_point start_{};
  std::uint32_t name_ = 0;
};

}  // namespace spinrpc::trace
