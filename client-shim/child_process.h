#pragma once

#include <chrono>    // std::chrono::milliseconds
#include <optional>  // std::optional
#include <span>      // std::span
#include <string>    // std::string
#include <string_view>  // std::string_view
#include <system_error>  // std::system_error
#include <vector>    // std::vector

#include "descriptor/unique_fd.h"

namespace spinrpc {

/// getenv(3) over an environment given as "NAME=value" entries: the value
/// of the first entry named `name`, or nullptr; std::nullopt stands for
/// this process's environment (getenv itself). The pointer lives as long as
/// the entry.
const char* environment_value(const std::optional<std::vector<std::string>>& environment,
                              const std::string& name);

/// A child that could not be started: the errno of its exec (ENOENT, EACCES,
/// ENOTDIR, ...) or of the spawn's own setup, with the executable and the
/// arguments as given, so that the Node binding can report it as Node's
/// child_process.spawn does (docs/NODE.md, "Errors"). what() is
/// "cannot spawn EXECUTABLE: " and strerror's text.
class SpawnError : public std::system_error {
 public:
  SpawnError(int err, const std::string& executable, std::vector<std::string> args);
  const std::string& executable() const noexcept { return executable_; }
  const std::vector<std::string>& args() const noexcept { return args_; }

 private:
  std::string executable_;
  std::vector<std::string> args_;
};

/// A child process started as Node's child_process.spawn starts one on
/// Linux (libuv's uv_spawn: fork, reset, execvp), owned until it is reaped.
/// Move-only; a moved-from or default-constructed object owns no child.
///
/// Signals go through a pidfd (pidfd_open(2), Linux 5.3; plain kill(2)
/// before that), so they reach this child or nobody, never a process that
/// got its pid after it was reaped.
///
/// WARNING: reaping uses waitpid(2) on this pid. A process that sets
/// SIGCHLD to SIG_IGN has the kernel reap its children itself, and
/// something else calling waitpid(-1) may take ours: the wait then fails
/// with ECHILD (std::system_error, "... was reaped by someone else"), the
/// exit status is lost, and from then on the child counts as gone (pid()
/// is -1; nothing is signalled or waited for again).
class ChildProcess {
 public:
  /// Starts `executable` with argv = {executable, args...} and `environment`
  /// ("NAME=value" entries; std::nullopt: this process's environment), plus
  /// each "NAME=value" of `add_env` whose NAME that environment does not have
  /// (what the user set wins). What the child starts with is what Node's
  /// spawn gives it (docs/HARDENING.md, "Starting a child as Node does"):
  /// - the program is found as execvp(3) finds it, in the PATH of the
  ///   child's environment (the first "PATH=" entry; none: "/bin:/usr/bin"),
  ///   an empty PATH entry meaning the current directory; a name with a '/'
  ///   is not searched. A candidate that is missing or sits below a file is
  ///   skipped, one that is not executable (EACCES) too but remembered; any
  ///   other error ends the search.
  /// - a file the kernel cannot execute (ENOEXEC: a script without "#!") is
  ///   run as `/bin/sh FILE args...`, FILE the path found.
  /// - every signal from 1 to 33 at its default disposition (SIG_IGN does not
  ///   survive; 32 and 33 are glibc's own), and an empty signal mask,
  ///   whatever this process set.
  /// - `stdin_fd` as its fd 0, `stdout_fd` as its fd 1, our stderr as its fd 2,
  ///   and no other descriptor (everything from 3 up is closed in the child,
  ///   close-on-exec or not).
  /// With `offered_ring_fd` (a shared-memory ring's memfd, 3 or above), the
  /// child also gets it as fd kShmOfferedFd and the offer naming this
  /// process and the memfd (shm_offer_entry) in its environment in place of
  /// any SPINRPC_SHM entry (docs/SHARED-MEMORY.md, "Handshake"): one
  /// documented descriptor more, nothing else.
  /// The fds are borrowed: the caller closes its copies once this returns.
  /// Throws SpawnError if the child cannot be started: ENOENT when no
  /// candidate exists, EACCES when one was found but none could be run,
  /// the errno of the exec or of the spawn's own setup otherwise.
  static ChildProcess spawn(const std::string& executable, const std::vector<std::string>& args,
                            int stdin_fd, int stdout_fd,
                            std::span<const std::string_view> add_env = {},
                            const std::optional<std::vector<std::string>>& environment = std::nullopt,
                            int offered_ring_fd = -1);

  ChildProcess() noexcept = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// A child not yet reaped is sent SIGKILL and reaped (blocking until the
  /// kernel has ended it), so no zombie is left behind. Never throws; a
  /// failure is one line on stderr.
  ~ChildProcess();

  /// The pid until the child is reaped (or found reaped by someone else);
  /// -1 after (a reaped pid can be reused).
  int pid() const noexcept { return reaped() || lost_ ? -1 : pid_; }
  /// The waitpid(2) status once the child is reaped; std::nullopt before.
  std::optional<int> wait_status() const noexcept { return wait_status_; }

  /// Reaps the child if it exits within `timeout`, polling waitpid(WNOHANG)
  /// with sleeps growing from 50 µs to 5 ms; returns at most one sleep after
  /// the timeout even if the child runs on. Returns the wait status (at once
  /// if already reaped) or std::nullopt if the child is still running.
  /// Throws std::system_error if waitpid fails (ECHILD: see WARNING).
  std::optional<int> try_wait_for(std::chrono::milliseconds timeout);
  /// Blocks until the child is reaped; returns its wait status.
  /// Throws std::system_error if waitpid fails.
  int wait();
  /// Sends `signal` to the child; does nothing once it is reaped (the pid may
  /// belong to another process by then). Throws std::system_error if kill fails.
  void kill(int signal);

 private:
  bool reaped() const noexcept { return wait_status_.has_value(); }
  // One waitpid(2) call, EINTR retried; true if it reaped the child.
  bool wait_once(int options);

  std::string executable_;          // for error messages
  int pid_ = -1;                    // -1: no child
  UniqueFd pidfd_;                  // signals go here when the kernel gives one
  bool lost_ = false;               // reaped by someone else (ECHILD)
  std::optional<int> wait_status_;  // set once reaped
};

}  // namespace spinrpc
