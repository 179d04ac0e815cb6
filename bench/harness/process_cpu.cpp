#include "bench/harness/process_cpu.h"

#include <dirent.h>  // ::opendir, ::readdir, ::closedir
#include <time.h>    // ::clock_gettime, CLOCK_PROCESS_CPUTIME_ID

#include <cstdio>   // std::fopen, std::fscanf, std::fclose
#include <cstdlib>  // std::strtol
#include <string>   // std::string

namespace spinrpc::bench {

std::int64_t self_cpu_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

namespace {

// Calls visit(tid, file) with each thread of process `pid` and its
// /proc/PID/task/TID/schedstat open for reading (closed afterwards). A thread
// that exits between readdir and fopen is skipped: its time is gone either
// way. Returns false if the task directory cannot be opened (the process is
// gone).
template <class Visit>
bool for_each_thread_schedstat(int pid, Visit visit) {
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task_dir.c_str());
  if (dir == nullptr) return false;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = task_dir + '/' + entry->d_name + "/schedstat";
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) continue;
    visit(static_cast<int>(std::strtol(entry->d_name, nullptr, 10)), f);
    std::fclose(f);
  }
  ::closedir(dir);
  return true;
}

}  // namespace

std::int64_t process_cpu_ns(int pid) noexcept {
  std::int64_t total = 0;
  bool any = false;
  const bool found = for_each_thread_schedstat(pid, [&](int, std::FILE* f) {
    long long on_cpu_ns = 0;
    if (std::fscanf(f, "%lld", &on_cpu_ns) == 1) {
      total += on_cpu_ns;
      any = true;
    }
  });
  return found && any ? total : -1;
}

std::optional<std::map<int, std::int64_t>> thread_runs(int pid) {
  std::map<int, std::int64_t> runs;
  const bool found = for_each_thread_schedstat(pid, [&](int tid, std::FILE* f) {
    long long on_cpu_ns = 0;
    long long waiting_ns = 0;
    long long timeslices = 0;
    if (std::fscanf(f, "%lld %lld %lld", &on_cpu_ns, &waiting_ns, &timeslices) == 3) runs[tid] = timeslices;
  });
  if (!found || runs.empty()) return std::nullopt;
  return runs;
}

std::int64_t thread_runs_between(const std::map<int, std::int64_t>& before,
                                 const std::map<int, std::int64_t>& after, int skip_tid) noexcept {
  std::int64_t total = 0;
  for (const auto& [tid, runs] : after) {
    if (tid == skip_tid) continue;
    const auto it = before.find(tid);
    total += it == before.end() ? runs : runs - it->second;
  }
  return total;
}

}  // namespace spinrpc::bench
