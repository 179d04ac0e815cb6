#include "bench/process_cpu.h"

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

std::int64_t process_cpu_ns(int pid) noexcept {
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task_dir.c_str());
  if (dir == nullptr) return -1;
  std::int64_t total = 0;
  bool any = false;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = task_dir + '/' + entry->d_name + "/schedstat";
    std::FILE* f = std::fopen(path.c_str(), "r");
    // Branch: the thread exited between readdir and fopen; its time is gone
    // from the sum either way.
    if (f == nullptr) continue;
    long long on_cpu_ns = 0;
    if (std::fscanf(f, "%lld", &on_cpu_ns) == 1) {
      total += on_cpu_ns;
      any = true;
    }
    std::fclose(f);
  }
  ::closedir(dir);
  return any ? total : -1;
}

std::optional<std::map<int, std::int64_t>> thread_runs(int pid) {
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task_dir.c_str());
  if (dir == nullptr) return std::nullopt;
  std::map<int, std::int64_t> runs;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = task_dir + '/' + entry->d_name + "/schedstat";
    std::FILE* f = std::fopen(path.c_str(), "r");
    // Branch: the thread exited between readdir and fopen.
    if (f == nullptr) continue;
    long long on_cpu_ns = 0;
    long long waiting_ns = 0;
    long long timeslices = 0;
    if (std::fscanf(f, "%lld %lld %lld", &on_cpu_ns, &waiting_ns, &timeslices) == 3) {
      runs[static_cast<int>(std::strtol(entry->d_name, nullptr, 10))] = timeslices;
    }
    std::fclose(f);
  }
  ::closedir(dir);
  if (runs.empty()) return std::nullopt;
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
