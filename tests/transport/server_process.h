#pragma once

// A server started in the background for the transport tests: stdin and
// stdout on /dev/null (it talks over a socket or FIFOs), stderr captured.
#include <sys/types.h>  // pid_t

#include <chrono>  // std::chrono::milliseconds
#include <string>  // std::string
#include <vector>  // std::vector

namespace spinrpc::test {

/// How a background server ended.
struct ServerEnd {
  int status;               ///< waitpid(2) status
  std::string stderr_text;  ///< everything it wrote to stderr
};

class ServerProcess {
 public:
  /// Starts `executable` with `args`. Throws std::system_error.
  ServerProcess(const std::string& executable, const std::vector<std::string>& args);
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  /// SIGKILLs and reaps a server still running.
  ~ServerProcess();

  pid_t pid() const noexcept { return pid_; }
  /// Sends `signal`.
  void kill(int signal) const;
  /// Waits for the server to exit and collects its stderr. `hang_guard` only
  /// keeps a broken server from hanging the suite: past it the server is
  /// SIGKILLed and the test fails; it is not a performance bound.
  ServerEnd finish(std::chrono::milliseconds hang_guard = std::chrono::seconds(20));

 private:
  pid_t pid_ = -1;
  int stderr_fd_ = -1;  // read end of the child's stderr
};

/// Runs a server to completion (for command lines that must fail at once).
ServerEnd run_server(const std::string& executable, const std::vector<std::string>& args);

bool exited_with(int status, int code);
bool killed_by(int status, int signal);

/// A fresh directory under /tmp, removed with everything in it at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const noexcept { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

bool file_exists(const std::string& path);

}  // namespace spinrpc::test
