// Fuzz target: Server::serve_async over a JsonRpcChannel, fed a whole
// client byte stream (docs/ASYNC.md). Single-threaded, as
// server_serve_fuzz.cpp: the input is a memfd that serves as the server's
// stdin (its bytes, then a real EOF); replies go to a second memfd.
//
// serve_async() must end by returning (the client closed between messages)
// or by throwing ProtocolError or PeerClosed; never anything else, never a
// crash, never a hang (libFuzzer's -timeout). Beyond that:
//  - a normal return means the input was nothing but whole messages;
//  - a ProtocolError's what() is one line in tsgo's manner ("jsonrpc: ",
//    "jsontext: ", "json: ");
//  - every message the server wrote is `Content-Length: N\r\n\r\n` and a
//    body that an independent parser (nlohmann-json) reads as a JSON-RPC
//    2.0 object: a reply with an id and exactly one of result/error, or a
//    server -> client request with an "apiN" id;
//  - the buffer size is invisible: a 16-byte buffer given back above 64
//    bytes and the default 64 KiB one give the same bytes and ending;
//  - once a call() into the client failed because the stream did, the
//    session ends with an exception, even when the handler swallowed it.
//
// Handlers besides the built-ins make the call path reachable (params are
// JSON text in async mode):
//   callback       reply with the result of call("readFile", params)
//   callbackLoop   up to 4 calls, error responses caught
//   swallow        up to 3 calls, every exception caught, reply anyway
//   throw          throws std::runtime_error(params)
//   notJson        replies bytes that are not JSON (an error reply)
#include <fcntl.h>     // ::fcntl, F_DUPFD_CLOEXEC
#include <unistd.h>    // ::lseek, ::close

#include <cstddef>       // std::byte, std::size_t
#include <cstdint>       // std::uint8_t
#include <cstdio>        // std::fprintf
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error
#include <utility>       // std::move

#include <nlohmann/json.hpp>

#include "channel/byte_stream.h"
#include "channel/json_rpc_channel.h"
#include "stream/peer_closed.h"
#include "fuzz_check.h"
#include "fuzz_session.h"
#include "memfd_io.h"
#include "json_oracle.h"
#include "protocol/content_length.h"
#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"
#include "server/server.h"
#include "stream/fd_streams_posix.h"

namespace {

using spinrpc::ByteView;
using spinrpc::RequestContext;
using spinrpc::fuzz::Session;
using spinrpc::fuzz::fatal_marks;
using spinrpc::fuzz::make_memfd;
using spinrpc::fuzz::read_back;
using spinrpc::fuzz::write_all;

// Bodies over 1 MiB are refused: fuzz inputs are small.
constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 20;

void add_handlers(spinrpc::Server& server, Session& session) {
  server.on("callback", [&session](RequestContext& ctx) {
    fatal_marks(session, [&] { ctx.reply() = ctx.call("readFile", ctx.payload_text()); });
  });
  server.on("callbackLoop", [&session](RequestContext& ctx) {
    // The request's params must stay valid across the calls.
    const std::string params(ctx.payload_text());
    for (int i = 0; i < 4; ++i) {
      try {
        fatal_marks(session, [&] { ctx.reply() = ctx.call("fileExists", ctx.payload_text()); });
      } catch (const spinrpc::RemoteError& e) {
        ctx.reply() = nlohmann::json(e.what()).dump();
      }
      FUZZ_CHECK(ctx.payload_text() == params, "the request's params survive its calls");
    }
  });
  server.on("swallow", [&session](RequestContext& ctx) {
    for (int i = 0; i < 3; ++i) {
      try {
        ctx.call("realpath", ctx.payload_text());
      } catch (const spinrpc::PeerClosed&) {
        session.call_failed_fatally = true;
      } catch (const spinrpc::ProtocolError&) {
        session.call_failed_fatally = true;
      } catch (...) {
      }
    }
    ctx.reply() = R"("swallowed")";
  });
  server.on("throw", [](RequestContext& ctx) -> void {
    throw std::runtime_error(std::string(ctx.payload_text()));
  });
  server.on("notJson", [](RequestContext& ctx) { ctx.reply() = "\xff not json"; });
  // Read counts differ with the buffer size; run it, reply with a constant.
  server.on("getChannelStats", [](RequestContext& ctx) {
    (void)ctx.channel_stats();
    ctx.reply() = R"("stats")";
  });
}

struct Run {
  enum class End { Returned, ProtocolError, PeerClosed } end;
  std::string message;
  bool call_failed_fatally = false;
  std::string output;
};

Run serve(ByteView input, spinrpc::BufferOptions buffer, bool timing) {
  const int in = make_memfd("fuzz-client-to-server");
  write_all(in, input);
  FUZZ_CHECK(::lseek(in, 0, SEEK_SET) == 0, "lseek on a memfd");
  const int out = make_memfd("fuzz-server-to-client");
  const int out_copy = ::fcntl(out, F_DUPFD_CLOEXEC, 0);
  FUZZ_CHECK(out_copy >= 0, "dup a memfd");

  Session session;
  spinrpc::ServerOptions server_options;
  server_options.cwd = "/fuzz";
  server_options.callbacks = {"readFile", "fileExists", "realpath"};
  server_options.timing = timing;
  spinrpc::Server server(std::move(server_options));
  add_handlers(server, session);
  spinrpc::Limits limits;
  limits.max_message_bytes = kMaxMessageBytes;

  Run run{};
  {
    spinrpc::JsonRpcChannel channel(
        spinrpc::ByteStream(spinrpc::fd_streams(spinrpc::UniqueFd(in), spinrpc::UniqueFd(out), buffer, false), buffer,
                           spinrpc::SpinPolicy{}),
        limits);
    try {
      server.serve_async(channel);
      run.end = Run::End::Returned;
    } catch (const spinrpc::ProtocolError& e) {
      run.end = Run::End::ProtocolError;
      run.message = e.what();
    } catch (const spinrpc::PeerClosed& e) {
      run.end = Run::End::PeerClosed;
      run.message = e.what();
    } catch (const std::system_error& e) {
      std::fprintf(stderr, "serve_async threw std::system_error: %s\n", e.what());
      FUZZ_CHECK(false, "serve_async never meets an OS failure on memfds");
    }
  }
  run.call_failed_fatally = session.call_failed_fatally;
  run.output = read_back(out_copy);
  ::close(out_copy);
  return run;
}

// Whether `input` is nothing but whole messages (under the same limits).
bool whole_messages_only(ByteView input) {
  spinrpc::Limits limits;
  limits.max_message_bytes = kMaxMessageBytes;
  spinrpc::ContentLengthDecoder decoder(limits);
  while (!input.empty()) {
    try {
      const spinrpc::ContentLengthResult r = decoder.decode(input);
      if (r.status != spinrpc::ContentLengthResult::Status::message) return false;
      input = input.subspan(r.size_bytes);
    } catch (const spinrpc::ProtocolError&) {
      return false;
    }
  }
  return true;
}

// Every message written: tsgo's header, then a JSON-RPC 2.0 object.
void check_output(std::string_view out) {
  constexpr std::string_view kHeader = "Content-Length: ";
  while (!out.empty()) {
    FUZZ_CHECK(out.substr(0, kHeader.size()) == kHeader, "a message starts with Content-Length: ");
    const std::size_t end = out.find("\r\n\r\n");
    FUZZ_CHECK(end != std::string_view::npos, "the header block ends in CR LF CR LF");
    const std::string digits(out.substr(kHeader.size(), end - kHeader.size()));
    FUZZ_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
                   (digits == "0" || digits[0] != '0'),
               "the length is plain decimal");
    const std::size_t length = std::stoul(digits);
    FUZZ_CHECK(end + 4 + length <= out.size(), "the body is whole");
    const std::string_view body = out.substr(end + 4, length);
    out.remove_prefix(end + 4 + length);

    FUZZ_CHECK(spinrpc::fuzz::valid_json(body), "the body is JSON");
    FUZZ_CHECK(body.substr(0, 22) == R"({"jsonrpc":"2.0","id":)", "jsonrpc and id first, in tsgo's order");
    // A number beyond a double (echoed as written) is valid, but nlohmann
    // cannot hold it: such bodies are checked up to here.
    if (!nlohmann::json::accept(body)) continue;
    const nlohmann::json m = nlohmann::json::parse(body);
    FUZZ_CHECK(m.is_object(), "the body is a JSON object");
    FUZZ_CHECK(m.value("jsonrpc", "") == "2.0" && m.contains("id"), "jsonrpc 2.0 with an id");
    if (m.contains("method")) {
      FUZZ_CHECK(m["id"].is_string() && m["id"].get<std::string>().rfind("api", 0) == 0, "a call's id is apiN");
    } else {
      FUZZ_CHECK(m.contains("result") != m.contains("error"), "a reply has result or error");
      if (m.contains("error")) FUZZ_CHECK(m["error"].value("code", 0) == -32603, "every error is -32603");
    }
  }
}

void check_run(const Run& run, ByteView input) {
  switch (run.end) {
    case Run::End::Returned:
      FUZZ_CHECK(whole_messages_only(input), "serve_async returns only when the input was whole messages");
      FUZZ_CHECK(!run.call_failed_fatally, "a failed call() ends the session with an exception");
      break;
    case Run::End::ProtocolError:
      FUZZ_CHECK(run.message.rfind("jsonrpc: ", 0) == 0 || run.message.rfind("jsontext: ", 0) == 0 ||
                     run.message.rfind("json: ", 0) == 0,
                 "a ProtocolError from serve_async is in tsgo's manner");
      FUZZ_CHECK(run.message.find('\n') == std::string::npos, "a ProtocolError is one line");
      break;
    case Run::End::PeerClosed:
      FUZZ_CHECK(!run.message.empty() && run.message.find('\n') == std::string::npos, "a PeerClosed is one line");
      break;
  }
  check_output(run.output);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView input(reinterpret_cast<const std::byte*>(data), size);

  spinrpc::BufferOptions tiny;
  tiny.initial_buffer_bytes = 16;
  tiny.retained_buffer_bytes = 64;
  const Run small = serve(input, tiny, false);
  check_run(small, input);

  const Run big = serve(input, spinrpc::BufferOptions{}, false);
  check_run(big, input);
  FUZZ_CHECK(small.output == big.output, "the buffer size does not change the replies");
  FUZZ_CHECK(small.end == big.end && small.message == big.message,
             "the buffer size does not change how the session ends");

  // --timing: other code, same ending.
  const Run timed = serve(input, tiny, true);
  check_run(timed, input);
  FUZZ_CHECK(timed.end == small.end && timed.message == small.message, "--timing does not change how the session ends");
  return 0;
}
