#pragma once

#include <linux/futex.h>  // FUTEX_WAIT, FUTEX_WAKE
#include <sys/syscall.h>  // SYS_futex
#include <time.h>         // timespec
#include <unistd.h>       // ::syscall

#include <atomic>   // std::atomic
#include <cerrno>   // errno
#include <chrono>   // std::chrono
#include <cstdint>  // std::uint32_t

namespace spinrpc {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word is a plain 32-bit word");

/// Blocks while `*word == expected`, for at most `timeout`, on a word in
/// memory shared between processes (no FUTEX_PRIVATE_FLAG: the kernel keys
/// the wait by the mapped file and offset). Returns 0 when woken, or the
/// errno: EAGAIN (the word had changed already), ETIMEDOUT, EINTR.
/// Spurious wake-ups happen; the caller rechecks its condition.
inline int futex_wait_shared(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                             std::chrono::nanoseconds timeout) noexcept {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec relative{static_cast<time_t>(seconds.count()), static_cast<long>((timeout - seconds).count())};
  const long rc = ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &relative,
                            nullptr, 0);
  return rc == 0 ? 0 : errno;
}

/// Wakes one waiter blocked in futex_wait_shared on `word`, in any process.
inline void futex_wake_shared(std::atomic<std::uint32_t>& word) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

}  // namespace spinrpc
