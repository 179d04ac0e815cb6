#include "wait/cpu_load_probe.h"

#include <fcntl.h>   // ::open, O_RDONLY, O_CLOEXEC
#include <unistd.h>  // ::pread, ::sysconf

#include <cstdio>        // std::snprintf
#include <charconv>      // std::from_chars
#include <system_error>  // std::errc

#include "descriptor/peer_process.h"  // stat_fields_from_state
#include "descriptor/syscall.h"

namespace spinrpc {
namespace {

// The file's first `size` bytes from offset 0 (a /proc file re-read in
// place), as a view of `buf`; empty when the read fails.
std::string_view pread_start(int fd, char* buf, std::size_t size) noexcept {
  const ssize_t n = retry_on_eintr([&] { return ::pread(fd, buf, size, 0); });
  return n > 0 ? std::string_view(buf, static_cast<std::size_t>(n)) : std::string_view();
}

}  // namespace

long CpuLoadProbe::runnable_in(std::string_view line) noexcept {
  // Three load averages, then "running/total".
  std::size_t at = 0;
  for (int field = 0; field < 3; ++field) {
    at = line.find(' ', at);
    if (at == std::string_view::npos) return -1;
    ++at;
  }
  long running = -1;
  const char* first = line.data() + at;
  const char* last = line.data() + line.size();
  const auto [end, ec] = std::from_chars(first, last, running);
  if (ec != std::errc() || end == first || end == last || *end != '/') return -1;
  return running;
}

bool CpuLoadProbe::running_in_stat(std::string_view line) noexcept {
  return stat_fields_from_state(line).starts_with('R');
}

void CpuLoadProbe::discount(int pid, int tid) noexcept {
  discount_pid_ = pid;
  discount_tid_ = tid;
  discount_fd_ = UniqueFd();
}

bool CpuLoadProbe::discounted_running() noexcept {
  if (discount_tid_ <= 0) return false;
  if (!discount_fd_) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/stat", discount_pid_, discount_tid_);
    discount_fd_ = UniqueFd(move_above_stdio(::open(path, O_RDONLY | O_CLOEXEC)));
    if (!discount_fd_) {
      discount_tid_ = 0;  // gone: nothing to discount from now on
      return false;
    }
  }
  char line[512];
  return running_in_stat(pread_start(discount_fd_.get(), line, sizeof line));
}

bool CpuLoadProbe::spare_cpu() noexcept {
  if (state_ == State::unopened) {
    fd_ = UniqueFd(move_above_stdio(::open("/proc/loadavg", O_RDONLY | O_CLOEXEC)));
    online_cpus_ = ::sysconf(_SC_NPROCESSORS_ONLN);
    state_ = fd_ && online_cpus_ > 0 ? State::open : State::unavailable;
  }
  if (state_ != State::open) return true;
  char line[128];
  const long running = runnable_in(pread_start(fd_.get(), line, sizeof line));
  if (running < 0) {
    state_ = State::unavailable;
    return true;
  }
  return running - (discounted_running() ? 1 : 0) <= online_cpus_;
}

}  // namespace spinrpc
