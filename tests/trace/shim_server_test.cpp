// The trace end to end: the client shim (SyncRpcOptions::trace) against the
// real spinrpc-server and against scripted_server (spinrpc-server's own
// main with the scripted methods of tests/peers/, for a server that Calls
// back), both sides tracing, each file read back through the shared rules
// (trace_rules.h) and the two compared. Only orderings on the one clock
// both sides read (CLOCK_MONOTONIC) are asserted, never durations.
#include <errno.h>     // program_invocation_short_name
#include <signal.h>    // ::kill, SIGKILL, SIGTERM
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG
#include <unistd.h>    // ::getpid, environ

#include <algorithm>  // std::sort
#include <chrono>     // std::chrono
#include <cmath>      // std::abs
#include <cstdint>    // std::int64_t
#include <filesystem> // std::filesystem
#include <map>        // std::map
#include <optional>   // std::optional
#include <stdexcept>  // std::logic_error, std::runtime_error
#include <string>     // std::string
#include <utility>    // std::pair
#include <vector>     // std::vector

#include <doctest/doctest.h>

#include "client-shim/child_exited.h"
#include "client-shim/sync_rpc_channel.h"
#include "protocol/remote_error.h"
#include "tests/support/paths.h"
#include "tests/support/proc.h"
#include "tests/trace/run_shell.h"
#include "tests/trace/scratch_dir.h"
#include "tests/trace/trace_rules.h"

namespace {

using spinrpc::ChildExited;
using spinrpc::RemoteError;
using spinrpc::SyncRpcChannel;
using spinrpc::SyncRpcOptions;
using spinrpc::test::bin_path;
using spinrpc::test::kSlackUs;
using spinrpc::test::load_trace;
using spinrpc::test::ScratchDir;
using spinrpc::test::TraceEvent;
using spinrpc::test::TraceFile;

// The request span among one request's spans; null if it has none.
const TraceEvent* request_span(const std::vector<const TraceEvent*>& spans) {
  const TraceEvent* request = nullptr;
  for (const TraceEvent* e : spans) {
    if (e->cat == "request") request = e;
  }
  return request;
}

// steady_clock (CLOCK_MONOTONIC) now, in the trace's unit (µs).
double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Options that trace to `pattern`. A hang is bounded by ctest's TIMEOUT.
SyncRpcOptions traced(const std::string& pattern, std::optional<bool> shared_memory = std::nullopt) {
  SyncRpcOptions options;
  options.trace = pattern;
  options.shared_memory = shared_memory;
  return options;
}

// Two times the trace took from one clock read.
bool same_time(double a, double b) { return std::abs(a - b) <= kSlackUs; }

// Whether `ancestor` is `e` or encloses it through its parents.
bool descends_from(const TraceFile& file, const TraceEvent& e, const TraceEvent& ancestor) {
  for (const TraceEvent* p = &e; p != nullptr; p = file.parent_of(*p)) {
    if (p == &ancestor) return true;
  }
  return false;
}

// Every span of every request the client wrote: the request span at the
// top; inside it its send Request first, then its reply's read, a wait in
// that read; a Call's read, the "call <name>" with its callback and its
// answer's send inside. Returns seq -> method.
std::map<std::int64_t, std::string> check_client_requests(const TraceFile& file, std::int64_t pid) {
  std::map<std::int64_t, std::string> methods;
  for (const std::int64_t seq : file.request_seqs(pid)) {
    INFO("client seq " << seq);
    const auto spans = file.spans_of(pid, seq);
    const TraceEvent* request = request_span(spans);
    REQUIRE(request != nullptr);
    methods[seq] = request->name;
    CHECK(file.parent_of(*request) == nullptr);
    const TraceEvent& send = file.only(spans, "send Request");
    const std::string reply_type = request->args.at("reply");
    const TraceEvent& read = file.only(spans, "read " + reply_type);
    CHECK(file.parent_of(send) == request);
    CHECK(file.parent_of(read) == request);
    CHECK(same_time(send.ts, request->ts));  // the request begins with its send
    CHECK(send.end() <= read.ts + kSlackUs);                             // then the reply's read
    CHECK(same_time(read.end(), request->end()));
    // Both frames carry the method's name: the same count of bytes beside
    // the payloads the request counts.
    const std::int64_t name_bytes = send.args.at("bytes").get<std::int64_t>() - request->args.at("bytes_out").get<std::int64_t>();
    CHECK(name_bytes >= 0);
    CHECK(read.args.at("bytes").get<std::int64_t>() - request->args.at("bytes_in").get<std::int64_t>() == name_bytes);
    int waits_in_read = 0;
    for (const TraceEvent* e : spans) {
      INFO(e->name << " at " << e->ts);
      CHECK(descends_from(file, *e, *request));  // every span of the request is inside it
      if (e->name == "wait" && file.parent_of(*e) == &read) ++waits_in_read;
      if (e->name == "wait") CHECK(file.parent_of(*e)->cat == "read");  // a client waits only to read
      if (e->cat == "call") {
        const std::string callback = e->name.substr(5);
        CHECK(file.parent_of(*e) == request);
        int answers = 0, callbacks = 0;
        for (const TraceEvent* c : spans) {
          if (file.parent_of(*c) != e) continue;
          if (c->name == "callback") {
            ++callbacks;
            CHECK(c->args.at("callback") == callback);
          } else {
            CHECK(c->name == "send " + e->args.at("reply").get<std::string>());
            ++answers;
          }
        }
        // A callback span unless the name is unknown (a CallError at once).
        CHECK(callbacks == (e->args.at("reply") == "CallError" ? callbacks : 1));
        CHECK(callbacks <= 1);
        CHECK(answers == 1);
      }
    }
    CHECK(waits_in_read >= 1);
  }
  return methods;
}

// Every span of every request the server wrote: its read Request (its waits
// inside), then the request span, with the handler and the reply's send
// inside; a Call's span inside the handler, with its send Call and the
// answer's read. Returns seq -> method.
std::map<std::int64_t, std::string> check_server_requests(const TraceFile& file, std::int64_t pid) {
  std::map<std::int64_t, std::string> methods;
  const std::vector<std::int64_t> seqs = file.request_seqs(pid);
  for (const std::int64_t seq : seqs) {
    INFO("server seq " << seq);
    const auto spans = file.spans_of(pid, seq);
    const TraceEvent* request = request_span(spans);
    REQUIRE(request != nullptr);
    methods[seq] = request->name;
    const TraceEvent& read = file.only(spans, "read Request");
    const std::string reply_type = request->args.at("reply");
    const TraceEvent& send = file.only(spans, "send " + reply_type);
    CHECK(file.parent_of(*request) == nullptr);
    CHECK(file.parent_of(read) == nullptr);
    CHECK(read.end() <= request->ts + kSlackUs);  // the request begins as its read ends
    CHECK(file.parent_of(send) == request);
    // Its handler (batchRequests: one per item, each named for its item's
    // method), before the reply.
    std::vector<const TraceEvent*> handlers;
    for (const TraceEvent* e : spans) {
      if (e->name == "handler") handlers.push_back(e);
    }
    CHECK((request->name == "batchRequests" ? !handlers.empty() : handlers.size() == 1));
    for (const TraceEvent* h : handlers) {
      CHECK(file.parent_of(*h) == request);
      if (request->name != "batchRequests") CHECK(h->args.at("method") == request->name);
      CHECK(h->end() <= send.ts + kSlackUs);
    }
    const TraceEvent& handler = *handlers.front();
    CHECK(same_time(send.end(), request->end()));
    const std::int64_t name_bytes = read.args.at("bytes").get<std::int64_t>() - request->args.at("bytes_out").get<std::int64_t>();
    CHECK(name_bytes >= 0);
    CHECK(send.args.at("bytes").get<std::int64_t>() - request->args.at("bytes_in").get<std::int64_t>() == name_bytes);
    for (const TraceEvent* e : spans) {
      INFO(e->name << " at " << e->ts);
      // Each span of the request is its read Request's or the request's
      // own: the wait for the next Request is that request's. Only the
      // last request is followed by a wait of its own, the one that saw
      // the end of input, after it.
      const bool inside = descends_from(file, *e, read) || descends_from(file, *e, *request);
      const bool last_wait = e->cat == "wait" && seq == seqs.back() && e->ts >= request->end() - kSlackUs;
      CHECK((inside || last_wait));
      if (e->cat == "call") {
        CHECK(file.parent_of(*e) == &handler);
        int sends = 0, reads = 0;
        for (const TraceEvent* c : spans) {
          if (file.parent_of(*c) != e) continue;
          if (c->name == "send Call") ++sends;
          if (c->name == "read " + e->args.at("reply").get<std::string>()) ++reads;
        }
        CHECK(sends == 1);
        CHECK(reads == 1);
      }
    }
  }
  return methods;
}

// The request span of `seq` in `file` on `pid`.
const TraceEvent& request_span(const TraceFile& file, std::int64_t pid, std::int64_t seq) {
  for (const TraceEvent* e : file.spans_of(pid, seq)) {
    if (e->cat == "request") return *e;
  }
  FAIL("no request span for seq " << seq);
  throw std::logic_error("unreachable");
}

// The two files line up on the one clock: the server's request begins
// after the client's began and its reply starts going out before the
// client's request ends (the end of the server's own send may be read
// after the client has the bytes, so only its start is ordered); a
// server's Call begins before the client's read of it ends, and the
// client's answer goes out before the server's Call ends.
void check_lined_up(const TraceFile& client, std::int64_t client_pid, const TraceFile& server,
                    std::int64_t server_pid, std::int64_t seq) {
  INFO("seq " << seq);
  const TraceEvent& c = request_span(client, client_pid, seq);
  const TraceEvent& s = request_span(server, server_pid, seq);
  const auto c_spans = client.spans_of(client_pid, seq);
  const auto s_spans = server.spans_of(server_pid, seq);
  CHECK(s.ts >= c.ts);
  CHECK(server.only(s_spans, "read Request").end() >= client.only(c_spans, "send Request").ts);
  const std::string reply = s.args.at("reply");
  CHECK(server.only(s_spans, "send " + reply).ts <= c.end());
  CHECK(c.args.at("reply") == reply);
  CHECK(c.args.at("bytes_out") == s.args.at("bytes_out"));
  CHECK(c.args.at("bytes_in") == s.args.at("bytes_in"));
  std::vector<const TraceEvent*> c_calls, s_calls;
  for (const TraceEvent* e : c_spans) {
    if (e->cat == "call") c_calls.push_back(e);
  }
  for (const TraceEvent* e : s_spans) {
    if (e->cat == "call") s_calls.push_back(e);
  }
  REQUIRE(c_calls.size() == s_calls.size());
  std::sort(c_calls.begin(), c_calls.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
  std::sort(s_calls.begin(), s_calls.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
  for (std::size_t i = 0; i < c_calls.size(); ++i) {
    CHECK(c_calls[i]->name == s_calls[i]->name);
    CHECK(c_calls[i]->args.at("reply") == s_calls[i]->args.at("reply"));
    CHECK(s_calls[i]->ts <= c_calls[i]->ts);
    CHECK(c_calls[i]->ts <= s_calls[i]->end());
  }
}

// Every timestamp of the file between `from` and `to` (µs on steady_clock):
// no span reaches back before the session began.
void check_in_session(const TraceFile& file, double from, double to) {
  for (const TraceEvent& e : file.events) {
    if (e.ph == "M") continue;
    INFO(e.name << " seq " << e.seq << " ts " << e.ts << " dur " << e.dur);
    CHECK(e.ts >= from);
    CHECK(e.end() <= to);
  }
}

struct Session {
  std::int64_t client_pid = ::getpid();
  std::int64_t server_pid = 0;
  int status = 0;
};

// The scripted session: echoes, requests whose handlers Call the client
// (an answer; a CallError for a name not registered; one for a callback
// that throws), an Error reply, an unknown method, a 5 MiB echo each way,
// and one more echo.
Session scripted_session(const std::string& pattern, std::optional<bool> shared_memory,
                         std::chrono::milliseconds request_timeout) {
  Session session;
  SyncRpcOptions options = traced(pattern, shared_memory);
  options.request_timeout = request_timeout;
  SyncRpcChannel channel(bin_path("scripted_server"), {}, options);
  session.server_pid = channel.pid();
  channel.register_callback("readFile", [](std::string_view, std::string_view path) {
    return "contents of " + std::string(path);
  });
  CHECK(channel.request("echo", "first") == "first");
  CHECK(channel.request("callback", "readFile /src/a.ts") == "contents of /src/a.ts");
  CHECK(channel.request("callbackError", "nosuch").starts_with("unknown callback: `nosuch`"));
  channel.register_callback("failing", [](std::string_view, std::string_view) -> std::string {
    throw std::runtime_error("no such file");
  });
  CHECK(channel.request("callbackError", "failing") == "no such file");
  CHECK_THROWS_WITH_AS(channel.request("throwWith", "no luck"), "no luck", RemoteError);
  CHECK_THROWS_AS(channel.request("noSuchMethod", ""), RemoteError);
  const std::string big(5 << 20, 'b');
  CHECK(channel.request("echo", big) == big);
  CHECK(channel.request("echo", "last") == "last");
  session.status = channel.close();
  return session;
}

TEST_CASE("a scripted session's trace: both files valid, every request whole on both sides, seqs and clocks agree") {
  // On pipes and on shared memory; and with a request_timeout, which times
  // the callbacks on its own path (far above what the session takes).
  for (const auto& [shm, timeout] : {std::pair{false, std::chrono::milliseconds(0)},
                                     std::pair{true, std::chrono::milliseconds(0)},
                                     std::pair{false, std::chrono::milliseconds(60'000)}}) {
    CAPTURE(shm);
    CAPTURE(timeout.count());
    ScratchDir dir;
    const double from = now_us();
    const Session s = scripted_session(dir / "t-%p.json", shm, timeout);
    const double to = now_us();
    CHECK(s.status == 0);
    const std::string client_path = dir / ("t-" + std::to_string(s.client_pid) + ".json");
    const std::string server_path = dir / ("t-" + std::to_string(s.server_pid) + ".json");
    // Two files, one per process, nothing else (no temporary).
    std::vector<std::string> expected{"t-" + std::to_string(s.client_pid) + ".json",
                                      "t-" + std::to_string(s.server_pid) + ".json"};
    std::sort(expected.begin(), expected.end());
    CHECK(dir.files() == expected);
    const TraceFile client = load_trace(client_path);
    const TraceFile server = load_trace(server_path);
    CHECK(client.spinrpc().at("pid") == s.client_pid);
    CHECK(server.spinrpc().at("pid") == s.server_pid);
    CHECK(client.spinrpc().at("cut") == false);
    CHECK(server.spinrpc().at("cut") == false);
    check_in_session(client, from, to);
    check_in_session(server, from, to);

    const auto client_methods = check_client_requests(client, s.client_pid);
    const auto server_methods = check_server_requests(server, s.server_pid);
    const std::map<std::int64_t, std::string> script{
        {1, "echo"},         {2, "callback"}, {3, "callbackError"}, {4, "callbackError"},
        {5, "throwWith"}, {6, "noSuchMethod"},  {7, "echo"},          {8, "echo"}};
    CHECK(client_methods == script);
    CHECK(server_methods == script);
    for (const auto& [seq, method] : script) check_lined_up(client, s.client_pid, server, s.server_pid, seq);

    // The replies each request got, as the script expects them.
    const auto reply = [&](const TraceFile& f, std::int64_t pid, std::int64_t seq) {
      return request_span(f, pid, seq).args.at("reply").get<std::string>();
    };
    for (const std::int64_t seq : {1, 2, 3, 4, 7, 8}) CHECK(reply(client, s.client_pid, seq) == "Response");
    for (const std::int64_t seq : {5, 6}) CHECK(reply(client, s.client_pid, seq) == "Error");
    // The Calls: an answer, a CallError for the unknown callback (no
    // callback ran), one for the callback that threw (it ran).
    CHECK(client.only(client.spans_of(s.client_pid, 2), "call readFile").args.at("reply") == "CallResponse");
    CHECK(server.only(server.spans_of(s.server_pid, 2), "call readFile").args.at("reply") == "CallResponse");
    CHECK(client.only(client.spans_of(s.client_pid, 3), "call nosuch").args.at("reply") == "CallError");
    CHECK(server.only(server.spans_of(s.server_pid, 3), "call nosuch").args.at("reply") == "CallError");
    CHECK(client.only(client.spans_of(s.client_pid, 4), "call failing").args.at("reply") == "CallError");
    CHECK(client.only(client.spans_of(s.client_pid, 4), "callback").args.at("callback") == "failing");
    for (const std::int64_t seq : {2, 3, 4}) {
      int callbacks = 0;
      // By cat too: the request span of the method "callback" has that name.
      for (const TraceEvent* e : client.spans_of(s.client_pid, seq)) callbacks += e->cat == "handler";
      CHECK(callbacks == (seq == 3 ? 0 : 1));
    }
    // The 5 MiB payload went out and came back.
    CHECK(request_span(client, s.client_pid, 7).args.at("bytes_out") == 5 << 20);
    CHECK(request_span(client, s.client_pid, 7).args.at("bytes_in") == 5 << 20);

    // The rows' names.
    std::map<std::int64_t, std::string> threads, processes;
    for (const TraceFile* f : {&client, &server}) {
      for (const TraceEvent& e : f->events) {
        if (e.name == "thread_name") threads[e.pid] = e.args.at("name");
        if (e.name == "process_name") processes[e.pid] = e.args.at("name");
      }
    }
    CHECK(threads[s.client_pid] == "spinrpc client: scripted_server");
    CHECK(threads[s.server_pid] == "scripted_server");
    CHECK(processes[s.server_pid] == "scripted_server");
    CHECK(processes[s.client_pid] == std::string(program_invocation_short_name));

    // The move to shared memory is an instant on both sides; without an
    // offer there is no decision to record.
    for (const auto& [f, pid] : {std::pair{&client, s.client_pid}, std::pair{&server, s.server_pid}}) {
      int moved = 0, transport = 0;
      for (const TraceEvent& e : f->events) {
        moved += e.ph == "i" && e.pid == pid && e.name == "transport: moved to shared memory";
        transport += e.ph == "i" && e.name.starts_with("transport: ");
      }
      CHECK(moved == (shm ? 1 : 0));
      CHECK(transport == moved);
    }
  }
}

TEST_CASE("against spinrpc-server itself: requests, an Error and a big payload, both sides traced") {
  ScratchDir dir;
  const double from = now_us();
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"}, traced(dir / "t-%p.json"));
  const std::int64_t server_pid = channel.pid();
  for (int i = 0; i < 10; ++i) CHECK(channel.request("echo", "n" + std::to_string(i)) == "n" + std::to_string(i));
  CHECK_THROWS_AS(channel.request("noSuchMethod", "{}"), RemoteError);
  const std::string big(3 << 20, 'x');
  CHECK(channel.request("echo", big) == big);
  CHECK(channel.close() == 0);
  const double to = now_us();
  const TraceFile client = load_trace(dir / ("t-" + std::to_string(::getpid()) + ".json"));
  const TraceFile server = load_trace(dir / ("t-" + std::to_string(server_pid) + ".json"));
  check_in_session(client, from, to);
  check_in_session(server, from, to);
  const auto c = check_client_requests(client, ::getpid());
  const auto s = check_server_requests(server, server_pid);
  CHECK(c.size() == 12);
  CHECK(c == s);
  CHECK(c.at(11) == "noSuchMethod");
  for (const auto& [seq, method] : c) check_lined_up(client, ::getpid(), server, server_pid, seq);
  CHECK(request_span(server, server_pid, 11).args.at("reply") == "Error");
}

TEST_CASE("method names JSON must escape, and bytes that are not UTF-8, leave both files valid and alike") {
  ScratchDir dir;
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"}, traced(dir / "t-%p.json"));
  const std::int64_t server_pid = channel.pid();
  const std::string odd = std::string("q\"b\\s\n\t\x01 \xff\xfe \u2028 \xe2\x82 end");
  CHECK_THROWS_AS(channel.request(odd, ""), RemoteError);
  CHECK(channel.close() == 0);
  const TraceFile client = load_trace(dir / ("t-" + std::to_string(::getpid()) + ".json"));
  const TraceFile server = load_trace(dir / ("t-" + std::to_string(server_pid) + ".json"));
  // Each byte that is not UTF-8 becomes U+FFFD, as Go's encoding/json has it.
  const std::string as_written = "q\"b\\s\n\t\x01 \ufffd\ufffd \u2028 \ufffd\ufffd end";
  const auto client_methods = check_client_requests(client, ::getpid());
  const auto server_methods = check_server_requests(server, server_pid);
  REQUIRE(client_methods.size() == 1);
  REQUIRE(server_methods.size() == 1);
  CHECK(client_methods.at(1) == as_written);
  CHECK(server_methods.at(1) == as_written);
}

TEST_CASE("the requests spinrpc-server answers outside its handlers are traced too: timing and batchRequests") {
  ScratchDir dir;
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api", "--useCaseSensitiveFileNames", "--timing"},
                         traced(dir / "t-%p.json"));
  const std::int64_t server_pid = channel.pid();
  CHECK(channel.request("echo", "x") == "x");
  CHECK_FALSE(channel.request("getServerTiming", "").empty());
  CHECK(channel.request("resetServerTiming", "") == "null");
  CHECK_FALSE(
      channel.request("batchRequests", R"({"requests":[{"method":"echo","params":"a"},{"method":"ping"}]})").empty());
  CHECK(channel.close() == 0);
  const TraceFile client = load_trace(dir / ("t-" + std::to_string(::getpid()) + ".json"));
  const TraceFile server = load_trace(dir / ("t-" + std::to_string(server_pid) + ".json"));
  const std::map<std::int64_t, std::string> script{
      {1, "echo"}, {2, "getServerTiming"}, {3, "resetServerTiming"}, {4, "batchRequests"}};
  CHECK(check_client_requests(client, ::getpid()) == script);
  CHECK(check_server_requests(server, server_pid) == script);
  for (const auto& [seq, method] : script) check_lined_up(client, ::getpid(), server, server_pid, seq);
  // The batch's items, each a handler inside the one request.
  std::vector<const TraceEvent*> handlers;
  for (const TraceEvent* e : server.spans_of(server_pid, 4)) {
    if (e->name == "handler") handlers.push_back(e);
  }
  std::sort(handlers.begin(), handlers.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
  std::vector<std::string> items;
  for (const TraceEvent* h : handlers) items.push_back(h->args.at("method"));
  CHECK(items == std::vector<std::string>{"echo", "ping"});
}

TEST_CASE("a client's trace is written at close() and valid when its server is SIGKILLed mid-session") {
  ScratchDir dir;
  SUBCASE("between two requests") {
    SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"}, traced(dir / "t-%p.json"));
    for (int i = 0; i < 3; ++i) CHECK(channel.request("echo", "x") == "x");
    REQUIRE(::kill(channel.pid(), SIGKILL) == 0);
    CHECK_THROWS_AS(channel.request("echo", std::string(1 << 20, 'y')), ChildExited);
    const int status = channel.close();
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    const TraceFile client = load_trace(dir / ("t-" + std::to_string(::getpid()) + ".json"));
    // The three answered requests, whole; the fourth has no request span.
    CHECK(check_client_requests(client, ::getpid()).size() == 3);
    CHECK(client.spinrpc().at("channels").at(0).at("requests_begun") == 4);
  }
  SUBCASE("inside a Call's callback") {
    SyncRpcChannel channel(bin_path("scripted_server"), {}, traced(dir / "t-%p.json"));
    const int pid = channel.pid();
    channel.register_callback("kill", [pid](std::string_view, std::string_view) {
      ::kill(pid, SIGKILL);
      return std::string("too late");
    });
    CHECK(channel.request("echo", "x") == "x");
    CHECK_THROWS_AS(channel.request("callback", "kill"), ChildExited);
    channel.close();
    const TraceFile client = load_trace(dir / ("t-" + std::to_string(::getpid()) + ".json"));
    CHECK(check_client_requests(client, ::getpid()).size() == 1);
    // The Call and its callback are there, though the request never ended.
    const auto spans = client.spans_of(::getpid(), 2);
    CHECK(client.only(spans, "read Call").cat == "read");
    std::vector<const TraceEvent*> handlers;
    for (const TraceEvent* e : spans) {
      if (e->cat == "handler") handlers.push_back(e);
    }
    CHECK(client.only(handlers, "callback").args.at("callback") == "kill");
  }
  // The server's file is lost with it; the client's is whole under its name.
  CHECK(dir.files() == std::vector<std::string>{"t-" + std::to_string(::getpid()) + ".json"});
}

TEST_CASE("a server's trace is written and valid when it is sent SIGTERM") {
  ScratchDir dir;
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"}, traced(dir / "t-%p.json"));
  const int pid = channel.pid();
  for (int i = 0; i < 5; ++i) CHECK(channel.request("echo", "x") == "x");
  // Sent once the server catches it, and close() only once it has ended on
  // it: the trace must come from the SIGTERM path, not from exit on EOF.
  REQUIRE(spinrpc::test::eventually([&] { return spinrpc::test::catches_signal(pid, SIGTERM); }));
  REQUIRE(::kill(pid, SIGTERM) == 0);
  REQUIRE(spinrpc::test::eventually([&] { return spinrpc::test::proc_stat_field(pid, 3) == "Z"; }));
  const int status = channel.close();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  const TraceFile server = load_trace(dir / ("t-" + std::to_string(pid) + ".json"));
  CHECK(check_server_requests(server, pid).size() == 5);
}

TEST_CASE("two processes never share a file: without %p the client and each server add their pids") {
  ScratchDir dir;
  SyncRpcChannel first(bin_path("spinrpc-server"), {"--api"}, traced(dir / "t.json"));
  SyncRpcChannel second(bin_path("spinrpc-server"), {"--api"}, traced(dir / "t.json"));
  const int first_pid = first.pid(), second_pid = second.pid();
  CHECK(first.request("echo", "1") == "1");
  CHECK(second.request("echo", "2") == "2");
  CHECK(second.request("echo", "3") == "3");
  CHECK(first.close() == 0);
  CHECK(second.close() == 0);
  const std::string client_file = "t." + std::to_string(::getpid()) + ".json";
  std::vector<std::string> expected{client_file, "t." + std::to_string(first_pid) + ".json",
                                    "t." + std::to_string(second_pid) + ".json"};
  std::sort(expected.begin(), expected.end());
  CHECK(dir.files() == expected);
  // Each server's file has its own requests, under its own pid.
  const TraceFile a = load_trace(dir / ("t." + std::to_string(first_pid) + ".json"));
  const TraceFile b = load_trace(dir / ("t." + std::to_string(second_pid) + ".json"));
  CHECK(a.spinrpc().at("pid") == first_pid);
  CHECK(b.spinrpc().at("pid") == second_pid);
  CHECK(check_server_requests(a, first_pid).size() == 1);
  CHECK(check_server_requests(b, second_pid).size() == 2);
  // The client's one file has both of its channels.
  const TraceFile client = load_trace(dir / client_file);
  CHECK(client.spinrpc().at("pid") == ::getpid());
  CHECK(client.spinrpc().at("channels").size() == 2);
}

TEST_CASE("the trace option passes the pattern to the server unless the child's environment sets SPINRPC_TRACE") {
  ScratchDir dir;
  SyncRpcOptions options = traced(dir / "c-%p.json");
  options.environment = std::vector<std::string>{"SPINRPC_TRACE=" + (dir / "s-%p.json")};
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"}, options);
  const int pid = channel.pid();
  CHECK(channel.request("echo", "x") == "x");
  CHECK(channel.close() == 0);
  std::vector<std::string> expected{"c-" + std::to_string(::getpid()) + ".json", "s-" + std::to_string(pid) + ".json"};
  CHECK(dir.files() == expected);
  CHECK(check_server_requests(load_trace(dir / ("s-" + std::to_string(pid) + ".json")), pid).size() == 1);
}

TEST_CASE("SPINRPC_TRACE_MAX keeps the server's last N requests, whole, and the client's option keeps as many") {
  ScratchDir dir;
  SyncRpcOptions options = traced(dir / "t-%p.json");
  std::vector<std::string> env{"SPINRPC_TRACE_MAX=5"};
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("SPINRPC_TRACE")) env.emplace_back(*e);
  }
  options.environment = env;
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"}, options);
  const int pid = channel.pid();
  for (int i = 1; i <= 20; ++i) CHECK(channel.request("echo", std::to_string(i)) == std::to_string(i));
  CHECK(channel.close() == 0);
  for (const auto& [path, who] : {std::pair{dir / ("t-" + std::to_string(pid) + ".json"), pid},
                                  std::pair{dir / ("t-" + std::to_string(::getpid()) + ".json"), ::getpid()}}) {
    INFO(path);
    const TraceFile file = load_trace(path);
    const auto& channel_info = file.spinrpc().at("channels").at(0);
    CHECK(channel_info.at("requests_begun") == 20);
    CHECK(channel_info.at("max_requests") == 5);
    CHECK(channel_info.at("requests_written") == 5);
    CHECK(file.request_seqs(who) == std::vector<std::int64_t>{16, 17, 18, 19, 20});
    const auto methods = who == pid ? check_server_requests(file, who) : check_client_requests(file, who);
    CHECK(methods.size() == 5);
  }
}

}  // namespace

namespace {

using spinrpc::test::quoted;
using spinrpc::test::run_shell;

TEST_CASE("spinrpc-server --trace FILE beats SPINRPC_TRACE, and gets the pid without %p") {
  ScratchDir dir;
  SyncRpcOptions options;
  options.environment = std::vector<std::string>{"SPINRPC_TRACE=" + (dir / "env-%p.json")};
  SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api", "--trace", dir / "flag.json"}, options);
  const int pid = channel.pid();
  CHECK(channel.request("echo", "x") == "x");
  CHECK(channel.close() == 0);
  // The client took SPINRPC_TRACE from the environment it was given.
  std::vector<std::string> expected{"env-" + std::to_string(::getpid()) + ".json",
                                    "flag." + std::to_string(pid) + ".json"};
  CHECK(dir.files() == expected);
  CHECK(check_server_requests(load_trace(dir / expected[1]), pid).size() == 1);
}

TEST_CASE("spinrpc-server --async --trace: one stderr line, and no trace") {
  ScratchDir dir;
  const auto [status, err] =
      run_shell(quoted(bin_path("spinrpc-server")) + " --api --async --trace " + quoted(dir / "t.json") + " </dev/null", dir);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(err == "spinrpc-server: no trace with --async: the trace follows the sync protocol's requests "
               "(docs/TRACE.md)\n");
  CHECK(dir.files().empty());
}

TEST_CASE("a trace that cannot be written is one stderr line, and the server ends as it would without it") {
  ScratchDir dir;
  const std::string pattern = dir / "no/such/dir/t.json";
  const auto [status, err] = run_shell("SPINRPC_TRACE=" + quoted(pattern) + " " +
                                           quoted(bin_path("spinrpc-server")) + " --api </dev/null",
                                       dir);
  CHECK(status == 0);
  const std::string head = "spinrpc: cannot create the trace " + (dir / "no/such/dir/t.");
  CHECK(err.starts_with(head));
  CHECK(err.ends_with(": No such file or directory\n"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(dir.files().empty());
}

TEST_CASE("an invalid SPINRPC_TRACE_MAX is one stderr line, and the trace keeps the default") {
  ScratchDir dir;
  for (const char* value : {"0", "abc", "-3", "16777217"}) {
    CAPTURE(value);
    const auto [status, err] = run_shell("SPINRPC_TRACE=" + quoted(dir / "t-%p.json") + " SPINRPC_TRACE_MAX=" +
                                             quoted(value) + " " + quoted(bin_path("spinrpc-server")) +
                                             " --api </dev/null",
                                         dir);
    CHECK(status == 0);
    CHECK(err == "spinrpc-server: SPINRPC_TRACE_MAX=" + std::string(value) +
                     " is not a number of requests from 1 to 16777216; the trace keeps 131072\n");
    const std::vector<std::string> files = dir.files();
    REQUIRE(files.size() == 1);
    const TraceFile file = load_trace(dir / files[0]);
    CHECK(file.spinrpc().at("channels").at(0).at("max_requests") == 131072);
    std::filesystem::remove(dir / files[0]);
  }
}

}  // namespace
