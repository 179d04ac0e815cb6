#include "descriptor/peer_process.h"

#include <fcntl.h>       // O_ACCMODE, O_WRONLY
#include <sys/socket.h>  // ::getsockopt, SO_PEERCRED, ucred
#include <unistd.h>      // ::readlink, ::getpid

#include <charconv>     // std::from_chars
#include <filesystem>   // std::filesystem::directory_iterator
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error>  // std::error_code

#include "descriptor/syscall.h"  // read_small_file

namespace spinrpc {
namespace {

std::optional<std::string> link_of(const std::string& path) {
  char target[256];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
  if (n <= 0 || static_cast<std::size_t>(n) == sizeof target) return std::nullopt;
  return std::string(target, static_cast<std::size_t>(n));
}

// Field `field` (numbered as in proc(5), 3 and up) of /proc/PID/stat as a
// non-negative int; -1 when it cannot be read.
int stat_field(int pid, int field) noexcept {
  if (pid <= 0 || field < 3) return -1;
  try {
    const std::optional<std::string> stat = read_small_file("/proc/" + std::to_string(pid) + "/stat", 1024);
    if (!stat) return -1;
    std::string_view rest = stat_fields_from_state(*stat);
    if (rest.empty()) return -1;
    for (int at = 3; at < field; ++at) {
      const std::size_t space = rest.find(' ');
      if (space == std::string_view::npos) return -1;
      rest.remove_prefix(space + 1);
    }
    int value = -1;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    return ec == std::errc() && value >= 0 ? value : -1;
  } catch (...) {  // allocation: cannot tell
    return -1;
  }
}

}  // namespace

std::string_view stat_fields_from_state(std::string_view line) noexcept {
  const std::size_t close = line.rfind(')');
  if (close == std::string_view::npos || close + 2 >= line.size() || line[close + 1] != ' ') return {};
  return line.substr(close + 2);
}

int last_cpu_of(int pid) noexcept { return stat_field(pid, 39); }

int parent_of(int pid) noexcept { return stat_field(pid, 4); }

int socket_peer_pid(int fd) noexcept {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return 0;
  return cred.pid > 0 ? cred.pid : 0;
}

bool holds_write_end(int pid, int fd) noexcept {
  if (pid <= 0 || fd < 0) return false;
  try {
    const std::optional<std::string> ours = link_of("/proc/self/fd/" + std::to_string(fd));
    // Only pipes (a FIFO's link is its path, which names many opens; the
    // two ends of a socket are two inodes: socket_peer_pid says who).
    if (!ours || !ours->starts_with("pipe:[")) return false;
    std::error_code ec;
    const std::string proc = "/proc/" + std::to_string(pid);
    for (std::filesystem::directory_iterator it(proc + "/fd", ec), end; !ec && it != end; it.increment(ec)) {
      if (link_of(it->path().string()) != ours) continue;
      // Same pipe: the write end? fdinfo's "flags:" is the open flags, octal.
      const std::optional<std::string> info =
          read_small_file(proc + "/fdinfo/" + it->path().filename().string(), 4096);
      if (!info) continue;
      const std::size_t at = info->find("flags:");
      if (at == std::string::npos) continue;
      std::string_view flags(*info);
      flags.remove_prefix(at + 6);
      while (!flags.empty() && (flags.front() == '\t' || flags.front() == ' ')) flags.remove_prefix(1);
      unsigned value = 0;
      const auto [end_of_flags, parsed] = std::from_chars(flags.data(), flags.data() + flags.size(), value, 8);
      if (parsed == std::errc() && (value & O_ACCMODE) == O_WRONLY) return true;
    }
  } catch (...) {  // allocation: cannot tell
  }
  return false;
}

}  // namespace spinrpc
