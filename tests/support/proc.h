#pragma once
// Reading another process's (or thread's) state from /proc, and waiting for
// it with a hang guard instead of a time: tests wait for a state the kernel
// reports, never for a duration they hope is long enough.

#include <linux/kcmp.h>    // KCMP_FILES
#include <sys/syscall.h>   // SYS_kcmp
#include <unistd.h>        // ::syscall

#include <chrono>      // std::chrono
#include <filesystem>  // std::filesystem::directory_iterator
#include <fstream>     // std::ifstream
#include <optional>    // std::optional
#include <string>      // std::string
#include <thread>      // std::this_thread
#include <vector>      // std::vector

namespace spinrpc::test {

// The hang guard of every wait in the tests: far above anything a healthy
// run needs, only there so a broken build fails instead of hanging. Never a
// performance assertion.
inline constexpr std::chrono::seconds kHangGuard{5};

// Polls `ready` every millisecond until it holds or the hang guard runs out;
// returns whether it held.
template <class F>
bool eventually(F&& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Field `index` (1-based, as proc(5) counts them, after the "(comm)") of a
// /proc/.../stat file, or "" once the process or thread is gone.
inline std::string stat_field(const std::string& stat_path, int index) {
  std::ifstream in(stat_path);
  std::string line;
  if (!std::getline(in, line)) return {};
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::size_t at = close + 2;  // field 3 (state) starts here
  for (int field = 3; field < index; ++field) {
    at = line.find(' ', at);
    if (at == std::string::npos) return {};
    ++at;
  }
  return line.substr(at, line.find(' ', at) - at);
}

// Field `index` of /proc/PID/stat (the process's main thread).
inline std::string proc_stat_field(int pid, int index) {
  return stat_field("/proc/" + std::to_string(pid) + "/stat", index);
}

// The state letter of one of this process's threads: "R" running or
// runnable, "S" asleep in the kernel (a blocking read, poll, write), ...
inline std::string thread_state(int tid) {
  return stat_field("/proc/self/task/" + std::to_string(tid) + "/stat", 3);
}

// The first line of /proc/PID/<entry>.
inline std::string read_proc_text(int pid, const char* entry) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + entry);
  std::string text;
  std::getline(in, text);
  return text;
}

// Whether signal `sig` is in the mask named `field` ("SigCgt:", "SigBlk:")
// of /proc/PID/status.
inline bool in_signal_mask(int pid, const std::string& field, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field, 0) != 0) continue;
    const unsigned long long mask = std::stoull(line.substr(field.size()), nullptr, 16);
    return (mask >> (sig - 1)) & 1ULL;
  }
  return false;
}

// Whether process `pid` has a handler installed for signal `sig` (the
// SigCgt mask of /proc/PID/status). A test that signals a server waits for
// it: a signal sent before is lost when the server was started with it
// ignored (a background job of a non-interactive shell is), or kills it
// by the default action instead of the server's own ending.
inline bool catches_signal(int pid, int sig) { return in_signal_mask(pid, "SigCgt:", sig); }

// Whether process `pid`'s main thread blocks signal `sig` (SigBlk): a signal
// sent from then on waits, pending, instead of being lost or acted on.
inline bool blocks_signal(int pid, int sig) { return in_signal_mask(pid, "SigBlk:", sig); }

// The thread ids of process `pid` (/proc/PID/task), the main thread's
// (= pid) among them; empty once it is gone.
inline std::vector<int> tasks_of(int pid) {
  std::vector<int> tids;
  std::error_code ec;
  const std::filesystem::path dir = "/proc/" + std::to_string(pid) + "/task";
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    tids.push_back(std::stoi(it->path().filename().string()));
  }
  return tids;
}

// Whether threads `a` and `b` (any process's) share one descriptor table
// (kcmp(2), KCMP_FILES), or std::nullopt when the kernel will not say (no
// kcmp, or no ptrace access to them: the caller skips).
inline std::optional<bool> share_descriptor_table(int a, int b) {
  const long r = ::syscall(SYS_kcmp, a, b, KCMP_FILES, 0UL, 0UL);
  if (r < 0) return std::nullopt;
  return r == 0;
}

}  // namespace spinrpc::test
