#include "trace/trace_writer.h"

#include <errno.h>     // program_invocation_short_name
#include <fcntl.h>     // ::open, O_NOFOLLOW, O_NONBLOCK
#include <poll.h>      // ::poll
#include <signal.h>    // ::pthread_sigmask, ::sigtimedwait, SIGPIPE
#include <stdlib.h>    // ::mkostemp
#include <sys/stat.h>  // ::lstat, ::fstat, S_ISREG, S_ISFIFO, S_ISCHR
#include <unistd.h>    // ::write, ::close, ::getpid, ::geteuid, ::unlink

#include <algorithm>     // std::max
#include <charconv>      // std::to_chars
#include <cstdio>        // std::rename
#include <stdexcept>     // std::runtime_error
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error

#include "descriptor/syscall.h"    // retry_on_eintr
#include "descriptor/unique_fd.h"  // UniqueFd
#include "protocol/go_format.h"
#include "protocol/message_type.h"

namespace spinrpc::trace {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr std::size_t kRecordsPerDeadlineCheck = 4096;
// How long a write through a FIFO or a device waits for its reader to make
// room, each time it is full, when the writer has no deadline of its own:
// a reader that takes nothing for this long is not coming back, and a
// close() must not wait on it forever.
constexpr std::chrono::seconds kReaderPatience{5};

using Deadline = std::optional<std::chrono::steady_clock::time_point>;

std::string_view wait_end_text(std::uint8_t detail) noexcept {
  switch (static_cast<WaitEnd>(detail)) {
    case WaitEnd::spin: return "the bytes came while spinning";
    case WaitEnd::budget_spent: return "spin budget spent";
    case WaitEnd::contended: return "CPU contended (a late yield)";
    case WaitEnd::no_budget: return "spin budget 0";
    case WaitEnd::suspended: return "adaptive rule: spinning suspended";
    case WaitEnd::placed: return "placement: one blocking read";
  }
  return "unknown";
}

// The JSON text of one file, flushed to a descriptor as it grows.
class Output {
 public:
  Output(int fd, std::string path, Deadline deadline) : fd_(fd), path_(std::move(path)), deadline_(deadline) {
    text_.reserve(kFlushBytes + 4096);
  }
  std::string& text() noexcept { return text_; }
  void raw(std::string_view s) { text_ += s; }
  void number(std::int64_t value) {
    char buffer[24];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    text_.append(buffer, end);
  }
  // ns as µs with three decimals, the unit trace events count in.
  void micros(std::int64_t ns) {
    if (ns < 0) {
      text_ += '-';
      ns = -ns;
    }
    number(ns / 1000);
    const auto frac = static_cast<int>(ns % 1000);
    text_ += '.';
    text_ += static_cast<char>('0' + frac / 100);
    text_ += static_cast<char>('0' + frac / 10 % 10);
    text_ += static_cast<char>('0' + frac % 10);
  }
  void string(std::string_view s) { append_json_string(text_, s); }
  void maybe_flush() {
    if (text_.size() >= kFlushBytes) flush();
  }
  void flush() {
    std::size_t at = 0;
    while (at < text_.size()) {
      const ssize_t n = retry_on_eintr([&] { return ::write(fd_, text_.data() + at, text_.size() - at); });
      // written, whole or in part
      if (n >= 0) {
        at += static_cast<std::size_t>(n);
        continue;
      }
      // a FIFO or device (opened O_NONBLOCK) whose reader is behind
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait_for_room();
        continue;
      }
      // anything else: ENOSPC, EIO, EPIPE (the reader left)
      throw std::system_error(errno, std::generic_category(), "spinrpc: cannot write the trace " + path_);
    }
    text_.clear();
  }

 private:
  // Waits for the reader of a FIFO or device to take some bytes: until the
  // deadline when there is one, else at most kReaderPatience.
  void wait_for_room() {
    using namespace std::chrono;
    milliseconds patience = kReaderPatience;
    if (deadline_) patience = std::max(ceil<milliseconds>(*deadline_ - steady_clock::now()), milliseconds(0));
    pollfd p{fd_, POLLOUT, 0};
    const int ready = retry_on_eintr([&] { return ::poll(&p, 1, static_cast<int>(patience.count())); });
    if (ready > 0) return;  // room, or an error the next write reports
    if (ready < 0) throw std::system_error(errno, std::generic_category(), "spinrpc: cannot write the trace " + path_);
    throw std::runtime_error("spinrpc: the reader of the trace " + path_ + " took nothing for " +
                             std::to_string(patience.count()) + " ms; the rest is not written");
  }

  int fd_;
  std::string path_;
  Deadline deadline_;
  std::string text_;
};

// SIGPIPE held back on this thread while a trace is written through a FIFO
// whose reader may leave: the write fails with EPIPE, one stderr line,
// instead of killing a process that keeps SIGPIPE at its default (a C++
// shim user with keep_sigpipe_disposition). A SIGPIPE the write raised is
// taken back before the mask is restored; one pending before is left.
class SigpipeHeld {
 public:
  SigpipeHeld() noexcept {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &saved_);
    was_pending_ = pending();
  }
  ~SigpipeHeld() {
    if (!was_pending_ && pending()) {
      const timespec now{};
      retry_on_eintr([&] { return ::sigtimedwait(&pipe_, nullptr, &now); });
    }
    ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  SigpipeHeld(const SigpipeHeld&) = delete;
  SigpipeHeld& operator=(const SigpipeHeld&) = delete;

 private:
  static bool pending() noexcept {
    sigset_t set;
    sigemptyset(&set);
    ::sigpending(&set);
    return sigismember(&set, SIGPIPE) == 1;
  }
  sigset_t pipe_{};
  sigset_t saved_{};
  bool was_pending_ = false;
};

class EventWriter {
 public:
  EventWriter(Output& out, int pid) : out_(out), pid_(pid) {}
  std::size_t events() const noexcept { return events_; }

  void metadata(std::string_view what, int tid, std::string_view name) {
    open("M");
    out_.raw(",\"name\":");
    out_.string(what);
    out_.raw(",\"tid\":");
    out_.number(tid);
    out_.raw(",\"args\":{\"name\":");
    out_.string(name);
    out_.raw("}}");
  }

  void record(const Ring& ring, const Record& r) {
    const std::string_view name = ring.names().name(r.name);
    switch (r.kind) {
      case Kind::wait: {
        const bool blocked = static_cast<WaitEnd>(r.detail) != WaitEnd::spin;
        const auto spun = static_cast<std::int64_t>(r.a);
        span(r, ring, "wait", "wait", r.start_ns, r.dur_ns);
        out_.raw(",\"ended_by\":");
        out_.raw(blocked ? "\"block\"" : "\"spin\"");
        out_.raw(",\"why\":");
        out_.string(wait_end_text(r.detail));
        out_.raw(",\"spin_us\":");
        out_.micros(spun);
        out_.raw(",\"tries\":");
        out_.number(r.b);
        out_.raw("}}");
        // The two phases as children, in two colours: a slice's colour
        // follows its name in Perfetto and chrome://tracing.
        if (spun > 0) {
          span(r, ring, "spin", "wait", r.start_ns, blocked ? spun : r.dur_ns);
          out_.raw(",\"tries\":");
          out_.number(r.b);
          out_.raw("}}");
        }
        if (blocked) {
          const std::int64_t from = spun < r.dur_ns ? spun : r.dur_ns;
          span(r, ring, "block", "wait", r.start_ns + from, r.dur_ns - from);
          out_.raw("}}");
        }
        return;
      }
      case Kind::send:
      case Kind::read: {
        std::string title(r.kind == Kind::send ? "send " : "read ");
        title += to_string(static_cast<MessageType>(r.detail));
        span(r, ring, title, r.kind == Kind::send ? "send" : "read", r.start_ns, r.dur_ns);
        out_.raw(",\"bytes\":");
        out_.number(static_cast<std::int64_t>(r.a));
        out_.raw("}}");
        return;
      }
      case Kind::request:
        span(r, ring, name, "request", r.start_ns, r.dur_ns);
        out_.raw(",\"reply\":");
        out_.string(to_string(static_cast<MessageType>(r.detail)));
        out_.raw(",\"bytes_out\":");
        out_.number(static_cast<std::int64_t>(r.a));
        out_.raw(",\"bytes_in\":");
        out_.number(r.b);
        out_.raw("}}");
        return;
      case Kind::handler:
        span(r, ring, r.detail == kCallbackDetail ? "callback" : "handler", "handler", r.start_ns, r.dur_ns);
        out_.raw(r.detail == kCallbackDetail ? ",\"callback\":" : ",\"method\":");
        out_.string(name);
        out_.raw("}}");
        return;
      case Kind::call: {
        std::string title("call ");
        title += name;
        span(r, ring, title, "call", r.start_ns, r.dur_ns);
        out_.raw(",\"reply\":");
        out_.string(to_string(static_cast<MessageType>(r.detail)));
        out_.raw("}}");
        return;
      }
      case Kind::instant:
        open("i");
        out_.raw(",\"s\":\"t\",\"cat\":\"decision\",\"name\":");
        out_.string(name);
        common(r, ring, r.start_ns);
        out_.raw(",\"value\":");
        out_.number(static_cast<std::int64_t>(r.a));
        out_.raw("}}");
        return;
    }
  }

 private:
  void open(std::string_view phase) {
    out_.raw(events_++ == 0 ? "\n" : ",\n");
    out_.raw("{\"ph\":\"");
    out_.raw(phase);
    out_.raw("\",\"pid\":");
    out_.number(pid_);
  }
  // ,"tid":..,"ts":..,"args":{"seq":..,"cpu":.. (left open for the caller's args)
  void common(const Record& r, const Ring& ring, std::int64_t start_ns) {
    out_.raw(",\"tid\":");
    out_.number(ring.tid());
    out_.raw(",\"ts\":");
    out_.micros(start_ns);
    out_.raw(",\"args\":{\"seq\":");
    out_.number(r.seq);
    out_.raw(",\"cpu\":");
    out_.number(r.cpu);
  }
  void span(const Record& r, const Ring& ring, std::string_view name, std::string_view category,
            std::int64_t start_ns, std::int64_t dur_ns) {
    open("X");
    out_.raw(",\"cat\":");
    out_.string(category);
    out_.raw(",\"name\":");
    out_.string(name);
    out_.raw(",\"dur\":");
    out_.micros(dur_ns < 0 ? 0 : dur_ns);
    common(r, ring, start_ns);
  }

  Output& out_;
  int pid_;
  std::size_t events_ = 0;
};

// The lowest seq written for `ring`: the last max_requests requests, none
// whose first records the ring has overwritten. The oldest request left
// lost some only if the last record overwritten was one of its own: a ring
// that wrapped exactly at a request's first record keeps that request.
std::uint32_t first_kept(const Ring& ring, const Ring::Contents& contents) noexcept {
  const std::uint32_t last = ring.requests_begun();
  std::uint32_t first = last >= ring.max_requests() ? last - static_cast<std::uint32_t>(ring.max_requests()) + 1 : 0;
  if (contents.wrapped && !contents.older.empty()) {
    const std::uint32_t oldest = contents.older.front().seq;
    if (oldest == ring.overwritten_seq() && oldest + 1 > first) first = oldest + 1;
  }
  return first;
}

// Where a trace's bytes go (docs/HARDENING.md, "Trace files").
struct Destination {
  UniqueFd fd;
  std::string temporary;  // renamed over the path once whole; empty: written through `fd` to the path itself
};

// A refusal to write `path`, as the one stderr line that says why.
std::runtime_error refused(const std::string& path, const std::string& why) {
  return std::runtime_error("spinrpc: not writing the trace " + path + ": " + why);
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// A new file in `path`'s directory, created exclusively (O_EXCL: nothing
// there is followed or opened, so no open blocks) under a name no one can
// guess, mode 0600, close-on-exec.
Destination create_temporary(const std::string& path) {
  std::string name;
  const int fd = retry_on_eintr([&] {
    name = path + ".tmp.XXXXXX";
    return ::mkostemp(name.data(), O_CLOEXEC);
  });
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "spinrpc: cannot create the trace " + path);
  return {UniqueFd(fd), std::move(name)};
}

// The FIFO or character device at `path`, opened to be written through:
// O_NONBLOCK, so a FIFO without a reader is ENXIO instead of a wait;
// O_NOFOLLOW, so a symbolic link put there since the check is refused; and
// checked again on the descriptor, which is what gets written. A FIFO of
// another user (but root) is refused: its reader would take the trace that
// a file of ours keeps at 0600.
Destination open_through(const std::string& path) {
  const int fd = retry_on_eintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC); });
  if (fd < 0 && errno == ENXIO) throw refused(path, "it is a FIFO with no reader");
  if (fd < 0 && errno == ELOOP) throw refused(path, "it is a symbolic link, never followed");
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "spinrpc: cannot open the trace " + path);
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::system_error(errno, std::generic_category(), "spinrpc: cannot open the trace " + path);
  if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
    throw refused(path, "once opened, it is not a FIFO or a character device");
  }
  if (S_ISFIFO(st.st_mode) && st.st_uid != ::geteuid() && st.st_uid != 0) {
    throw refused(path, "it is a FIFO of another user (uid " + std::to_string(st.st_uid) + "), who would read it");
  }
  return {std::move(owned), {}};
}

// What `path` is decides how it is written: absent or a regular file, a
// new file renamed over it; a FIFO or a character device, written
// through; anything else, and a symbolic link above all (its name is as
// easy to guess as the old temporary's was), refused.
Destination open_destination(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw std::system_error(errno, std::generic_category(), "spinrpc: cannot write the trace " + path);
    return create_temporary(path);
  }
  if (S_ISLNK(st.st_mode)) throw refused(path, "it is a symbolic link, never followed");
  if (S_ISREG(st.st_mode)) return create_temporary(path);
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return open_through(path);
  throw refused(path, "it is " + kind_of(st.st_mode) +
                          " (a trace replaces a regular file, or is written through a FIFO or a character device)");
}

}  // namespace

WriteReport write_trace(const std::string& path, std::span<const Ring* const> rings,
                        std::optional<std::chrono::steady_clock::time_point> deadline) {
  const int pid = static_cast<int>(::getpid());
  Destination to = open_destination(path);
  std::optional<SigpipeHeld> sigpipe_held;
  if (to.temporary.empty()) sigpipe_held.emplace();
  WriteReport report;
  try {
    Output out(to.fd.get(), path, deadline);
    EventWriter events(out, pid);
    out.raw("{\"traceEvents\":[");
    events.metadata("process_name", pid, program_invocation_short_name);
    for (const Ring* ring : rings) events.metadata("thread_name", ring->tid(), ring->label());
    std::string channels;
    std::size_t checked = 0;
    for (const Ring* ring : rings) {
      const Ring::Contents contents = ring->contents();
      const std::uint32_t first = first_kept(*ring, contents);
      std::size_t requests = 0;
      std::uint32_t seq_seen = UINT32_MAX;
      bool stop = false;
      // Newest first, so that a cut keeps the latest requests.
      for (const std::span<const Record> part : {contents.newer, contents.older}) {
        for (std::size_t i = part.size(); i-- > 0 && !stop;) {
          const Record& r = part[i];
          if (r.seq < first) {
            stop = true;
            break;
          }
          if (r.seq != seq_seen) {
            // A request's records are written whole: the clock is looked
            // at only between requests.
            if (deadline && checked >= kRecordsPerDeadlineCheck) {
              checked = 0;
              if (std::chrono::steady_clock::now() >= *deadline) {
                report.cut = true;
                stop = true;
                break;
              }
            }
            seq_seen = r.seq;
            if (r.seq != 0) ++requests;
          }
          events.record(*ring, r);
          ++checked;
          out.maybe_flush();
        }
        if (stop) break;
      }
      report.requests += requests;
      channels += channels.empty() ? "" : ",";
      channels += "{\"label\":";
      append_json_string(channels, ring->label());
      channels += ",\"tid\":" + std::to_string(ring->tid()) + ",\"requests_begun\":" +
                  std::to_string(ring->requests_begun()) + ",\"requests_written\":" + std::to_string(requests) +
                  ",\"max_requests\":" + std::to_string(ring->max_requests()) + "}";
    }
    report.events = events.events();
    out.raw("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"spinrpc\":{\"clock\":\"CLOCK_MONOTONIC\",\"pid\":");
    out.number(pid);
    out.raw(",\"cut\":");
    out.raw(report.cut ? "true" : "false");
    out.raw(",\"channels\":[");
    out.raw(channels);
    out.raw("]}}}\n");
    out.flush();
  } catch (...) {
    to.fd.reset();
    if (!to.temporary.empty()) ::unlink(to.temporary.c_str());
    throw;
  }
  if (to.temporary.empty()) {
    to.fd.reset();  // written through: nothing to rename
    return report;
  }
  // close(2) is never retried (docs/CONVENTIONS.md#system-calls). rename(2)
  // replaces the name `path` itself: a symbolic link put there since the
  // check is replaced, never followed.
  if (::close(to.fd.release()) != 0 || std::rename(to.temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(to.temporary.c_str());
    throw std::system_error(error, std::generic_category(), "spinrpc: cannot write the trace " + path);
  }
  return report;
}

}  // namespace spinrpc::trace
