#include "server/server.h"

#include <sys/stat.h>  // ::stat
#include <unistd.h>    // ::readlink

#include <cctype>     // std::isupper, std::tolower, std::toupper
#include <chrono>     // std::chrono
#include <stdexcept>  // std::invalid_argument

#include "channel/fd_channel.h"
#include "protocol/protocol_error.h"
#include "server/channel_stats_json.h"
#include "server/client_frames.h"
#include "protocol/go_format.h"

namespace spinrpc {
namespace {

constexpr std::string_view kGetServerTiming = "getServerTiming";
constexpr std::string_view kResetServerTiming = "resetServerTiming";
constexpr char kUnexpectedResponse[] = "api: unexpected response message in sync connection";
constexpr char kEmptyMethod[] = "api: invalid request: a Request with an empty method name";

std::string initialize_reply(const ServerOptions& options) {
  std::string json = R"({"useCaseSensitiveFileNames":)";
  json += options.use_case_sensitive_file_names ? "true" : "false";
  json += R"(,"currentDirectory":)";
  append_json_string(json, options.cwd);
  json += '}';
  return json;
}

}  // namespace

Server::Server(ServerOptions options) : options_(std::move(options)), timing_(options_.timing) {
  reply_.reserve(kReservedReplyBytes);

  on("echo", [](RequestContext& ctx) { ctx.reply_view(ctx.payload()); });
  // tsgo's undocumented liveness check, in both modes: "pong" whatever the params.
  on("ping", [](RequestContext& ctx) { ctx.reply_view(as_bytes(R"("pong")")); });
  // Not tsgo's: the spin counters of this server's reader (docs/SPIN.md#counters).
  on("getChannelStats", [](RequestContext& ctx) { append_json(ctx.reply(), ctx.channel_stats()); });
  // initialize ignores its payload (tsgo answers null, {} and empty alike).
  on("initialize", [reply = initialize_reply(options_)](RequestContext& ctx) {
    ctx.reply_view(as_bytes(reply));
  });
}

Server::~Server() = default;

void Server::add_handler(std::string_view method, Handler handler) {
  if (method.empty()) throw std::invalid_argument("spinrpc: a method name must not be empty");
  if (method == kGetServerTiming || method == kResetServerTiming) {
    throw std::invalid_argument("spinrpc: " + std::string(method) +
                                " is answered by the server itself and cannot be replaced");
  }
  if (!handler) throw std::invalid_argument("spinrpc: handler for " + std::string(method) + " is empty");
  handlers_.insert_or_assign(std::string(method), std::move(handler));
}

void Server::serve(FdChannel& channel) {
  while (const auto frame = detail::read_client_frame(channel)) {
    switch (frame->type) {
      case MessageType::Request:
        // tsgo's message layer sees a Request without a method as a
        // response and says so ("unexpected response message"), which names
        // the wrong thing; the exit status is the same
        // (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
        if (frame->name.empty()) throw ProtocolError(kEmptyMethod);
        answering_.set(true);
        dispatch(channel, frame->name_text(), frame->payload);
        answering_.set(false);
        break;
      case MessageType::CallResponse:
      case MessageType::CallError:
        throw ProtocolError(kUnexpectedResponse);
      case MessageType::Response:
      case MessageType::Error:
      case MessageType::Call:
        throw ProtocolError("unexpected message type: " +
                            std::to_string(static_cast<unsigned>(frame->type)));
    }
  }
}

void Server::dispatch(FdChannel& channel, std::string_view method, ByteView payload) {
  const ByteView name = as_bytes(method);
  // Answered before dispatch and never recorded, as tsgo does.
  if (method == kGetServerTiming) {
    channel.write_frame(MessageType::Response, name, as_bytes(timing_.snapshot_json()));
    return;
  }
  if (method == kResetServerTiming) {
    timing_.reset();
    channel.write_frame(MessageType::Response, name, as_bytes("null"));
    return;
  }

  // The request's name and payload must survive the handler's Calls.
  const FdChannel::Hold hold = channel.hold_frame();
  RequestContext ctx(channel, method, payload, reply_);
  if (run(ctx)) {
    channel.write_frame(MessageType::Response, name, ctx.response_payload());
  } else {
    channel.write_frame(MessageType::Error, name, as_bytes(error_text_));
  }
}

bool Server::run(RequestContext& ctx) {
  const std::string_view method = ctx.method();
  const auto wall_start = timing_.enabled() ? std::chrono::system_clock::now()
                                            : std::chrono::system_clock::time_point{};
  const auto start = timing_.enabled() ? std::chrono::steady_clock::now()
                                       : std::chrono::steady_clock::time_point{};

  bool failed = true;
  const auto handler = handlers_.find(method);
  if (handler == handlers_.end()) {
    error_text_.assign(detail::kInvalidRequest);
    error_text_ += "unknown API method ";
    append_go_quoted(error_text_, method);
  } else {
    try {
      handler->second(ctx);
      failed = false;
    } catch (const std::exception& e) {
      if (ctx.channel_failure()) std::rethrow_exception(ctx.channel_failure());
      error_text_.assign(e.what());
    } catch (...) {
      if (ctx.channel_failure()) std::rethrow_exception(ctx.channel_failure());
      error_text_.assign("api: handler for " + std::string(method) + " threw a non-standard exception");
    }
    // A handler that caught a failed call()'s exception and returned still
    // ends the session: the stream is gone or out of step, so no Response
    // may follow (RequestContext::call; found by tests/fuzz, seed
    // swallow-eof-during-call).
    if (ctx.channel_failure()) std::rethrow_exception(ctx.channel_failure());
  }
  if (timing_.enabled()) {
    timing_.record(method, std::chrono::steady_clock::now() - start, wall_start);
  }
  return !failed;
}

bool detect_case_sensitivity() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return true;
  std::string original(path, static_cast<std::size_t>(n));
  std::string swapped = original;
  bool changed = false;
  for (char& c : swapped) {
    const auto u = static_cast<unsigned char>(c);
    const char flipped = static_cast<char>(std::isupper(u) ? std::tolower(u) : std::toupper(u));
    changed = changed || flipped != c;
    c = flipped;
  }
  if (!changed) return true;
  struct stat a {}, b {};
  if (::stat(original.c_str(), &a) != 0 || ::stat(swapped.c_str(), &b) != 0) return true;
  return !(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

}  // namespace spinrpc
