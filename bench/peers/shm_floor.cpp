#include "bench/peers/shm_floor.h"

#include <fcntl.h>       // ::fcntl, F_ADD_SEALS, F_SEAL_*
#include <signal.h>      // ::kill, SIGKILL
#include <sys/mman.h>    // ::memfd_create, ::mmap, ::munmap, MFD_*
#include <sys/prctl.h>   // ::prctl, PR_SET_PDEATHSIG
#include <sys/wait.h>    // ::waitpid, WNOHANG
#include <unistd.h>      // ::fork, ::ftruncate, ::getpid, ::getppid, ::_exit

#include <atomic>        // std::atomic
#include <cerrno>        // errno
#include <cstdio>        // std::fprintf
#include <cstring>       // std::memcpy
#include <ctime>         // ::nanosleep
#include <new>           // placement new
#include <stdexcept>     // std::runtime_error, std::invalid_argument
#include <string>        // std::string, std::to_string
#include <system_error>  // std::system_error
#include <vector>        // std::vector

#include "descriptor/syscall.h"
#include "descriptor/unique_fd.h"

namespace spinrpc::bench {

namespace {

using Seq = std::atomic<std::uint64_t>;
using StopWord = std::atomic<std::uint32_t>;
// The two processes share these through the mapping: only an address-free
// (lock-free) atomic works across processes.
static_assert(Seq::is_always_lock_free, "the shared-memory floor needs a lock-free 64-bit atomic");
static_assert(StopWord::is_always_lock_free, "the shared-memory floor needs a lock-free 32-bit atomic");

constexpr std::size_t kLineBytes = 64;
// A slot is a sequence number, then the message, from the same cache line on.
constexpr std::size_t kMessageOffset = sizeof(Seq);
// Polls between two looks at the clock (the parent) or the stop word (the
// child): a clock read costs a few tens of ns, so it stays out of a round
// trip that answers within a few thousand polls.
constexpr std::uint32_t kPollsPerCheck = 4096;

std::size_t round_up_to_line(std::size_t bytes) noexcept {
  return (bytes + kLineBytes - 1) / kLineBytes * kLineBytes;
}

// One poll's pause: lets the sibling hyperthread run and keeps the loop from
// flooding the memory system; never a system call or a yield.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

Seq& seq_at(std::byte* slot) noexcept { return *std::launder(reinterpret_cast<Seq*>(slot)); }

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// The echoing child's whole life: the stop word ends it with 0. It never
// returns and never throws.
[[noreturn]] void echo_forever(std::byte* request, std::byte* reply, StopWord& stop, std::size_t message_bytes) {
  std::vector<std::byte> buf(message_bytes);
  Seq& request_seq = seq_at(request);
  Seq& reply_seq = seq_at(reply);
  std::uint64_t seen = 0;
  for (;;) {
    std::uint64_t seq;
    std::uint32_t polls = 0;
    while ((seq = request_seq.load(std::memory_order_acquire)) == seen) {
      cpu_relax();
      // Every kPollsPerCheck polls: the stop word (its own line, read-only
      // until the end, so the look stays in this core's cache).
      if (++polls == kPollsPerCheck) {
        polls = 0;
        if (stop.load(std::memory_order_acquire) != 0) ::_exit(0);
      }
    }
    seen = seq;
    std::memcpy(buf.data(), request + kMessageOffset, message_bytes);
    std::memcpy(reply + kMessageOffset, buf.data(), message_bytes);
    reply_seq.store(seq, std::memory_order_release);
  }
}

}  // namespace

ShmFloor::ShmFloor(std::size_t message_bytes)
    : message_bytes_(message_bytes),
      slot_bytes_(round_up_to_line(kMessageOffset + message_bytes)),
      mapping_bytes_(2 * slot_bytes_ + kLineBytes) {
  UniqueFd memfd(::memfd_create("spinrpc-shm-floor", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!memfd) throw std::system_error(errno, std::generic_category(), "cannot create the shared-memory floor's memfd");
  if (retry_on_eintr([&] { return ::ftruncate(memfd.get(), static_cast<off_t>(mapping_bytes_)); }) < 0) {
    throw std::system_error(errno, std::generic_category(), "cannot size the shared-memory floor's memfd");
  }
  if (::fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
    throw std::system_error(errno, std::generic_category(), "cannot seal the shared-memory floor's memfd");
  }
  void* mapped = ::mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd.get(), 0);
  if (mapped == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "cannot map the shared-memory floor");
  // The mapping keeps the memory; the descriptor closes with `memfd`.
  mapping_ = static_cast<std::byte*>(mapped);
  new (mapping_) Seq(0);
  new (mapping_ + slot_bytes_) Seq(0);
  new (mapping_ + 2 * slot_bytes_) StopWord(0);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::munmap(mapping_, mapping_bytes_);
    throw std::system_error(err, std::generic_category(), "cannot fork the shared-memory floor's echo child");
  }
  if (pid == 0) {
    // Child: dies with the parent. The getppid check covers a parent that
    // died before prctl ran (the child is then already reparented).
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(1);
    memfd.reset();
    echo_forever(mapping_, mapping_ + slot_bytes_, *std::launder(reinterpret_cast<StopWord*>(mapping_ + 2 * slot_bytes_)),
                 message_bytes_);
  }
  pid_ = pid;
}

ShmFloor::~ShmFloor() {
  if (pid_ >= 0) {
    std::launder(reinterpret_cast<StopWord*>(mapping_ + 2 * slot_bytes_))->store(1, std::memory_order_release);
    // The child sees the stop word within kPollsPerCheck polls; give it up
    // to about kAnswerTimeout (1 ms naps), then kill it.
    int status = 0;
    pid_t done = 0;
    bool killed = false;
    for (int naps = 0; naps < 1000; ++naps) {
      done = retry_on_eintr([&] { return ::waitpid(pid_, &status, WNOHANG); });
      if (done != 0) break;
      const timespec nap{0, 1'000'000};
      ::nanosleep(&nap, nullptr);
    }
    if (done == 0) {
      // Still running after the stop word: a child that cannot see it.
      ::kill(pid_, SIGKILL);
      killed = true;
      done = retry_on_eintr([&] { return ::waitpid(pid_, &status, 0); });
    }
    if (done < 0) {
      std::fprintf(stderr, "spinrpc-bench: cannot reap the shared-memory floor's child %d\n", pid_);
    } else if (killed || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "spinrpc-bench: the shared-memory floor's child %s%s\n", describe_status(status).c_str(),
                   killed ? " (killed: it ignored the stop word)" : "");
    }
    pid_ = -1;
  }
  ::munmap(mapping_, mapping_bytes_);
}

void ShmFloor::round_trip(ByteView message, std::span<std::byte> reply) {
  if (message.size() != message_bytes_ || reply.size() < message_bytes_) {
    throw std::invalid_argument("the shared-memory floor carries messages of " + std::to_string(message_bytes_) +
                                " bytes, not " + std::to_string(message.size()) + " (reply room " +
                                std::to_string(reply.size()) + ")");
  }
  if (broken_) throw std::runtime_error("the shared-memory floor's child did not answer an earlier round trip");
  std::byte* const request_slot = mapping_;
  std::byte* const reply_slot = mapping_ + slot_bytes_;
  const std::uint64_t seq = ++seq_;
  std::memcpy(request_slot + kMessageOffset, message.data(), message_bytes_);
  seq_at(request_slot).store(seq, std::memory_order_release);

  Seq& reply_seq = seq_at(reply_slot);
  std::uint32_t polls = 0;
  bool clock_started = false;
  std::chrono::steady_clock::time_point first_check{};
  while (reply_seq.load(std::memory_order_acquire) != seq) {
    cpu_relax();
    if (++polls != kPollsPerCheck) continue;
    // Every kPollsPerCheck polls: the clock, first read at the first check
    // (so an answer within kPollsPerCheck polls costs no clock read).
    polls = 0;
    const auto now = std::chrono::steady_clock::now();
    if (!clock_started) {
      clock_started = true;
      first_check = now;
      continue;
    }
    if (now - first_check < kAnswerTimeout) continue;
    broken_ = true;
    int status = 0;
    const pid_t done = pid_ < 0 ? 0 : retry_on_eintr([&] { return ::waitpid(pid_, &status, WNOHANG); });
    if (done == pid_) {
      // Dead: reaped here, so the destructor has nothing to wait for.
      pid_ = -1;
      throw std::runtime_error("the shared-memory floor's child died (" + describe_status(status) + ")");
    }
    throw std::runtime_error("the shared-memory floor's child has not answered in " +
                             std::to_string(kAnswerTimeout.count()) + " s");
  }
  std::memcpy(reply.data(), reply_slot + kMessageOffset, message_bytes_);
}

}  // namespace spinrpc::bench
