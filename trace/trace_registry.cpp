#include "trace/trace_registry.h"

#include <unistd.h>  // ::getpid, ::write

#include <atomic>     // std::atomic
#include <cstdlib>    // std::atexit
#include <exception>  // std::exception
#include <mutex>      // std::mutex, std::lock_guard
#include <utility>    // std::move
#include <vector>     // std::vector

#include "trace/trace_writer.h"

namespace spinrpc::trace {
namespace {

struct Entry {
  std::string path;
  std::shared_ptr<Ring> ring;
  bool closed = false;
};

struct Registry {
  std::mutex mutex;
  std::vector<Entry> entries;  // guarded by mutex
  std::atomic<long long> exit_budget_ms{-1};
  bool exit_writer_registered = false;  // guarded by mutex
};

Registry& registry() {
  // Never destroyed: the exit writer runs after static destructors may have.
  static Registry* const instance = new Registry;
  return *instance;
}

// `line` begins with "spinrpc: ", as the writer's errors (what()) do.
void stderr_line(const std::string& line) noexcept {
  const std::string text = line + '\n';
  [[maybe_unused]] const ssize_t n = ::write(2, text.data(), text.size());
}

// Writes `path` with the rings of `entries` on it (closed ones only, or all).
void write_path(const std::string& path, const std::vector<Entry>& entries, bool closed_only,
                std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
  std::vector<const Ring*> rings;
  for (const Entry& e : entries) {
    if (e.path == path && (e.closed || !closed_only)) rings.push_back(e.ring.get());
  }
  if (rings.empty()) return;
  try {
    const WriteReport report = write_trace(path, rings, deadline);
    if (report.cut) {
      stderr_line("spinrpc: the trace " + path + " was cut short to be written in time: it has the newest " +
                  std::to_string(report.requests) + " requests");
    }
  } catch (const std::exception& e) {
    stderr_line(e.what());
  }
}

void write_at_exit() {
  const long long budget = registry().exit_budget_ms.load();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (budget >= 0) deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget);
  write_all(deadline);
}

}  // namespace

std::string expand_path(const std::string& pattern, bool add_pid_if_absent) {
  const std::string pid = std::to_string(::getpid());
  std::string path;
  bool replaced = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      path += pid;
      replaced = true;
      ++i;
    } else {
      path += pattern[i];
    }
  }
  if (replaced || !add_pid_if_absent) return path;
  constexpr std::string_view kJson = ".json";
  if (path.size() > kJson.size() && path.ends_with(kJson)) {
    return path.insert(path.size() - kJson.size(), "." + pid);
  }
  return path + "." + pid;
}

std::shared_ptr<Ring> open_ring(const std::string& path, std::size_t max_requests, std::string label) {
  auto ring = std::make_shared<Ring>(max_requests, std::move(label));
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.entries.push_back({path, ring, false});
  if (!r.exit_writer_registered) {
    r.exit_writer_registered = true;
    std::atexit(write_at_exit);
  }
  return ring;
}

void close_ring(const std::shared_ptr<Ring>& ring) noexcept {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (Entry& e : r.entries) {
    if (e.ring != ring) continue;
    e.closed = true;
    write_path(e.path, r.entries, /*closed_only=*/true, std::nullopt);
    return;
  }
}

void write_all(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::vector<std::string> done;
  for (const Entry& e : r.entries) {
    bool seen = false;
    for (const std::string& path : done) seen = seen || path == e.path;
    if (seen) continue;
    done.push_back(e.path);
    write_path(e.path, r.entries, /*closed_only=*/false, deadline);
  }
}

void set_exit_budget(std::chrono::milliseconds budget) noexcept { registry().exit_budget_ms.store(budget.count()); }

}  // namespace spinrpc::trace
