#include "trace/trace_writer.h"

#include <errno.h>     // program_invocation_short_name
#include <fcntl.h>     // ::open
#include <unistd.h>    // ::write, ::close, ::getpid

#include <charconv>      // std::to_chars
#include <cstdio>        // std::rename
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error

#include "protocol/go_format.h"
#include "protocol/message_type.h"

namespace spinrpc::trace {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr std::size_t kRecordsPerDeadlineCheck = 4096;

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
  Output(int fd, std::string path) : fd_(fd), path_(std::move(path)) { text_.reserve(kFlushBytes + 4096); }
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
      const ssize_t n = ::write(fd_, text_.data() + at, text_.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::system_error(errno, std::generic_category(), "spinrpc: cannot write the trace " + path_);
      at += static_cast<std::size_t>(n);
    }
    text_.clear();
  }

 private:
  int fd_;
  std::string path_;
  std::string text_;
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

}  // namespace

WriteReport write_trace(const std::string& path, std::span<const Ring* const> rings,
                        std::optional<std::chrono::steady_clock::time_point> deadline) {
  const int pid = static_cast<int>(::getpid());
  const std::string temporary = path + ".tmp." + std::to_string(pid);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "spinrpc: cannot create the trace " + temporary);
  WriteReport report;
  try {
    Output out(fd, temporary);
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
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (::close(fd) != 0 || std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw std::system_error(error, std::generic_category(), "spinrpc: cannot write the trace " + path);
  }
  return report;
}

}  // namespace spinrpc::trace
