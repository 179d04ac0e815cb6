#include "channel/cpu_load_probe.h"

#include <fcntl.h>   // ::open, O_RDONLY, O_CLOEXEC
#include <unistd.h>  // ::pread, ::sysconf

#include <cerrno>        // errno, EINTR
#include <charconv>      // std::from_chars
#include <system_error>  // std::errc

#include "channel/syscall.h"

namespace spinrpc {

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

bool CpuLoadProbe::spare_cpu() noexcept {
  if (state_ == State::unopened) {
    fd_ = UniqueFd(move_above_stdio(::open("/proc/loadavg", O_RDONLY | O_CLOEXEC)));
    online_cpus_ = ::sysconf(_SC_NPROCESSORS_ONLN);
    state_ = fd_ && online_cpus_ > 0 ? State::open : State::unavailable;
  }
  if (state_ != State::open) return true;
  char line[128];
  ssize_t n;
  do {
    n = ::pread(fd_.get(), line, sizeof line, 0);
  } while (n < 0 && errno == EINTR);
  const long running = n > 0 ? runnable_in(std::string_view(line, static_cast<std::size_t>(n))) : -1;
  if (running < 0) {
    state_ = State::unavailable;
    return true;
  }
  return running <= online_cpus_;
}

}  // namespace spinrpc
