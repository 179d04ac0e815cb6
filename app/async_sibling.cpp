#include "app/async_sibling.h"

#include <cerrno>   // errno
#include <climits>  // PATH_MAX
#include <cstring>  // std::strerror
#include <sys/stat.h>  // ::stat
#include <unistd.h>  // ::execv, ::readlink

#include "app/command_line.h"
#include "descriptor/stderr_lines.h"

namespace spinrpc {

bool asks_for_async(const std::vector<std::string>& args) {
  try {
    return parse_command_line(args).async;
  } catch (const UsageError&) {
    return false;
  }
}

int exec_beside_self(const char* name, char** argv, const std::string& program) {
  std::string path(PATH_MAX, '\0');
  const ssize_t length = ::readlink("/proc/self/exe", path.data(), path.size());
  if (length <= 0 || static_cast<std::size_t>(length) >= path.size()) {
    write_stderr_before_exit(program + ": --async: cannot find this executable's folder (/proc/self/exe): " +
                             std::strerror(errno) + '\n');
    return 1;
  }
  path.resize(static_cast<std::size_t>(length));
  const std::string self_path = path;
  path.replace(path.rfind('/') + 1, std::string::npos, name);
  // A sibling that is this very file (a copy by hard link, a symlink to it)
  // would exec itself forever. Compared with the file /proc/self/exe is and
  // with the one its link names: under an emulator (qemu-user) the link names
  // the program while the file is the emulator.
  struct stat self {}, named {}, sibling {};
  const bool have_sibling = ::stat(path.c_str(), &sibling) == 0;
  const auto same = [&](const struct stat& a) { return a.st_dev == sibling.st_dev && a.st_ino == sibling.st_ino; };
  if (have_sibling && ((::stat("/proc/self/exe", &self) == 0 && same(self)) ||
                       (::stat(self_path.c_str(), &named) == 0 && same(named)))) {
    write_stderr_before_exit(program + ": --async is served by " + path +
                             ", which is this executable itself: install spinrpc-server-async there\n");
    return 1;
  }
  ::execv(path.c_str(), argv);
  const int error = errno;
  write_stderr_before_exit(program + ": --async is served by " + path + ", which cannot be run: " +
                           std::strerror(error) + '\n');
  return 1;
}

}  // namespace spinrpc
