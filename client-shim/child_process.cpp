#include "client-shim/child_process.h"

#include <fcntl.h>     // ::fcntl, F_GETFD
#include <signal.h>    // ::kill, sigset_t, SIGKILL, SIGSTOP
#include <spawn.h>     // ::posix_spawn and its attribute/file-action calls
#include <sys/stat.h>    // ::fstat
#include <sys/syscall.h>  // SYS_pidfd_open, SYS_pidfd_send_signal
#include <sys/wait.h>  // ::waitpid, WNOHANG
#include <unistd.h>    // ::access, ::getpid, ::syscall, STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO

#include <algorithm>     // std::min
#include <cerrno>        // errno, ENOEXEC, ENOENT, EACCES, ...
#include <cstring>       // std::strncmp
#include <stdexcept>     // std::logic_error
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error
#include <thread>        // std::this_thread::sleep_for
#include <utility>       // std::exchange, std::move

#include "descriptor/glibc_extensions.h"
#include "descriptor/stderr_lines.h"
#include "descriptor/syscall.h"
#include "descriptor/unique_fd.h"
#include "settings/settings.h"  // process_environment

extern char** environ;  // POSIX: the environment the child inherits

namespace spinrpc {
namespace {

// What execvp runs a file the kernel cannot execute with, and searches when
// the environment has no PATH (glibc's _PATH_BSHELL and CS_PATH).
constexpr const char* kShell = "/bin/sh";
constexpr std::string_view kDefaultPath = "/bin:/usr/bin";

[[noreturn]] void throw_child_error(int err, const char* what, const std::string& executable,
                                    int pid) {
  std::string message = std::string("cannot ") + what + " " + executable;
  if (pid > 0) message += " (pid " + std::to_string(pid) + ")";
  throw std::system_error(err, std::generic_category(), message);
}

// posix_spawn's attribute and file-action objects need a destroy call on
// every path, including the throwing ones.
struct SpawnAttr {
  posix_spawnattr_t attr;
  SpawnAttr() { ::posix_spawnattr_init(&attr); }
  ~SpawnAttr() { ::posix_spawnattr_destroy(&attr); }
};
struct SpawnFileActions {
  posix_spawn_file_actions_t actions;
  SpawnFileActions() { ::posix_spawn_file_actions_init(&actions); }
  ~SpawnFileActions() { ::posix_spawn_file_actions_destroy(&actions); }
};

// A copy of `fd` numbered 3 or above when `fd` is 0, 1 or 2 (a process
// started with stdin closed gets pipe ends there). The dup2 actions run in
// order, so dup2(stdin_fd, 0) would clobber a stdout_fd of 0 before it is
// copied to 1; and dup2(fd, fd) leaves close-on-exec set on old glibc.
// Moving both ends out of 0..2 makes every dup2 a real copy.
UniqueFd copy_above_stdio(int fd, const std::string& executable, const std::vector<std::string>& args) {
  if (fd > STDERR_FILENO) return {};
  try {
    return UniqueFd::duplicate(fd, STDERR_FILENO + 1);
  } catch (const std::system_error& e) {
    throw SpawnError(e.code().value(), executable, args);
  }
}

// The SPINRPC_SHM entry that offers `ring_fd` to the child about to be
// spawned, as its fd kShmOfferedFd: named by this process's pid (the
// child's parent) and the memfd's device and inode, so that no other
// process that inherits the entry takes it (docs/SHARED-MEMORY.md,
// "Handshake").
std::string offer_for_child(int ring_fd, const std::string& executable, const std::vector<std::string>& args) {
  struct stat st {};
  if (retry_on_eintr([&] { return ::fstat(ring_fd, &st); }) != 0) throw SpawnError(errno, executable, args);
  return shm_offer_entry(ShmOffer{.fd = kShmOfferedFd,
                                  .parent_pid = ::getpid(),
                                  .device = static_cast<unsigned long long>(st.st_dev),
                                  .inode = static_cast<unsigned long long>(st.st_ino)});
}

// The entries of `add_env` ("NAME=value") whose NAME is not in the
// environment the child gets: `environment`, else environ.
std::vector<std::string> entries_not_set(std::span<const std::string_view> add_env,
                                         const std::optional<std::vector<std::string>>& environment) {
  std::vector<std::string> out;
  for (const std::string_view entry : add_env) {
    const std::string name(entry.substr(0, entry.find('=')));
    if (environment_value(environment, name) == nullptr) out.emplace_back(entry);
  }
  return out;
}

}  // namespace

const char* environment_value(const std::optional<std::vector<std::string>>& environment,
                              const std::string& name) {
  if (!environment) return process_environment(name.c_str());
  // The first entry wins, as getenv(3) reads environ.
  for (const std::string& entry : *environment) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=') {
      return entry.c_str() + name.size() + 1;
    }
  }
  return nullptr;
}

SpawnError::SpawnError(int err, const std::string& executable, std::vector<std::string> args)
    : std::system_error(err, std::generic_category(), "cannot spawn " + executable),
      executable_(executable),
      args_(std::move(args)) {}

ChildProcess ChildProcess::spawn(const std::string& executable,
                                 const std::vector<std::string>& args, int stdin_fd,
                                 int stdout_fd, std::span<const std::string_view> add_env,
                                 const std::optional<std::vector<std::string>>& environment,
                                 int offered_ring_fd) {
  const UniqueFd stdin_copy = copy_above_stdio(stdin_fd, executable, args);
  const UniqueFd stdout_copy = copy_above_stdio(stdout_fd, executable, args);
  if (stdin_copy) stdin_fd = stdin_copy.get();
  if (stdout_copy) stdout_fd = stdout_copy.get();

  SpawnFileActions files;
  // dup2 clears close-on-exec on the copy, so exactly fds 0 and 1 survive
  // exec from our pipes.
  if (int err = ::posix_spawn_file_actions_adddup2(&files.actions, stdin_fd, STDIN_FILENO))
    throw SpawnError(err, executable, args);
  if (int err = ::posix_spawn_file_actions_adddup2(&files.actions, stdout_fd, STDOUT_FILENO))
    throw SpawnError(err, executable, args);
  // The child writes its diagnostics to our stderr, as tsgo's do under the
  // TS 7 channel (Node's "inherit"). Node marks its own fd 2 close-on-exec
  // at start-up, so without this the server's error lines (a bad flag, a
  // Go panic, --stats) are lost under the binding: the child finds no fd 2.
  // A dup2 of fd 2 onto itself clears the flag in the child only (POSIX;
  // glibc >= 2.29); ours stays as it is. A closed fd 2 stays closed.
  if (::fcntl(STDERR_FILENO, F_GETFD) != -1) {
    if (int err = ::posix_spawn_file_actions_adddup2(&files.actions, STDERR_FILENO, STDERR_FILENO))
      throw SpawnError(err, executable, args);
  }
  // Every fd spinrpc creates is close-on-exec, but other code in this
  // process may have opened one without it. A leaked write end of another
  // channel's pipe would keep that pipe open in this child, and the other
  // child's death would never show as EOF. glibc >= 2.34 closes the rest
  // (close_range in the child); this runs after the dup2 actions.
  // The shared-memory offer, after the dup2s above: a stdin or stdout copy
  // numbered kShmOfferedFd has been copied to 0 or 1 by then.
  if (offered_ring_fd >= 0) {
    if (int err = ::posix_spawn_file_actions_adddup2(&files.actions, offered_ring_fd, kShmOfferedFd))
      throw SpawnError(err, executable, args);
  }
  const int first_closed = offered_ring_fd >= 0 ? kShmOfferedFd + 1 : STDERR_FILENO + 1;
  if (int err = spawn_actions_close_from(&files.actions, first_closed))
    throw SpawnError(err, executable, args);

  SpawnAttr attr;
  // libuv's child sets every signal from 1 to 31 but SIGKILL and SIGSTOP to
  // SIG_DFL and empties its mask before it execs; from 32 up it changes
  // nothing, and the exec turns the handlers it inherited (glibc's own, for
  // 32 and 33) into SIG_DFL. SIG_IGN survives exec, and SyncRpcChannel
  // ignores SIGPIPE in this process: the child must still die of a broken
  // pipe the ordinary way. A mask survives exec too: a thread that blocks
  // SIGTERM for a signalfd must not hand on a child that cannot be
  // terminated. glibc's spawn child sets its two signals (SIGCANCEL and
  // SIGSETXID, 32 and 33) to SIG_IGN unless they are in this set, so they
  // are in it too; sigaddset refuses them, so their bits are set directly
  // (glibc's sigset_t: signal n is bit n - 1).
  sigset_t to_default;
  sigset_t empty;
  ::sigemptyset(&to_default);
  for (int signal = 1; signal < 32; ++signal) {
    if (signal != SIGKILL && signal != SIGSTOP) ::sigaddset(&to_default, signal);
  }
  static_assert(sizeof(to_default.__val[0]) * 8 >= 33, "glibc's sigset_t words hold 64 signals");
  to_default.__val[0] |= (1UL << 31) | (1UL << 32);
  ::sigemptyset(&empty);
  ::posix_spawnattr_setsigdefault(&attr.attr, &to_default);
  ::posix_spawnattr_setsigmask(&attr.attr, &empty);
  ::posix_spawnattr_setflags(&attr.attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> argv;
  argv.reserve(args.size() + 2);
  argv.push_back(const_cast<char*>(executable.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  const std::vector<std::string> added = entries_not_set(add_env, environment);
  const std::string offer_entry = offered_ring_fd >= 0 ? offer_for_child(offered_ring_fd, executable, args) : "";
  std::vector<char*> env;
  if (environment || !added.empty() || offered_ring_fd >= 0) {
    // The offer replaces whatever SPINRPC_SHM the child would inherit.
    const std::string shm_prefix = std::string(kShmVariable.name) + "=";
    const auto keep = [&](const char* entry) {
      return offered_ring_fd < 0 || std::strncmp(entry, shm_prefix.c_str(), shm_prefix.size()) != 0;
    };
    if (environment) {
      for (const std::string& entry : *environment) {
        if (keep(entry.c_str())) env.push_back(const_cast<char*>(entry.c_str()));
      }
    } else {
      for (char** e = environ; *e != nullptr; ++e) {
        if (keep(*e)) env.push_back(*e);
      }
    }
    for (const std::string& entry : added) env.push_back(const_cast<char*>(entry.c_str()));
    if (offered_ring_fd >= 0) env.push_back(const_cast<char*>(offer_entry.c_str()));
    env.push_back(nullptr);
  }
  char* const* const envp = env.empty() ? environ : env.data();

  // One candidate path as execvp tries it: execve, and on ENOEXEC the same
  // file through /bin/sh. glibc runs the child with CLONE_VFORK and passes
  // exec's errno back as posix_spawn's result (the failed child is reaped
  // there), so "not found" is ENOENT here, not a child exiting 127.
  // posix_spawn returns the error; it never sets errno and never gives EINTR.
  pid_t pid = -1;
  std::vector<char*> sh_argv;
  const auto try_candidate = [&](const std::string& path) {
    int err = ::posix_spawn(&pid, path.c_str(), &files.actions, &attr.attr, argv.data(), envp);
    if (err != ENOEXEC) return err;
    sh_argv.assign({const_cast<char*>(kShell), const_cast<char*>(path.c_str())});
    sh_argv.insert(sh_argv.end(), argv.begin() + 1, argv.end());  // args and the nullptr
    return ::posix_spawn(&pid, kShell, &files.actions, &attr.attr, sh_argv.data(), envp);
  };

  int err = 0;
  if (executable.empty()) {
    err = ENOENT;  // execvp's answer for ""
  } else if (executable.find('/') != std::string::npos) {
    err = try_candidate(executable);
  } else {
    const char* path_variable = nullptr;
    for (char* const* e = envp; *e != nullptr; ++e) {
      if (std::strncmp(*e, "PATH=", 5) == 0) {  // the first, as the child's getenv finds it
        path_variable = *e + 5;
        break;
      }
    }
    const std::string_view search_path = path_variable != nullptr ? path_variable : kDefaultPath;
    bool denied = false;
    for (std::size_t start = 0;;) {
      const std::size_t end = std::min(search_path.find(':', start), search_path.size());
      const std::string_view dir = search_path.substr(start, end - start);
      // An empty entry is the current directory: the name itself.
      const std::string candidate = dir.empty() ? executable : std::string(dir) + "/" + executable;
      // A candidate that does not exist fails access(2) with the errno its
      // execve would give (the same path walk), without a child made for it.
      err = ::access(candidate.c_str(), F_OK) == 0 ? try_candidate(candidate) : errno;
      if (err == 0) break;
      if (err == EACCES) {
        denied = true;
      } else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV && err != ETIMEDOUT) {
        break;  // execvp ends the search here
      }
      if (end == search_path.size()) {
        if (denied) err = EACCES;
        break;
      }
      start = end + 1;
    }
  }
  if (err != 0) throw SpawnError(err, executable, args);

  ChildProcess child;
  child.executable_ = executable;
  child.pid_ = pid;
  // Refused (ENOSYS before Linux 5.3, or a seccomp filter): kill(2) it is.
  child.pidfd_ = UniqueFd(move_above_stdio(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))));
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : executable_(std::move(other.executable_)),
      pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::move(other.pidfd_)),
      lost_(std::exchange(other.lost_, false)),
      wait_status_(std::exchange(other.wait_status_, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    ChildProcess old(std::move(*this));  // ends our child, if any, on scope exit
    executable_ = std::move(other.executable_);
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::move(other.pidfd_);
    lost_ = std::exchange(other.lost_, false);
    wait_status_ = std::exchange(other.wait_status_, std::nullopt);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid() < 0) return;
  try {
    kill(SIGKILL);
    wait();
  } catch (const std::exception& e) {
    // Never waits: the host's stderr may be a full pipe nobody reads.
    write_stderr_without_waiting(std::string("spinrpc: ") + e.what() + "\n");
  }
}

bool ChildProcess::wait_once(int options) {
  if (pid_ <= 0) throw std::logic_error("spinrpc: ChildProcess has no child to wait for");
  int status = 0;
  // Not check_syscall: its message names an fd, a pid needs its own.
  const pid_t got = retry_on_eintr([&] { return ::waitpid(pid_, &status, options); });
  if (got < 0 && errno == ECHILD) {
    // Reaped already, by the kernel (SIGCHLD set to SIG_IGN) or another
    // waitpid: the status is gone, and the pid may be someone else's soon.
    lost_ = true;
    pidfd_.reset();
    throw std::system_error(ECHILD, std::generic_category(),
                            executable_ + " (pid " + std::to_string(pid_) +
                                ") was reaped by someone else (SIGCHLD set to SIG_IGN?); its exit status is lost");
  }
  if (got < 0) throw_child_error(errno, "wait for", executable_, pid_);
  if (got == 0) return false;  // WNOHANG: still running
  wait_status_ = status;
  pidfd_.reset();  // a channel closed but kept holds no fd for its child
  return true;
}

std::optional<int> ChildProcess::try_wait_for(std::chrono::milliseconds timeout) {
  if (reaped()) return wait_status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Start short: a child whose pipe just hit EOF is usually a zombie within
  // microseconds. Grow to 5 ms so a long grace costs few wakeups.
  std::chrono::microseconds step{50};
  for (;;) {
    if (wait_once(WNOHANG)) return wait_status_;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(step, deadline - now));
    step = std::min(step * 2, std::chrono::microseconds{5000});
  }
}

int ChildProcess::wait() {
  if (!reaped()) wait_once(0);
  return *wait_status_;
}

void ChildProcess::kill(int signal) {
  if (pid() < 0) return;
  const long sent = pidfd_ ? ::syscall(SYS_pidfd_send_signal, pidfd_.get(), signal, nullptr, 0) : ::kill(pid_, signal);
  // ESRCH: a child we have not reaped is gone all the same, reaped by
  // someone else (see WARNING); the next wait says so.
  if (sent != 0 && errno != ESRCH) throw_child_error(errno, "signal", executable_, pid_);
}

}  // namespace spinrpc
