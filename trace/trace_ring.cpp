#include "trace/trace_ring.h"

#include <sched.h>     // ::sched_getcpu
#include <sys/mman.h>  // ::mmap, ::munmap
#include <unistd.h>    // ::gettid

#include <cerrno>        // errno
#include <cstring>       // std::memcpy, std::memcmp
#include <system_error>  // std::system_error
#include <utility>       // std::move

namespace spinrpc::trace {
namespace {

constexpr std::uint32_t kTableFull = 1;
constexpr std::string_view kTableFullName = "(names table full)";

std::uint64_t fnv1a(std::string_view text) noexcept {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

std::int64_t to_ns(Ring::Clock::time_point at) noexcept {
  static_assert(std::is_same_v<Ring::Clock::duration, std::chrono::nanoseconds>);
  return at.time_since_epoch().count();
}

}  // namespace

NameTable::NameTable() : slots_(2 * kMaxNames), arena_(kArenaBytes), by_id_(2, 0) {
  by_id_.reserve(kMaxNames + 2);
}

std::uint32_t NameTable::intern(std::string_view name) noexcept {
  const std::uint64_t hash = fnv1a(name);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.id == 0) {
      if (by_id_.size() >= kMaxNames + 2 || used_bytes_ + name.size() > arena_.size()) return kTableFull;
      std::memcpy(arena_.data() + used_bytes_, name.data(), name.size());
      slot = Slot{hash, static_cast<std::uint32_t>(used_bytes_), static_cast<std::uint32_t>(name.size()),
                  static_cast<std::uint32_t>(by_id_.size())};
      used_bytes_ += name.size();
      by_id_.push_back(static_cast<std::uint32_t>(i));  // within the reserved capacity: no allocation
      return slot.id;
    }
    if (slot.hash == hash && slot.length == name.size() &&
        std::memcmp(arena_.data() + slot.offset, name.data(), name.size()) == 0) {
      return slot.id;
    }
  }
}

std::string_view NameTable::name(std::uint32_t id) const noexcept {
  if (id == 0 || id >= by_id_.size()) return {};
  if (id == kTableFull) return kTableFullName;
  const Slot& slot = slots_[by_id_[id]];
  return {arena_.data() + slot.offset, slot.length};
}

Ring::Ring(std::size_t max_requests, std::string label)
    : capacity_(max_requests * kRecordsPerRequest),
      // A span that starts at last() before any clock read (the server's
      // first Request read) starts as the ring does, not at the clock's zero.
      last_(Clock::now()),
      max_requests_(max_requests),
      label_(std::move(label)),
      tid_(static_cast<int>(::gettid())) {
  void* memory = ::mmap(nullptr, capacity_ * sizeof(Record), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) {
    throw std::system_error(errno, std::generic_category(),
                            "spinrpc: cannot map the trace ring (" + std::to_string(capacity_ * sizeof(Record)) +
                                " bytes for " + std::to_string(max_requests) + " requests)");
  }
  records_ = static_cast<Record*>(memory);
  // Huge pages where the kernel allows them (THP "madvise" or "always"):
  // the ring is filled in order, and a 4 KiB page holds ~100 records, so
  // without them a request in every ~20 pays a page fault. Advice only: a
  // refusal leaves 4 KiB pages.
  ::madvise(memory, capacity_ * sizeof(Record), MADV_HUGEPAGE);
}

Ring::~Ring() { ::munmap(records_, capacity_ * sizeof(Record)); }

void Ring::span(Kind kind, std::uint8_t detail, Clock::time_point start, Clock::time_point end, std::uint64_t a,
                std::uint32_t b, std::uint32_t name) noexcept {
  Record& r = records_[next_];
  if (wrapped_) overwritten_seq_ = r.seq;
  r.start_ns = to_ns(start);
  r.dur_ns = to_ns(end) - r.start_ns;
  r.a = a;
  r.b = b;
  r.seq = seq_;
  r.name = name;
  r.cpu = static_cast<std::int16_t>(::sched_getcpu());
  r.kind = kind;
  r.detail = detail;
  ++appended_;
  if (++next_ == capacity_) {
    next_ = 0;
    wrapped_ = true;
  }
}

void Ring::begin_request_since(std::uint64_t mark) noexcept {
  ++seq_;
  const std::uint64_t count = appended_ - mark < capacity_ ? appended_ - mark : capacity_;
  std::size_t at = next_;
  for (std::uint64_t i = 0; i < count; ++i) {
    at = (at == 0 ? capacity_ : at) - 1;
    records_[at].seq = seq_;
  }
}

void Ring::instant(std::string_view what, Clock::time_point at, std::uint64_t a) noexcept {
  span(Kind::instant, 0, at, at, a, 0, intern(what));
}

Ring::Contents Ring::contents() const noexcept {
  if (!wrapped_) return {{}, {records_, next_}, false};
  return {{records_ + next_, capacity_ - next_}, {records_, next_}, true};
}

}  // namespace spinrpc::trace
