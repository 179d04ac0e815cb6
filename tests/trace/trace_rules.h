#pragma once
// The one place the trace suite checks a trace file against the rules of
// the Chrome trace-event format and against the names and fields the trace
// documents (trace/trace_record.h, trace/trace_writer.h). Every test
// that reads a trace goes through load_trace(), so a file that breaks a rule
// fails whichever test wrote it.

#include <cstdint>      // std::int64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <nlohmann/json.hpp>

namespace spinrpc::test {

/// One trace event, as parsed (ts and dur in µs; 0 where the event has none).
struct TraceEvent {
  std::string ph;    ///< "X", "i" or "M"
  std::string name;
  std::string cat;   ///< empty for "M"
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  double ts = 0;
  double dur = 0;
  nlohmann::json args;
  /// For "X": the index (in TraceFile::events) of the smallest "X" span of
  /// the same pid and tid that contains it; -1 for none.
  int parent = -1;
  /// args.seq, for "X" and "i".
  std::int64_t seq = -1;

  double end() const noexcept { return ts + dur; }
};

/// A parsed, checked trace file.
struct TraceFile {
  nlohmann::json doc;
  std::vector<TraceEvent> events;

  /// otherData.spinrpc.
  const nlohmann::json& spinrpc() const { return doc.at("otherData").at("spinrpc"); }
  /// The "X" events with args.seq == `seq` on process `pid`, in file order.
  std::vector<const TraceEvent*> spans_of(std::int64_t pid, std::int64_t seq) const;
  /// The one "X" event named `name` among `spans` (fails the test if there
  /// is none or more than one).
  const TraceEvent& only(const std::vector<const TraceEvent*>& spans, std::string_view name) const;
  /// The seqs (> 0) that have a request span on process `pid`, ascending.
  std::vector<std::int64_t> request_seqs(std::int64_t pid) const;
  /// The parent of `event`, or null.
  const TraceEvent* parent_of(const TraceEvent& event) const;
};

/// Slack for comparing µs values parsed as doubles: the file has exact ns
/// (three decimals), a double sum of two of them is off by far less.
inline constexpr double kSlackUs = 0.001;

/// Reads and parses `path` and checks every rule (fails the calling test
/// case, through doctest's CHECK/REQUIRE, on each one broken):
///   - a JSON object with a "traceEvents" array, "displayTimeUnit" "ns" and
///     otherData.spinrpc {clock "CLOCK_MONOTONIC", pid, cut, channels[]};
///   - each event: ph in {X, i, M}, integer pid and tid, a name; X and i:
///     a numeric ts >= 0, a cat, args with integer seq and cpu; X: a
///     numeric dur >= 0; i: s "t", cat "decision", integer args.value; M:
///     process_name or thread_name with a string args.name;
///   - the documented name, cat and args of every kind of span;
///   - per (pid, tid), the X spans nest: taken by ts, the longer first, each
///     lies within the smallest open span that contains its start, or starts
///     at or after that span's end (within kSlackUs).
TraceFile load_trace(const std::string& path);

/// The same checks on a document already parsed (a merged file, say).
TraceFile check_trace(nlohmann::json doc, const std::string& what);

}  // namespace spinrpc::test
