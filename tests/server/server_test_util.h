#pragma once
// Helpers for the dead-peer, error-storm and limit tests: real processes on
// real pipes, files for canned bytes and stderr, and a hang guard.

#include <fcntl.h>   // ::open, O_RDONLY, O_CLOEXEC
#include <poll.h>    // ::poll
#include <signal.h>  // ::kill, SIGKILL
#include <unistd.h>  // ::getpid, ::read

#include <cerrno>              // errno, EINTR
#include <chrono>              // std::chrono
#include <condition_variable>  // std::condition_variable
#include <cstdio>              // std::remove
#include <cstdlib>             // std::getenv (TMPDIR)
#include <fstream>             // std::ifstream, std::ofstream
#include <iterator>            // std::istreambuf_iterator
#include <mutex>               // std::mutex, std::unique_lock
#include <optional>            // std::optional
#include <span>                // std::span
#include <string>              // std::string
#include <string_view>         // std::string_view
#include <thread>              // std::thread, std::this_thread
#include <vector>              // std::vector

#include <doctest/doctest.h>

#include "descriptor/unique_fd.h"
#include "client-shim/child_process.h"
#include "protocol/frame.h"
#include "protocol/frame_encoder.h"
#include "tests/support/paths.h"  // bin_path
#include "tests/support/proc.h"   // kHangGuard, eventually, proc_stat_field, read_proc_text

namespace spinrpc::test {

// A file in the temporary directory, removed on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& tag) {
    static int counter = 0;
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/spinrpc-server-test-" +
            std::to_string(::getpid()) + "-" + std::to_string(++counter) + "-" + tag;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path_.c_str()); }

  const std::string& path() const { return path_; }
  void write(const std::vector<std::byte>& bytes) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
  }
  std::string read() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  std::string path_;
};

// Frames as a client writes them.
inline std::vector<std::byte> frame_bytes(MessageType type, std::string_view name,
                                          std::string_view payload) {
  std::vector<std::byte> out;
  append_frame(out, type, as_bytes(name), as_bytes(payload));
  return out;
}

inline std::vector<std::byte> concat(std::initializer_list<std::vector<std::byte>> parts) {
  std::vector<std::byte> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline std::vector<std::byte> raw(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

inline UniqueFd open_dev_null(int flags) {
  const int fd = ::open("/dev/null", flags | O_CLOEXEC);
  REQUIRE(fd >= 0);
  return UniqueFd(fd);
}

// `executable args...` with the given stdin and stdout, its stderr going to
// `stderr_file`: through sh, which execs it, so the pid is the executable's.
inline ChildProcess spawn_with_stderr(const std::string& executable,
                                      const std::vector<std::string>& args, int stdin_fd,
                                      int stdout_fd, const TempFile& stderr_file,
                                      std::span<const std::string_view> add_env = {}) {
  // $0 is the executable, $1 the stderr file, the rest its arguments.
  std::vector<std::string> sh_args{"-c", "err=$1; shift; exec \"$0\" \"$@\" 2>\"$err\"",
                                   executable, stderr_file.path()};
  sh_args.insert(sh_args.end(), args.begin(), args.end());
  return ChildProcess::spawn("sh", sh_args, stdin_fd, stdout_fd, add_env);
}

// A client process: writes `file` to its stdout, then sleeps, holding its
// fds open, until it is killed. Its stdin is `stdin_fd`, which it never reads.
inline ChildProcess spawn_stalling_client(const TempFile& file, int stdin_fd, int stdout_fd) {
  return ChildProcess::spawn("sh", {"-c", "cat \"$0\" && exec sleep 60", file.path()}, stdin_fd,
                             stdout_fd);
}

// The process has exec'ed `name` (its comm), e.g. a stalling client that
// has written everything and now sleeps.
inline bool runs(int pid, const std::string& name) { return read_proc_text(pid, "comm") == name; }

// The process is dead and waits to be reaped (state Z).
inline bool is_zombie(int pid) { return proc_stat_field(pid, 3) == "Z"; }

// Kills `pid` with SIGKILL if the guarded scope is still running after
// kHangGuard, so a call blocked on that process returns (with the wrong
// outcome) instead of hanging the suite; fired() then says so.
class HangGuard {
 public:
  explicit HangGuard(int pid) : pid_(pid), thread_([this] { run(); }) {}
  HangGuard(const HangGuard&) = delete;
  HangGuard& operator=(const HangGuard&) = delete;
  ~HangGuard() { stop(); }

  // Ends the guard; returns whether it had fired.
  bool stop() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!wake_.wait_for(lock, kHangGuard, [this] { return done_; })) {
      fired_ = true;
      ::kill(pid_, SIGKILL);
    }
  }

  int pid_;                       // the process to kill; an unreaped child of ours
  std::mutex mutex_;              // guards done_
  std::condition_variable wake_;  // signalled by stop()
  bool done_ = false;             // the guarded scope ended
  bool fired_ = false;            // written by the thread before it ends
  std::thread thread_;            // last: starts once the rest is set up
};

}  // namespace spinrpc::test

namespace spinrpc::test {

// One read(2) from `fd` appended to `text`, waiting for bytes until
// `deadline`: 1 when bytes came, 0 at EOF, -1 when the deadline passed.
inline int read_some_before(int fd, std::string& text, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return -1;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    REQUIRE(ready >= 0);
    if (ready == 0) return -1;
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    REQUIRE(n >= 0);
    if (n == 0) return 0;
    text.append(chunk, static_cast<std::size_t>(n));
    return 1;
  }
}

// Everything left to read from `fd` up to EOF, or std::nullopt if no EOF
// came within the hang guard (some process still holds the write end).
inline std::optional<std::string> read_to_eof(int fd) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  for (;;) {
    const int got = read_some_before(fd, text, deadline);
    if (got < 0) return std::nullopt;
    if (got == 0) return text;
  }
}

// Reads from `fd` into `text` until it holds `want`: false at EOF or when
// the hang guard runs out first.
inline bool read_until(int fd, std::string& text, std::string_view want) {
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  while (text.find(want) == std::string::npos) {
    if (read_some_before(fd, text, deadline) <= 0) return false;
  }
  return true;
}

}  // namespace spinrpc::test
