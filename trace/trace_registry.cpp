#include "trace/trace_registry.h"

#include <sys/types.h>  // pid_t
#include <unistd.h>     // ::getpid

#include <atomic>     // std::atomic
#include <cstdlib>    // std::atexit
#include <exception>  // std::exception
#include <mutex>      // std::mutex, std::lock_guard
#include <utility>    // std::move
#include <vector>     // std::vector

#include "descriptor/stderr_lines.h"
#include "trace/trace_writer.h"

namespace spinrpc::trace {
namespace {

struct Entry {
  std::string path;
  std::shared_ptr<Ring> ring;
  bool closed = false;
  // The process that opened the ring. A forked child inherits its parent's
  // entries; their records are the parent's, and so is their file.
  pid_t pid = 0;
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

// When a trace is written: at a channel's close(), while the process works
// on (its line never waits for stderr), or as it ends (exit, SIGTERM: its
// line may wait a moment for room).
enum class When { close, end };

// Writes `path` with this process's rings of `entries` on it: the closed
// ones at close(), all of them at the end. Its stderr lines begin with
// "spinrpc: ", as the writer's errors (what()) do.
void write_path(const std::string& path, const std::vector<Entry>& entries, When when,
                std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
  const pid_t self = ::getpid();
  std::vector<const Ring*> rings;
  for (const Entry& e : entries) {
    if (e.pid == self && e.path == path && (e.closed || when == When::end)) rings.push_back(e.ring.get());
  }
  if (rings.empty()) return;
  const auto line = [when](const std::string& text) {
    if (when == When::close) {
      write_stderr_without_waiting(text + '\n');
    } else {
      write_stderr_before_exit(text + '\n');
    }
  };
  try {
    const WriteReport report = write_trace(path, rings, deadline);
    if (report.cut) {
      line("spinrpc: the trace " + path + " was cut short to be written in time: it has the newest " +
           std::to_string(report.requests) + " requests");
    }
  } catch (const std::exception& e) {
    line(e.what());
  }
}

void write_at_exit() {
  const long long budget = registry().exit_budget_ms.load();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (budget >= 0) deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget);
  write_all(deadline);
}

}  // namespace

std::string expand_path(const std::string& pattern) {
  const std::string pid = std::to_string(::getpid());
  std::string path;
  bool replaced = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] == '%' && next == 'p') {
      path += pid;
      replaced = true;
      ++i;
    } else if (pattern[i] == '%' && next == '%') {
      path += '%';
      ++i;
    } else {
      path += pattern[i];
    }
  }
  if (replaced) return path;
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
  r.entries.push_back({path, ring, false, ::getpid()});
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
    write_path(e.path, r.entries, When::close, std::nullopt);
    return;
  }
}

void write_all(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  // Only the files with a channel still open: close() wrote the others,
  // and a file moved or removed since stays as its owner left it. Such a
  // file is written with all its channels, the closed ones too, since it
  // replaces what close() wrote.
  const pid_t self = ::getpid();
  std::vector<std::string> done;
  for (const Entry& e : r.entries) {
    if (e.closed || e.pid != self) continue;
    bool seen = false;
    for (const std::string& path : done) seen = seen || path == e.path;
    if (seen) continue;
    done.push_back(e.path);
    write_path(e.path, r.entries, When::end, deadline);
  }
}

void set_exit_budget(std::chrono::milliseconds budget) noexcept { registry().exit_budget_ms.store(budget.count()); }

}  // namespace spinrpc::trace
