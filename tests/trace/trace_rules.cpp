#include "tests/trace/trace_rules.h"

#include <algorithm>  // std::sort, std::find
#include <array>      // std::array
#include <fstream>    // std::ifstream
#include <map>        // std::map
#include <numeric>    // std::iota
#include <sstream>    // std::stringstream
#include <utility>    // std::pair

#include <doctest/doctest.h>

namespace spinrpc::test {
namespace {

using nlohmann::json;

constexpr std::array kFrameTypes = {"Request", "Response", "Error", "Call", "CallResponse", "CallError"};
constexpr std::array kWaitWhys = {"the bytes came while spinning", "spin budget spent", "CPU contended (a late yield)",
                                  "spin budget 0", "adaptive rule: spinning suspended", "placement: one blocking read"};
constexpr std::array kInstantPrefixes = {"adaptive: spinning suspended", "adaptive: spinning resumed",
                                         "CPU contended: spin ended", "placement: ", "transport: moved to shared memory",
                                         "transport: stays on descriptors"};

template <std::size_t N>
bool one_of(std::string_view value, const std::array<const char*, N>& set) {
  return std::find_if(set.begin(), set.end(), [&](const char* s) { return value == s; }) != set.end();
}

bool is_count(const json& args, const char* key) {
  return args.contains(key) && args.at(key).is_number_integer() && args.at(key).get<std::int64_t>() >= 0;
}

// Spans with the same ts and dur sort outer kind first, so that one that
// encloses the other (a wait and its spin child) keeps its place.
int depth_rank(const TraceEvent& e) {
  if (e.cat == "request") return 0;
  if (e.cat == "call") return 1;
  if (e.cat == "handler") return 2;
  if (e.cat == "send" || e.cat == "read") return 3;
  if (e.name == "wait") return 4;
  return 5;
}

// The documented name, cat and args of one X or i event (`where` names it).
void check_documented(const TraceEvent& e, const std::string& where) {
  const json& a = e.args;
  if (e.ph == "i") {
    CHECK_MESSAGE(std::find_if(kInstantPrefixes.begin(), kInstantPrefixes.end(),
                               [&](const char* p) { return e.name.starts_with(p); }) != kInstantPrefixes.end(),
                  where << ": an instant named " << e.name);
    return;
  }
  if (e.cat == "wait") {
    if (e.name == "wait") {
      CHECK_MESSAGE((a.value("ended_by", "") == "spin" || a.value("ended_by", "") == "block"), where);
      CHECK_MESSAGE((a.contains("why") && a["why"].is_string() && one_of(a["why"].get<std::string>(), kWaitWhys)),
                    where);
      CHECK_MESSAGE((a.contains("spin_us") && a["spin_us"].is_number() && a["spin_us"].get<double>() >= 0), where);
      CHECK_MESSAGE(is_count(a, "tries"), where);
    } else if (e.name == "spin") {
      CHECK_MESSAGE(is_count(a, "tries"), where);
    } else {
      CHECK_MESSAGE(e.name == "block", where << ": a wait span named " << e.name);
    }
  } else if (e.cat == "send" || e.cat == "read") {
    const std::string prefix = e.cat + " ";
    CHECK_MESSAGE((e.name.starts_with(prefix) && one_of(std::string_view(e.name).substr(prefix.size()), kFrameTypes)),
                  where << ": named " << e.name);
    CHECK_MESSAGE(is_count(a, "bytes"), where);
  } else if (e.cat == "request") {
    CHECK_MESSAGE(!e.name.empty(), where << ": a request span without its method");
    CHECK_MESSAGE((a.value("reply", "") == "Response" || a.value("reply", "") == "Error"), where);
    CHECK_MESSAGE(is_count(a, "bytes_out"), where);
    CHECK_MESSAGE(is_count(a, "bytes_in"), where);
  } else if (e.cat == "handler") {
    const char* key = e.name == "callback" ? "callback" : "method";
    CHECK_MESSAGE((e.name == "handler" || e.name == "callback"), where << ": a handler span named " << e.name);
    CHECK_MESSAGE((a.contains(key) && a[key].is_string() && !a[key].get<std::string>().empty()), where);
  } else if (e.cat == "call") {
    CHECK_MESSAGE((e.name.starts_with("call ") && e.name.size() > 5), where << ": named " << e.name);
    CHECK_MESSAGE((a.value("reply", "") == "CallResponse" || a.value("reply", "") == "CallError"), where);
  } else {
    FAIL_CHECK(where << ": an undocumented cat " << e.cat);
  }
}

}  // namespace

TraceFile check_trace(json doc, const std::string& what) {
  TraceFile file;
  REQUIRE_MESSAGE(doc.is_object(), what << ": not a JSON object");
  REQUIRE_MESSAGE((doc.contains("traceEvents") && doc["traceEvents"].is_array()), what << ": no traceEvents array");
  CHECK_MESSAGE(doc.value("displayTimeUnit", "") == "ns", what);
  REQUIRE_MESSAGE((doc.contains("otherData") && doc["otherData"].contains("spinrpc")), what << ": no otherData.spinrpc");
  const json& spinrpc = doc["otherData"]["spinrpc"];
  if (!spinrpc.contains("merged")) {
    CHECK_MESSAGE(spinrpc.value("clock", "") == "CLOCK_MONOTONIC", what);
    CHECK_MESSAGE(is_count(spinrpc, "pid"), what);
    CHECK_MESSAGE((spinrpc.contains("cut") && spinrpc["cut"].is_boolean()), what);
    REQUIRE_MESSAGE((spinrpc.contains("channels") && spinrpc["channels"].is_array()), what);
    for (const json& c : spinrpc["channels"]) {
      CHECK_MESSAGE((c.contains("label") && c["label"].is_string()), what);
      for (const char* key : {"tid", "requests_begun", "requests_written", "max_requests"}) {
        CHECK_MESSAGE(is_count(c, key), what << ": channels[]." << key);
      }
    }
  }

  const json& events = doc["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    const std::string where = what + ": traceEvents[" + std::to_string(i) + "] " + e.dump().substr(0, 300);
    REQUIRE_MESSAGE(e.is_object(), where);
    TraceEvent event;
    REQUIRE_MESSAGE((e.contains("ph") && e["ph"].is_string()), where);
    event.ph = e["ph"];
    REQUIRE_MESSAGE((event.ph == "X" || event.ph == "i" || event.ph == "M"), where);
    REQUIRE_MESSAGE((e.contains("pid") && e["pid"].is_number_integer()), where);
    REQUIRE_MESSAGE((e.contains("tid") && e["tid"].is_number_integer()), where);
    REQUIRE_MESSAGE((e.contains("name") && e["name"].is_string()), where);
    event.pid = e["pid"];
    event.tid = e["tid"];
    event.name = e["name"];
    REQUIRE_MESSAGE((e.contains("args") && e["args"].is_object()), where);
    event.args = e["args"];
    if (event.ph == "M") {
      CHECK_MESSAGE((event.name == "process_name" || event.name == "thread_name"), where);
      CHECK_MESSAGE((event.args.contains("name") && event.args["name"].is_string()), where);
      file.events.push_back(std::move(event));
      continue;
    }
    REQUIRE_MESSAGE((e.contains("ts") && e["ts"].is_number()), where);
    event.ts = e["ts"];
    CHECK_MESSAGE(event.ts >= 0, where);
    REQUIRE_MESSAGE((e.contains("cat") && e["cat"].is_string()), where);
    event.cat = e["cat"];
    REQUIRE_MESSAGE(is_count(event.args, "seq"), where);
    event.seq = event.args["seq"];
    CHECK_MESSAGE((event.args.contains("cpu") && event.args["cpu"].is_number_integer()), where);
    if (event.ph == "X") {
      REQUIRE_MESSAGE((e.contains("dur") && e["dur"].is_number()), where);
      event.dur = e["dur"];
      CHECK_MESSAGE(event.dur >= 0, where);
    } else {
      CHECK_MESSAGE(e.value("s", "") == "t", where);
      CHECK_MESSAGE(event.cat == "decision", where);
      CHECK_MESSAGE((event.args.contains("value") && event.args["value"].is_number_integer()), where);
    }
    check_documented(event, where);
    file.events.push_back(std::move(event));
  }

  // Nesting, per (pid, tid).
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<int>> rows;
  for (int i = 0; i < static_cast<int>(file.events.size()); ++i) {
    const TraceEvent& e = file.events[i];
    if (e.ph == "X") rows[{e.pid, e.tid}].push_back(i);
  }
  for (auto& [row, indexes] : rows) {
    std::sort(indexes.begin(), indexes.end(), [&](int l, int r) {
      const TraceEvent& a = file.events[l];
      const TraceEvent& b = file.events[r];
      if (a.ts != b.ts) return a.ts < b.ts;
      if (a.dur != b.dur) return a.dur > b.dur;
      return depth_rank(a) < depth_rank(b);
    });
    std::vector<int> open;
    for (const int i : indexes) {
      TraceEvent& e = file.events[i];
      while (!open.empty()) {
        const TraceEvent& top = file.events[open.back()];
        if (e.ts >= top.ts - kSlackUs && e.end() <= top.end() + kSlackUs) break;  // inside it
        CHECK_MESSAGE(e.ts >= top.end() - kSlackUs,
                      what << ": \"" << e.name << "\" (seq " << e.seq << ", ts " << e.ts << ", dur " << e.dur
                           << ") overlaps \"" << top.name << "\" (seq " << top.seq << ", ts " << top.ts << ", dur "
                           << top.dur << ") without nesting in it");
        open.pop_back();
      }
      e.parent = open.empty() ? -1 : open.back();
      open.push_back(i);
    }
  }
  file.doc = std::move(doc);
  return file;
}

TraceFile load_trace(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "no trace file at " << path);
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  REQUIRE_MESSAGE(!doc.is_discarded(), path << " is not valid JSON");
  return check_trace(std::move(doc), path);
}

std::vector<const TraceEvent*> TraceFile::spans_of(std::int64_t pid, std::int64_t seq) const {
  std::vector<const TraceEvent*> spans;
  for (const TraceEvent& e : events) {
    if (e.ph == "X" && e.pid == pid && e.seq == seq) spans.push_back(&e);
  }
  return spans;
}

const TraceEvent& TraceFile::only(const std::vector<const TraceEvent*>& spans, std::string_view name) const {
  const TraceEvent* found = nullptr;
  int count = 0;
  for (const TraceEvent* e : spans) {
    if (e->name == name) {
      found = e;
      ++count;
    }
  }
  REQUIRE_MESSAGE(count == 1, "expected one span named \"" << std::string(name) << "\", found " << count);
  return *found;
}

std::vector<std::int64_t> TraceFile::request_seqs(std::int64_t pid) const {
  std::vector<std::int64_t> seqs;
  for (const TraceEvent& e : events) {
    if (e.ph == "X" && e.pid == pid && e.cat == "request" && e.seq > 0) seqs.push_back(e.seq);
  }
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

const TraceEvent* TraceFile::parent_of(const TraceEvent& event) const {
  return event.parent < 0 ? nullptr : &events[static_cast<std::size_t>(event.parent)];
}

}  // namespace spinrpc::test
