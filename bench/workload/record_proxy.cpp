// spinrpc-record-proxy: stands where a client expects `tsgo --api`, spawns
// the real tsgo behind itself with --timing, forwards every frame both ways
// unchanged, and records per Request what the workload trace needs (sizes,
// never contents): the method, the request and reply payload sizes, the
// reply's type, and the server's own handling time taken from tsgo's
// getServerTiming recent-request list. bench/workload/README.md, "Recording".
//
//   SPINRPC_RECORD_TSGO=PATH SPINRPC_RECORD_OUT=FILE spinrpc-record-proxy --api --cwd DIR ...
//
// The arguments go to tsgo as they are, plus --timing if absent. Every
// SPINRPC_RECORD_TIMING_EVERY Requests (default 4; at most 5, the length of
// tsgo's recent-request list) the proxy asks tsgo for getServerTiming
// itself, between the client's requests, and does not forward it.
// getServerTiming is not itself counted by tsgo, so the client's view of
// tsgo's timing (when it asked for --timing too) is unchanged.
//
// The record (FILE, written when the client closes the connection; first
// to FILE.tmp, then renamed) is text:
//   # spinrpc-record-proxy raw 1
//   # methods NAME0 NAME1 ...
//   METHOD_INDEX REQUEST_BYTES REPLY_BYTES REPLY_TYPE SERVER_NS CALLS
// one line per Request in the order the client sent them; SERVER_NS is -1
// when tsgo's list did not cover the request (see the summary on stderr).
//
// SIGTERM (what the JS client's close() sends right after closing the
// pipe) is caught and ignored, so the record is written at EOF.
#include <csignal>     // sigaction, SIGTERM
#include <cstdio>      // std::fprintf, std::rename
#include <cstdlib>     // std::getenv
#include <exception>   // std::exception
#include <fstream>     // std::ofstream
#include <map>         // std::map
#include <string>      // std::string
#include <string_view>  // std::string_view
#include <vector>      // std::vector

#include <simdjson.h>

#include "channel/frame_channel.h"
#include "descriptor/pipe.h"
#include "client-shim/child_process.h"
#include "protocol/protocol_error.h"
#include "stream/fd_streams_posix.h"
#include "transport/stdio.h"

namespace {

using spinrpc::FrameChannel;
using spinrpc::FrameView;
using spinrpc::MessageType;

struct Record {
  std::uint32_t method;
  std::uint64_t request_bytes;
  std::uint64_t reply_bytes = 0;
  int reply_type = 0;
  std::int64_t server_ns = -1;
  std::uint32_t calls = 0;
};

class Recorder {
 public:
  std::uint32_t method_index(std::string_view name) {
    auto it = index_.find(std::string(name));
    if (it != index_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(names_.size());
    names_.emplace_back(name);
    index_.emplace(names_.back(), id);
    return id;
  }
  std::vector<Record> records;
  std::vector<std::string> names_;
  std::size_t unmatched_entries = 0;  // recent-list entries whose method disagreed

  // Folds one getServerTiming reply in: entry i of recentRequests is tsgo's
  // request number requestCount - size + i; aligned newest to newest with
  // the forwarded Requests, and kept only when the methods agree.
  void fold_timing(std::string_view json) {
    padded_ = simdjson::padded_string(json);
    simdjson::dom::element doc;
    if (parser_.parse(padded_).get(doc)) throw std::runtime_error("getServerTiming: reply is not JSON");
    simdjson::dom::array recent;
    if (doc["recentRequests"].get_array().get(recent)) throw std::runtime_error("getServerTiming: no recentRequests (was tsgo started with --timing?)");
    std::vector<std::pair<std::string_view, double>> entries;
    for (simdjson::dom::element entry : recent) {
      std::string_view method;
      double ms = 0;
      if (entry["method"].get_string().get(method) || entry["processingTimeMs"].get_double().get(ms)) {
        throw std::runtime_error("getServerTiming: malformed recentRequests entry");
      }
      entries.emplace_back(method, ms);
    }
    // Newest entry ↔ newest forwarded Request, walking back.
    std::size_t r = records.size();
    for (std::size_t e = entries.size(); e-- > 0 && r > 0;) {
      Record& rec = records[--r];
      if (names_[rec.method] != entries[e].first) {
        ++unmatched_entries;
        continue;
      }
      rec.server_ns = static_cast<std::int64_t>(entries[e].second * 1e6 + 0.5);
    }
  }

 private:
  std::map<std::string, std::uint32_t, std::less<>> index_;
  simdjson::dom::parser parser_;
  simdjson::padded_string padded_;
};

constexpr char kUsage[] =
    "usage: SPINRPC_RECORD_TSGO=PATH SPINRPC_RECORD_OUT=FILE [SPINRPC_RECORD_TIMING_EVERY=1..5] "
    "spinrpc-record-proxy --api [tsgo's flags]\n"
    "Stands in for `tsgo --api`: every other argument goes to tsgo (bench/workload/README.md, \"Recording\").\n";

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) throw std::runtime_error(std::string(name) + " must be set\n" + std::string(kUsage, sizeof kUsage - 2));
  return value;
}

void write_record(const Recorder& recorder, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << "# spinrpc-record-proxy raw 1\n# methods";
    for (const auto& name : recorder.names_) out << ' ' << name;
    out << '\n';
    for (const Record& r : recorder.records) {
      out << r.method << ' ' << r.request_bytes << ' ' << r.reply_bytes << ' ' << r.reply_type << ' '
          << r.server_ns << ' ' << r.calls << '\n';
    }
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp);
}

void ignore_sigterm() {
  struct sigaction action {};
  action.sa_handler = [](int) {};
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int run(int argc, char** argv) {
  // --help alone is ours; with SPINRPC_RECORD_TSGO set, arguments are tsgo's.
  if (argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") &&
      std::getenv("SPINRPC_RECORD_TSGO") == nullptr) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const std::string tsgo_path = required_env("SPINRPC_RECORD_TSGO");
  const std::string out_path = required_env("SPINRPC_RECORD_OUT");
  std::size_t every = 4;
  if (const char* e = std::getenv("SPINRPC_RECORD_TIMING_EVERY")) every = std::stoul(e);
  if (every < 1 || every > 5) throw std::runtime_error("SPINRPC_RECORD_TIMING_EVERY must be 1..5 (tsgo keeps 5 recent requests)");

  std::vector<std::string> args(argv + 1, argv + argc);
  bool timing = false;
  for (const auto& a : args) timing = timing || a == "--timing";
  if (!timing) args.emplace_back("--timing");

  ignore_sigterm();
  auto to_tsgo = spinrpc::make_pipe();
  auto from_tsgo = spinrpc::make_pipe();
  spinrpc::ChildProcess child = spinrpc::ChildProcess::spawn(tsgo_path, args, to_tsgo.read_end.get(), from_tsgo.write_end.get());
  to_tsgo.read_end.reset();
  from_tsgo.write_end.reset();
  // Blocking reads both ways (no spin budget), default buffering.
  FrameChannel client(spinrpc::make_stdio_transport()->accept({}, false));
  FrameChannel tsgo(spinrpc::fd_streams(std::move(from_tsgo.read_end), std::move(to_tsgo.write_end), {}, false));

  Recorder recorder;
  std::size_t since_fetch = 0;
  while (auto request = client.try_read_frame()) {
    if (request->type != MessageType::Request) {
      throw spinrpc::ProtocolError("client sent a " + std::to_string(static_cast<int>(request->type)) + " outside a Call");
    }
    Record rec{recorder.method_index(request->name_text()), request->payload.size()};
    tsgo.write_frame(request->type, request->name, request->payload);
    for (;;) {
      FrameView reply = tsgo.read_frame();
      client.write_frame(reply.type, reply.name, reply.payload);
      if (reply.type != MessageType::Call) {
        rec.reply_bytes = reply.payload.size();
        rec.reply_type = static_cast<int>(reply.type);
        break;
      }
      ++rec.calls;  // the client answers a Call with a CallResponse or CallError
      FrameView answer = client.read_frame();
      tsgo.write_frame(answer.type, answer.name, answer.payload);
    }
    recorder.records.push_back(rec);
    if (++since_fetch == every) {
      since_fetch = 0;
      tsgo.write_frame(MessageType::Request, spinrpc::as_bytes("getServerTiming"), {});
      FrameView timing_reply = tsgo.read_frame();
      if (timing_reply.type != MessageType::Response) throw std::runtime_error("getServerTiming failed: " + std::string(timing_reply.payload_text()));
      recorder.fold_timing(timing_reply.payload_text());
    }
  }
  // The client closed: fetch the last few timings, then let tsgo go.
  if (since_fetch > 0) {
    tsgo.write_frame(MessageType::Request, spinrpc::as_bytes("getServerTiming"), {});
    FrameView timing_reply = tsgo.read_frame();
    if (timing_reply.type == MessageType::Response) recorder.fold_timing(timing_reply.payload_text());
  }
  write_record(recorder, out_path);
  std::size_t missing = 0;
  for (const Record& r : recorder.records) missing += r.server_ns < 0;
  std::fprintf(stderr, "spinrpc-record-proxy: %zu requests, %zu without a server time, %zu timing entries unmatched\n",
               recorder.records.size(), missing, recorder.unmatched_entries);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spinrpc-record-proxy: %s\n", e.what());
    return 1;
  }
}
