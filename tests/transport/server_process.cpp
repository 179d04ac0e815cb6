#include "tests/transport/server_process.h"

#include <fcntl.h>     // ::open, O_*
#include <poll.h>      // ::poll
#include <signal.h>    // ::kill, SIGKILL
#include <spawn.h>     // posix_spawn
#include <sys/stat.h>  // ::lstat
#include <sys/wait.h>  // ::waitpid
#include <unistd.h>    // ::read, ::close, ::pipe2

#include <filesystem>    // std::filesystem::remove_all
#include <stdexcept>     // std::runtime_error
#include <system_error>  // std::system_error
#include <thread>        // std::this_thread::sleep_for

extern char** environ;

namespace spinrpc::test {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

ServerProcess::ServerProcess(const std::string& executable, const std::vector<std::string>& args) {
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) fail("pipe2");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(executable.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const int rc = posix_spawn(&pid_, executable.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(err_pipe[0]);
    errno = rc;
    fail("cannot spawn " + executable);
  }
  stderr_fd_ = err_pipe[0];
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
}

void ServerProcess::kill(int signal) const {
  if (pid_ > 0) ::kill(pid_, signal);
}

ServerEnd ServerProcess::finish(std::chrono::milliseconds hang_guard) {
  const auto deadline = std::chrono::steady_clock::now() + hang_guard;
  std::string text;
  char buffer[4096];
  // stderr reaches EOF when the server exits (nothing else holds the pipe).
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid_, SIGKILL);
      throw std::runtime_error("the server did not exit within the hang guard; stderr so far: " + text);
    }
    pollfd p{stderr_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(stderr_fd_, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return {status, text};
}

ServerEnd run_server(const std::string& executable, const std::vector<std::string>& args) {
  ServerProcess server(executable, args);
  return server.finish();
}

bool exited_with(int status, int code) { return WIFEXITED(status) && WEXITSTATUS(status) == code; }
bool killed_by(int status, int signal) { return WIFSIGNALED(status) && WTERMSIG(status) == signal; }

TempDir::TempDir() {
  char pattern[] = "/tmp/spinrpc-transport-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) fail("mkdtemp");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace spinrpc::test
