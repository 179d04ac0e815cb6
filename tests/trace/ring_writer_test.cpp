// The trace's ring, writer and registry on their own (trace/): records put
// in a Ring by hand, with time points chosen by the test, written by
// write_trace() and read back through the shared rules (trace_rules.h).
#include <errno.h>   // program_invocation_short_name
#include <unistd.h>  // ::getpid

#include <algorithm>    // std::count_if
#include <array>        // std::array
#include <chrono>       // std::chrono
#include <cstdint>      // std::int64_t
#include <filesystem>   // std::filesystem
#include <map>          // std::map
#include <optional>     // std::optional
#include <set>          // std::set
#include <string>       // std::string
#include <system_error> // std::system_error
#include <vector>       // std::vector

#include <doctest/doctest.h>

#include "protocol/message_type.h"
#include "tests/trace/ring_fill.h"
#include "tests/trace/scratch_dir.h"
#include "tests/trace/trace_rules.h"
#include "trace/trace_registry.h"
#include "trace/trace_ring.h"
#include "trace/trace_writer.h"

namespace {

using spinrpc::MessageType;
using spinrpc::test::load_trace;
using spinrpc::test::ScratchDir;
using spinrpc::test::TraceEvent;
using spinrpc::test::TraceFile;
using spinrpc::trace::Kind;
using spinrpc::trace::Ring;
using spinrpc::trace::WaitEnd;
using namespace std::chrono_literals;

constexpr auto kBudgetSpent = static_cast<std::uint8_t>(WaitEnd::budget_spent);

using spinrpc::test::client_request;
using spinrpc::test::type;

// A request with `calls` Calls and `instants` instants: 3 + 4 per Call + 1
// per instant records, a long one.
void request_with_calls(Ring& ring, Ring::Clock::time_point at, int calls, int instants = 0) {
  ring.begin_request();
  for (int i = 0; i < instants; ++i) ring.instant("placement: off", at);
  ring.span(Kind::send, type(MessageType::Request), at, at + 10ns, 1);
  auto t = at + 10ns;
  for (int i = 0; i < calls; ++i) {
    ring.span(Kind::read, type(MessageType::Call), t, t + 10ns, 1);
    ring.span(Kind::handler, spinrpc::trace::kCallbackDetail, t + 10ns, t + 20ns, 0, 0, ring.intern("readFile"));
    ring.span(Kind::send, type(MessageType::CallResponse), t + 20ns, t + 30ns, 1);
    ring.span(Kind::call, type(MessageType::CallResponse), t + 10ns, t + 30ns, 0, 0, ring.intern("readFile"));
    t += 30ns;
  }
  ring.span(Kind::read, type(MessageType::Response), t, t + 10ns, 1);
  ring.span(Kind::request, type(MessageType::Response), at, t + 10ns, 1, 1, ring.intern("callback"));
}

TraceFile write_and_load(const std::string& path, const Ring& ring,
                         std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt) {
  const std::array<const Ring*, 1> rings{&ring};
  spinrpc::trace::write_trace(path, rings, deadline);
  return load_trace(path);
}

// seq -> the X events of that seq.
std::map<std::int64_t, std::vector<const TraceEvent*>> by_seq(const TraceFile& file) {
  std::map<std::int64_t, std::vector<const TraceEvent*>> seqs;
  for (const TraceEvent& e : file.events) {
    if (e.ph == "X") seqs[e.seq].push_back(&e);
  }
  return seqs;
}

TEST_CASE("the ring keeps exactly the last N requests, each whole: N=5 after 20 requests is seqs 16..20") {
  ScratchDir dir;
  Ring ring(5, "ring under test");
  const auto base = Ring::Clock::now();
  for (int i = 0; i < 20; ++i) client_request(ring, base + i * 1us);
  REQUIRE(ring.contents().wrapped);  // 80 records in a ring of 60
  const TraceFile file = write_and_load(dir / "t.json", ring);
  const auto seqs = by_seq(file);
  std::vector<std::int64_t> kept;
  for (const auto& [seq, spans] : seqs) kept.push_back(seq);
  CHECK(kept == std::vector<std::int64_t>{16, 17, 18, 19, 20});
  for (const auto& [seq, spans] : seqs) {
    INFO("seq " << seq);
    // 4 records; the wait that spun adds its "spin" child.
    CHECK(spans.size() == 5);
    for (const char* name : {"send Request", "wait", "spin", "read Response", "echo"}) {
      CHECK(std::count_if(spans.begin(), spans.end(), [&](const TraceEvent* e) { return e->name == name; }) == 1);
    }
    const TraceEvent& request = file.only(spans, "echo");
    CHECK(file.parent_of(request) == nullptr);
    CHECK(file.parent_of(file.only(spans, "send Request")) == &request);
    CHECK(file.parent_of(file.only(spans, "read Response")) == &request);
    CHECK(file.parent_of(file.only(spans, "wait"))->name == "read Response");
    CHECK(file.parent_of(file.only(spans, "spin"))->name == "wait");
  }
  const auto& channel = file.spinrpc().at("channels").at(0);
  CHECK(channel.at("requests_begun") == 20);
  CHECK(channel.at("requests_written") == 5);
  CHECK(channel.at("max_requests") == 5);
  CHECK(channel.at("label") == "ring under test");
  CHECK(file.spinrpc().at("cut") == false);
  CHECK(file.spinrpc().at("pid") == ::getpid());
}

TEST_CASE("a ring that has not wrapped keeps every request, and the records before the first request") {
  ScratchDir dir;
  Ring ring(5, "ring");
  const auto base = Ring::Clock::now();
  ring.instant("transport: stays on descriptors", base);
  for (int i = 0; i < 3; ++i) client_request(ring, base + 1us + i * 1us);
  CHECK_FALSE(ring.contents().wrapped);
  const TraceFile file = write_and_load(dir / "t.json", ring);
  const auto seqs = by_seq(file);
  CHECK(seqs.size() == 3);
  CHECK(file.spinrpc().at("channels").at(0).at("requests_written") == 3);
  int instants = 0;
  for (const TraceEvent& e : file.events) {
    if (e.ph != "i") continue;
    ++instants;
    CHECK(e.name == "transport: stays on descriptors");
    CHECK(e.seq == 0);
  }
  CHECK(instants == 1);
}

TEST_CASE("a ring that wrapped mid-request drops that request, keeping only whole ones") {
  ScratchDir dir;
  Ring ring(2, "ring");  // 24 records
  const auto base = Ring::Clock::now();
  client_request(ring, base);        // seq 1: records 0..3
  client_request(ring, base + 1us);  // seq 2: records 4..7
  request_with_calls(ring, base + 2us, 5);  // seq 3: 23 records, 8..30: overwrites 0..6
  // Seq 2's first records are gone; seq 3 is whole (nearly all the ring holds).
  const TraceFile file = write_and_load(dir / "t.json", ring);
  const auto seqs = by_seq(file);
  REQUIRE(seqs.size() == 1);
  CHECK(seqs.begin()->first == 3);
  const auto& spans = seqs.begin()->second;
  CHECK(spans.size() == 23);
  int calls = 0;
  for (const TraceEvent* e : spans) calls += e->name == "call readFile";
  CHECK(calls == 5);
  CHECK(file.spinrpc().at("channels").at(0).at("requests_written") == 1);
}

TEST_CASE("a ring that wrapped exactly at a request's first record keeps that request") {
  ScratchDir dir;
  Ring ring(2, "ring");  // 24 records
  const auto base = Ring::Clock::now();
  request_with_calls(ring, base, 2, 1);        // seq 1: 12 records, 0..11
  request_with_calls(ring, base + 1us, 2, 1);  // seq 2: 12..23
  request_with_calls(ring, base + 2us, 2, 1);  // seq 3: 0..11 again; seq 2 is untouched
  const TraceFile file = write_and_load(dir / "t.json", ring);
  const auto seqs = by_seq(file);
  std::vector<std::int64_t> kept;
  for (const auto& [seq, spans] : seqs) kept.push_back(seq);
  CHECK(kept == std::vector<std::int64_t>{2, 3});
  for (const auto& [seq, spans] : seqs) CHECK(spans.size() == 11);  // and one instant each
}

TEST_CASE("begin_request_since gives the records appended since the mark to the new request, and no others") {
  ScratchDir dir;
  Ring ring(4, "ring");
  const auto at = Ring::Clock::now();
  ring.begin_request();  // seq 1: a server's request, read and answered
  ring.span(Kind::read, type(MessageType::Request), at, at + 100ns, 1);
  ring.span(Kind::handler, 0, at + 100ns, at + 200ns, 0, 0, ring.intern("echo"));
  ring.span(Kind::send, type(MessageType::Response), at + 200ns, at + 300ns, 1);
  ring.span(Kind::request, type(MessageType::Response), at + 100ns, at + 300ns, 0, 0, ring.intern("echo"));
  // The next read: its waits come before the frame says it is a Request.
  const std::uint64_t mark = ring.mark();
  ring.span(Kind::wait, kBudgetSpent, at + 350ns, at + 900ns, 100, 5);
  ring.instant("adaptive: spinning suspended", at + 900ns, 1);
  ring.begin_request_since(mark);
  ring.span(Kind::read, type(MessageType::Request), at + 300ns, at + 1000ns, 1);
  // A mark with nothing after it: as begin_request().
  ring.begin_request_since(ring.mark());
  CHECK(ring.requests_begun() == 3);
  const TraceFile file = write_and_load(dir / "t.json", ring);
  const auto seqs = by_seq(file);
  REQUIRE(seqs.count(1) == 1);
  REQUIRE(seqs.count(2) == 1);
  CHECK(seqs.at(1).size() == 4);
  std::vector<std::string> second;
  for (const TraceEvent* e : seqs.at(2)) second.push_back(e->name);
  std::sort(second.begin(), second.end());
  CHECK(second == std::vector<std::string>{"block", "read Request", "spin", "wait"});
  CHECK(file.parent_of(file.only(seqs.at(2), "wait"))->name == "read Request");
  for (const TraceEvent& e : file.events) {
    if (e.ph == "i") CHECK(e.seq == 2);
  }
}

TEST_CASE("a deadline already passed gives a valid file, cut short to the newest requests, that says so") {
  ScratchDir dir;
  Ring ring(3000, "ring");
  const auto base = Ring::Clock::now();
  for (int i = 0; i < 3000; ++i) client_request(ring, base + i * 1us);
  const std::array<const Ring*, 1> rings{&ring};
  const auto report = spinrpc::trace::write_trace(dir / "t.json", rings, Ring::Clock::now() - 1s);
  CHECK(report.cut);
  CHECK(report.requests > 0);
  CHECK(report.requests < 3000);
  const TraceFile file = load_trace(dir / "t.json");
  CHECK(file.spinrpc().at("cut") == true);
  CHECK(file.spinrpc().at("channels").at(0).at("requests_written") == report.requests);
  // The newest ones, consecutive, each whole.
  const auto seqs = by_seq(file);
  CHECK(seqs.size() == report.requests);
  std::int64_t expected = 3000 - static_cast<std::int64_t>(report.requests) + 1;
  for (const auto& [seq, spans] : seqs) {
    CHECK(seq == expected++);
    CHECK(spans.size() == 5);
  }
  // Without a deadline: all of them, not cut.
  const auto whole = spinrpc::trace::write_trace(dir / "u.json", rings, std::nullopt);
  CHECK_FALSE(whole.cut);
  CHECK(whole.requests == 3000);
  CHECK(load_trace(dir / "u.json").spinrpc().at("cut") == false);
}

TEST_CASE("a wait that blocked has its spin and block phases as children, the block after the spin") {
  ScratchDir dir;
  Ring ring(4, "ring");
  const auto at = Ring::Clock::now();
  ring.begin_request();
  ring.span(Kind::send, type(MessageType::Request), at, at + 100ns, 1);
  ring.span(Kind::wait, kBudgetSpent, at + 100ns, at + 5100ns, 2000, 40);  // spun 2 µs, then blocked
  ring.span(Kind::read, type(MessageType::Response), at + 100ns, at + 5200ns, 1);
  ring.span(Kind::request, type(MessageType::Response), at, at + 5200ns, 1, 1, ring.intern("echo"));
  const TraceFile file = write_and_load(dir / "t.json", ring);
  const auto spans = file.spans_of(::getpid(), 1);
  const TraceEvent& wait = file.only(spans, "wait");
  const TraceEvent& spin = file.only(spans, "spin");
  const TraceEvent& block = file.only(spans, "block");
  CHECK(wait.args.at("ended_by") == "block");
  CHECK(wait.args.at("why") == "spin budget spent");
  CHECK(wait.args.at("tries") == 40);
  CHECK(wait.args.at("spin_us").get<double>() == doctest::Approx(2.0));
  CHECK(file.parent_of(spin) == &wait);
  CHECK(file.parent_of(block) == &wait);
  CHECK(spin.dur == doctest::Approx(2.0));
  CHECK(block.ts == doctest::Approx(spin.end()));
  CHECK(block.end() == doctest::Approx(wait.end()));
}

TEST_CASE("a full names table gives \"(names table full)\" for each name past it, and the names before stay") {
  ScratchDir dir;
  Ring ring(2, "ring");
  const std::uint32_t first = ring.intern("method-0");
  for (std::size_t i = 1; i < spinrpc::trace::NameTable::kMaxNames; ++i) ring.intern("method-" + std::to_string(i));
  const std::uint32_t past = ring.intern("one too many");
  CHECK(ring.names().name(past) == "(names table full)");
  CHECK(ring.intern("another") == past);
  CHECK(ring.names().name(first) == "method-0");
  CHECK(ring.intern("method-4095") != past);  // the last one that fit
  const auto at = Ring::Clock::now();
  ring.begin_request();
  ring.span(Kind::request, type(MessageType::Response), at, at + 10ns, 0, 0, past);
  ring.begin_request();
  ring.span(Kind::request, type(MessageType::Response), at + 20ns, at + 30ns, 0, 0, first);
  const TraceFile file = write_and_load(dir / "t.json", ring);
  CHECK(file.only(file.spans_of(::getpid(), 1), "(names table full)").cat == "request");
  CHECK(file.only(file.spans_of(::getpid(), 2), "method-0").cat == "request");
}

TEST_CASE("a names table whose text is full gives \"(names table full)\" too") {
  Ring ring(1, "ring");
  const std::string long_name(1000, 'n');
  std::uint32_t id = 0;
  std::size_t added = 0;
  // 256 KiB of text: 262 names of 1000 bytes fit, well under the 4096 names.
  for (; added < 400; ++added) {
    id = ring.intern(long_name + std::to_string(added));
    if (ring.names().name(id) == "(names table full)") break;
  }
  CHECK(added == spinrpc::trace::NameTable::kArenaBytes / 1003);
  CHECK(ring.names().name(ring.intern("short")) == "short");  // shorter text still fits
}

TEST_CASE("the file is written whole under its name: no temporary left, and an unwritable path names it") {
  ScratchDir dir;
  Ring ring(2, "ring");
  client_request(ring, Ring::Clock::now());
  const std::array<const Ring*, 1> rings{&ring};
  spinrpc::trace::write_trace(dir / "t.json", rings, std::nullopt);
  CHECK(dir.files() == std::vector<std::string>{"t.json"});
  // Written again over the old one: still one file.
  client_request(ring, Ring::Clock::now() + 1ms);
  spinrpc::trace::write_trace(dir / "t.json", rings, std::nullopt);
  CHECK(dir.files() == std::vector<std::string>{"t.json"});
  CHECK(load_trace(dir / "t.json").request_seqs(::getpid()) == std::vector<std::int64_t>{1, 2});
  const std::string unwritable = dir / "no/such/dir/t.json";
  CHECK_THROWS_WITH_AS(spinrpc::trace::write_trace(unwritable, rings, std::nullopt),
                       doctest::Contains(unwritable.c_str()), std::system_error);
  CHECK(dir.files() == std::vector<std::string>{"t.json"});
}

TEST_CASE("the metadata names the process and each ring's thread row") {
  ScratchDir dir;
  Ring a(2, "spinrpc client: a");
  client_request(a, Ring::Clock::now());
  const std::array<const Ring*, 1> rings{&a};
  spinrpc::trace::write_trace(dir / "t.json", rings, std::nullopt);
  const TraceFile file = load_trace(dir / "t.json");
  std::set<std::string> names;
  for (const TraceEvent& e : file.events) {
    if (e.ph != "M") continue;
    CHECK(e.pid == ::getpid());
    names.insert(e.name + "=" + e.args.at("name").get<std::string>());
    if (e.name == "thread_name") CHECK(e.tid == a.tid());
  }
  CHECK(names == std::set<std::string>{"process_name=" + std::string(program_invocation_short_name),
                                       "thread_name=spinrpc client: a"});
}

TEST_CASE("expand_path: %p becomes the pid, %% a %; without %p the pid is added before .json, for every process") {
  using spinrpc::trace::expand_path;
  const std::string pid = std::to_string(::getpid());
  CHECK(expand_path("/tmp/t-%p.json") == "/tmp/t-" + pid + ".json");
  CHECK(expand_path("%p/%p.json") == pid + "/" + pid + ".json");
  CHECK(expand_path("/tmp/t.json") == "/tmp/t." + pid + ".json");
  CHECK(expand_path("/tmp/trace") == "/tmp/trace." + pid);
  CHECK(expand_path("/tmp/100%") == "/tmp/100%." + pid);
  // %% is a literal %: never the start of a %p, and no %p itself.
  CHECK(expand_path("/tmp/%%p-%p.json") == "/tmp/%p-" + pid + ".json");
  CHECK(expand_path("/tmp/%%p.json") == "/tmp/%p." + pid + ".json");
  CHECK(expand_path("/tmp/100%%.json") == "/tmp/100%." + pid + ".json");
  CHECK(expand_path("/tmp/%%%p.json") == "/tmp/%" + pid + ".json");
  CHECK(expand_path("/tmp/%x%") == "/tmp/%x%." + pid);
}

TEST_CASE("close_ring writes the file with the closed ring at once") {
  ScratchDir dir;
  const std::string path = dir / "closed.json";
  const auto ring = spinrpc::trace::open_ring(path, 4, "registry ring");
  client_request(*ring, Ring::Clock::now(), "closedMethod");
  CHECK(dir.files().empty());  // nothing before close
  spinrpc::trace::close_ring(ring);
  const TraceFile file = load_trace(path);
  CHECK(file.request_seqs(::getpid()) == std::vector<std::int64_t>{1});
  CHECK(file.only(file.spans_of(::getpid(), 1), "closedMethod").cat == "request");
  CHECK(dir.files() == std::vector<std::string>{"closed.json"});
}

}  // namespace
