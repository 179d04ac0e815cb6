// Fuzz target: Server::serve over an FrameChannel, fed a whole client byte
// stream. Single-threaded: the input is written to a memfd that serves as the
// server's stdin (it reads the bytes, then a real EOF); replies go to a
// second memfd, or to /dev/null.
//
// serve() must end by returning (the client closed between frames) or by
// throwing ProtocolError or PeerClosed, never anything else, never a crash
// and never a hang (libFuzzer's -timeout catches that). Beyond that:
//  - a normal return means the input was nothing but whole frames;
//  - a ProtocolError's what() is one of tsgo's stderr lines ("api: …" or
//    "unexpected message type: N"), one line;
//  - the buffer size is invisible: the same input through a 16-byte buffer
//    that is given back above 64 bytes (every grow, slide and Hold-retire
//    path of FrameChannel runs) and through the default 64 KiB buffer gives the
//    same reply bytes and the same ending;
//  - once a call() into the client failed because the stream did (EOF or
//    malformed bytes), the session ends with an exception, even when the
//    handler swallowed it (RequestContext::call's contract);
//  - the same input served in API 7.1 (dialect/api_dialect.h) ends the same
//    way but for its "ipc: " lines, unless it names batchRequests (whose
//    items may Call the client and so read the stream differently from
//    7.0's unknown-method Error); every batchRequests Response 7.1 writes is
//    one JSON value.
//
// Handlers besides the built-ins make the Call path reachable:
//   callback       payload "NAME ARGS": reply with the result of Call NAME(ARGS)
//   callbackLoop   payload "NAME": up to 4 Calls, CallErrors and stray frames caught
//   swallow        payload "NAME": up to 3 Calls, every exception caught, reply anyway
//   throw          throws std::runtime_error(payload)
//   throwInt       throws 42 (not a std::exception)
//   hasCallback    replies whether the client announced callback <payload>
#include <fcntl.h>     // ::open, O_WRONLY, O_CLOEXEC, F_DUPFD_CLOEXEC
#include <unistd.h>    // ::lseek, ::close

#include <chrono>        // std::chrono::microseconds
#include <cstddef>       // std::byte, std::size_t
#include <cstdint>       // std::uint8_t
#include <cstdio>        // std::fprintf
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error
#include <vector>        // std::vector

#include "channel/frame_channel.h"
#include "stream/peer_closed.h"
#include "callback_list.h"
#include "fuzz_check.h"
#include "fuzz_session.h"
#include "memfd_io.h"
#include "protocol/frame_decoder.h"
#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"
#include "server/server.h"
#include "tests/support/fd_channel.h"

#include <nlohmann/json.hpp>

namespace {

using spinrpc::ByteView;
using spinrpc::RequestContext;
using spinrpc::fuzz::Session;
using spinrpc::fuzz::fatal_marks;
using spinrpc::fuzz::make_memfd;
using spinrpc::fuzz::read_back;
using spinrpc::fuzz::write_all;

// Frames over 1 MiB are refused: fuzz inputs are small, and the default
// 256 MiB would only make an announced length cost a 256 MiB reservation.
constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 20;

// The client's --callbacks, as the server is told them and as hasCallback checks them.
const std::vector<std::string> kClientCallbacks{"readFile", "realpath"};

void add_handlers(spinrpc::Server& server, Session& session) {
  server.on("callback", [&session](RequestContext& ctx) {
    const std::string_view payload = ctx.payload_text();
    const std::size_t space = payload.find(' ');
    const std::string_view name = payload.substr(0, space);
    const std::string_view args =
        space == std::string_view::npos ? std::string_view() : payload.substr(space + 1);
    fatal_marks(session, [&] { ctx.reply() = ctx.call(name, args); });
  });
  server.on("callbackLoop", [&session](RequestContext& ctx) {
    // The Request's payload must stay valid across the Calls (FrameChannel::Hold).
    const std::string name(ctx.payload_text());
    for (int i = 0; i < 4; ++i) {
      try {
        fatal_marks(session, [&] { ctx.reply() += ctx.call(ctx.payload_text(), std::to_string(i)); });
      } catch (const spinrpc::RemoteError& e) {
        ctx.reply() += e.what();
      } catch (const spinrpc::PeerClosed&) {
        throw;
      } catch (const spinrpc::ProtocolError&) {
        throw;
      } catch (const std::runtime_error& e) {
        ctx.reply() += e.what();  // a stray frame: tsgo's "unexpected message while waiting"
      }
      FUZZ_CHECK(ctx.payload_text() == name, "the Request's payload survives its Calls");
    }
  });
  server.on("swallow", [&session](RequestContext& ctx) {
    for (int i = 0; i < 3; ++i) {
      try {
        ctx.call(ctx.payload_text(), std::string_view("x"));
      } catch (const spinrpc::PeerClosed&) {
        session.call_failed_fatally = true;
      } catch (const spinrpc::ProtocolError&) {
        session.call_failed_fatally = true;
      } catch (...) {
      }
    }
    ctx.reply() = "swallowed";
  });
  server.on("throw", [](RequestContext& ctx) -> void {
    throw std::runtime_error(std::string(ctx.payload_text()));
  });
  server.on("throwInt", [](RequestContext&) -> void { throw 42; });
  server.on("hasCallback", [callbacks = spinrpc::fuzz::CallbackList(kClientCallbacks)](RequestContext& ctx) {
    ctx.reply() = callbacks.contains(ctx.payload_text()) ? "true" : "false";
  });
  // The built-in reports read counts, which differ with the buffer size;
  // still run it, but reply with something that does not.
  server.on("getChannelStats", [](RequestContext& ctx) {
    (void)ctx.channel_stats();
    ctx.reply() = "stats";
  });
}

struct Run {
  enum class End { Returned, ProtocolError, PeerClosed } end;
  std::string message;
  bool inside_field = false;
  bool call_failed_fatally = false;
  std::string output;  // empty when written to /dev/null
};

// One whole session: a fresh Server and channel over the input.
Run serve(ByteView input, spinrpc::ChannelOptions options, bool timing, bool capture,
          spinrpc::ApiVersion version = *spinrpc::parse_api_version("7.0")) {
  const int in = make_memfd("fuzz-client-to-server");
  write_all(in, input);
  FUZZ_CHECK(::lseek(in, 0, SEEK_SET) == 0, "lseek on a memfd");
  int out = -1;
  int out_copy = -1;
  if (capture) {
    out = make_memfd("fuzz-server-to-client");
    out_copy = ::fcntl(out, F_DUPFD_CLOEXEC, 0);
    FUZZ_CHECK(out_copy >= 0, "dup a memfd");
  } else {
    out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    FUZZ_CHECK(out >= 0, "open /dev/null");
  }

  Session session;
  spinrpc::ServerOptions server_options;
  server_options.cwd = "/fuzz";
  server_options.callbacks = kClientCallbacks;
  server_options.timing = timing;
  server_options.api_version = version;
  server_options.max_message_bytes = kMaxMessageBytes;
  spinrpc::Server server(std::move(server_options));
  add_handlers(server, session);
  options.limits.max_message_bytes = kMaxMessageBytes;

  Run run{};
  {
    spinrpc::FrameChannel channel = spinrpc::test::fd_channel(spinrpc::UniqueFd(in), spinrpc::UniqueFd(out), options);
    try {
      server.serve(channel);
      run.end = Run::End::Returned;
    } catch (const spinrpc::ProtocolError& e) {
      run.end = Run::End::ProtocolError;
      run.message = e.what();
    } catch (const spinrpc::PeerClosed& e) {
      run.end = Run::End::PeerClosed;
      run.message = e.what();
      run.inside_field = e.inside_field();
    } catch (const std::system_error& e) {
      // Documented for serve(), but a memfd and /dev/null cannot fail: a
      // system_error here is a bug (a closed or foreign fd, for one).
      std::fprintf(stderr, "serve threw std::system_error: %s\n", e.what());
      FUZZ_CHECK(false, "serve never meets an OS failure on memfds");
    }
    // Any other exception escapes and ends the process: a finding.
  }
  run.call_failed_fatally = session.call_failed_fatally;
  if (capture) {
    run.output = read_back(out_copy);
    ::close(out_copy);
  }
  return run;
}

// Whether `input` is nothing but whole frames (under the same limit).
bool whole_frames_only(ByteView input) {
  spinrpc::Limits limits;
  limits.max_message_bytes = kMaxMessageBytes;
  while (!input.empty()) {
    try {
      const spinrpc::DecodeResult r = spinrpc::decode_frame(input, limits);
      if (r.status != spinrpc::DecodeResult::Status::frame) return false;
      input = input.subspan(r.size_bytes);
    } catch (const spinrpc::ProtocolError&) {
      return false;
    }
  }
  return true;
}

void check_run(const Run& run, ByteView input) {
  switch (run.end) {
    case Run::End::Returned:
      FUZZ_CHECK(whole_frames_only(input), "serve returns only when the input was whole frames");
      FUZZ_CHECK(!run.call_failed_fatally, "a failed call() ends the session with an exception");
      break;
    case Run::End::ProtocolError:
      FUZZ_CHECK(run.message.rfind("api: ", 0) == 0 || run.message.rfind("ipc: ", 0) == 0 ||
                     run.message.rfind("unexpected message type: ", 0) == 0,
                 "a ProtocolError from serve is one of tsgo's lines");
      FUZZ_CHECK(run.message.find('\n') == std::string::npos, "a ProtocolError is one line");
      break;
    case Run::End::PeerClosed:
      FUZZ_CHECK(!run.message.empty() && run.message.find('\n') == std::string::npos,
                 "a PeerClosed is one line");
      break;
  }
}

// The same ending, where 7.1 says "ipc: " for 7.0's "api: " transport lines.
bool same_ending_but_prefix(const Run& v70, const Run& v71) {
  if (v70.end != v71.end) return false;
  if (v70.message == v71.message) return true;
  return v70.message.rfind("api: ", 0) == 0 && v71.message.rfind("ipc: ", 0) == 0 &&
         v70.message.substr(5) == v71.message.substr(5);
}

// Every batchRequests Response in `output` (the server's frames) is JSON.
void check_batch_replies(const std::string& output) {
  ByteView rest = spinrpc::as_bytes(output);
  spinrpc::Limits limits;
  limits.max_message_bytes = kMaxMessageBytes * 2;
  while (!rest.empty()) {
    const spinrpc::DecodeResult r = spinrpc::decode_frame(rest, limits);
    FUZZ_CHECK(r.status == spinrpc::DecodeResult::Status::frame, "the server writes whole frames");
    if (r.frame.type == spinrpc::MessageType::Response && r.frame.name_text() == "batchRequests") {
      FUZZ_CHECK(nlohmann::json::accept(r.frame.payload_text()), "a batchRequests reply is one JSON value");
    }
    rest = rest.subspan(r.size_bytes);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView input(reinterpret_cast<const std::byte*>(data), size);

  spinrpc::ChannelOptions tiny;
  tiny.initial_buffer_bytes = 16;
  tiny.retained_buffer_bytes = 64;
  const Run small = serve(input, tiny, false, true);
  check_run(small, input);

  const Run big = serve(input, spinrpc::ChannelOptions{}, false, true);
  check_run(big, input);
  FUZZ_CHECK(small.output == big.output, "the buffer size does not change the replies");
  FUZZ_CHECK(small.end == big.end && small.message == big.message &&
                 small.inside_field == big.inside_field,
             "the buffer size does not change how the session ends");

  // --timing and a spinning reader: other code, same ending.
  spinrpc::ChannelOptions spinning = tiny;
  spinning.spin.budget = std::chrono::microseconds(20);
  spinning.spin.adaptive = true;
  const Run timed = serve(input, spinning, true, false);
  check_run(timed, input);
  FUZZ_CHECK(timed.end == small.end && timed.message == small.message,
             "--timing and spinning do not change how the session ends");

  const Run v71 = serve(input, tiny, false, true, *spinrpc::parse_api_version("7.1"));
  check_run(v71, input);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.find("batchRequests") == std::string_view::npos) {
    FUZZ_CHECK(same_ending_but_prefix(small, v71), "API 7.1 ends a session as 7.0 does, but for its ipc: lines");
  }
  check_batch_replies(v71.output);
  return 0;
}
