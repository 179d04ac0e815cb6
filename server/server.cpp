#include "server/server.h"

#include <sys/stat.h>  // ::stat
#include <unistd.h>    // ::readlink

#include <cctype>     // std::isupper, std::tolower, std::toupper
#include <stdexcept>  // std::invalid_argument

#include "channel/frame_channel.h"
#include "protocol/protocol_error.h"
#include "server/channel_stats_json.h"
#include "server/client_frames.h"
#include "server/frame_session.h"
#include "protocol/go_format.h"

namespace spinrpc {
namespace {

constexpr std::string_view kGetServerTiming = "getServerTiming";
constexpr std::string_view kResetServerTiming = "resetServerTiming";
constexpr std::string_view kBatchRequests = "batchRequests";
constexpr char kUnexpectedResponse[] = "unexpected response message in sync connection";
constexpr char kEmptyMethod[] = "invalid request: a Request with an empty method name";
constexpr char kNestedBatch[] = "api: invalid request: batchRequests cannot be nested";
// Room for the frame's or the JSON-RPC message's own bytes around a
// batchRequests page, so the whole reply fits max_message_bytes.
constexpr std::size_t kReplyEnvelopeBytes = 256;

// A handler's result that is exactly its params (echo's) is already in
// the protocol's output form.
bool is_view_of(ByteView result, ByteView params) noexcept {
  return result.data() == params.data() && result.size() == params.size();
}

// The Error for a result that is not JSON; `e` says where, or nothing.
std::string not_json(std::string_view method, const ProtocolError& e) {
  std::string text = "api: the result of " + std::string(method) + " is not JSON";
  if (*e.what() != '\0') {
    text += ": ";
    text += e.what();
  }
  return text;
}

std::string initialize_reply(const ServerOptions& options, const ApiDialect& dialect) {
  std::string json;
  if (dialect.initialize == InitializeShape::case_sensitivity) {
    json = R"({"caseSensitivity":)";
    json += options.use_case_sensitive_file_names ? "1" : "0";
  } else {
    json = R"({"useCaseSensitiveFileNames":)";
    json += options.use_case_sensitive_file_names ? "true" : "false";
  }
  json += R"(,"currentDirectory":)";
  append_json_string(json, options.cwd);
  json += '}';
  return json;
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)), dialect_(&api_dialect(options_.api_version)), timing_(options_.timing) {
  reply_.reserve(kReservedReplyBytes);
  set_go_unicode_version(dialect_->unicode);

  on("echo", [](RequestContext& ctx) { ctx.reply_binary_view(ctx.payload()); });
  // tsgo's undocumented liveness check, in both modes: "pong" whatever the params.
  on("ping", [](RequestContext& ctx) { ctx.reply_view(as_bytes(R"("pong")")); });
  // Not tsgo's: the spin counters of this server's reader (docs/SPIN.md#counters).
  on("getChannelStats", [](RequestContext& ctx) { append_json(ctx.reply(), ctx.channel_stats()); });
  // initialize ignores its payload (tsgo answers null, {} and empty alike).
  on("initialize", [reply = initialize_reply(options_, *dialect_)](RequestContext& ctx) {
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

void Server::serve(FrameChannel& channel) {
  detail::FrameSession session(channel);
  while (const auto frame = detail::read_client_frame(channel)) {
    switch (frame->type) {
      case MessageType::Request:
        // tsgo's message layer sees a Request without a method as a
        // response and says so ("unexpected response message"), which names
        // the wrong thing; the exit status is the same
        // (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
        if (frame->name.empty()) throw ProtocolError(std::string(dialect_->transport_error_prefix) + kEmptyMethod);
        answering_.set(true);
        {
          // The request's name and payload must survive the handler's Calls.
          const FrameChannel::Hold hold = channel.hold_frame();
          dispatch(session, frame->name_text(), frame->payload);
        }
        answering_.set(false);
        break;
      case MessageType::CallResponse:
      case MessageType::CallError:
        throw ProtocolError(std::string(dialect_->transport_error_prefix) + kUnexpectedResponse);
      case MessageType::Response:
      case MessageType::Error:
      case MessageType::Call:
        throw ProtocolError("unexpected message type: " +
                            std::to_string(static_cast<unsigned>(frame->type)));
    }
  }
}

void Server::dispatch(detail::Session& session, std::string_view method, ByteView params, bool has_params) {
  trace::Ring* const ring = session.trace();
  // The request's span begins where its read ended (docs/TRACE.md#events)
  // and ends with its reply written, whichever way it is answered.
  const auto start = ring ? ring->last() : trace::Ring::Clock::time_point{};
  const auto traced = [&](MessageType type, std::size_t reply_bytes) {
    if (ring) {
      ring->span(trace::Kind::request, static_cast<std::uint8_t>(type), start, ring->last(), params.size(),
                 static_cast<std::uint32_t>(reply_bytes), ring->intern(method));
    }
  };
  const auto reply = [&](ByteView result) {
    session.reply(method, result);
    traced(MessageType::Response, result.size());
  };
  const auto reply_error = [&](std::string_view text) {
    session.reply_error(method, text);
    traced(MessageType::Error, text.size());
  };

  // Answered before dispatch and never recorded, as tsgo does (the trace
  // still shows them, a handler span each).
  if (method == kGetServerTiming || method == kResetServerTiming) {
    std::string_view result = "null";
    {
      const trace::ScopedSpan span(ring, trace::Kind::handler, 0, method);
      if (method == kGetServerTiming) {
        result = timing_.snapshot_json();
      } else {
        timing_.reset();
      }
    }
    reply(as_bytes(result));
    return;
  }

  if (dialect_->batch_requests && method == kBatchRequests) {
    std::string batch_reply;
    // No params member is no params at all, as tsgo's decoder sees it.
    const bool ok = answer_batch(has_params ? as_text(params) : std::string_view(),
                                 [&](const detail::BatchParams::Item& request, std::string& entry) {
      const std::string_view item_params = request.params ? std::string_view(*request.params)
                                                          : session.absent_item_params();
      RequestContext item(session, request.method, as_bytes(item_params), item_reply_);
      const bool item_ok = run_untimed(item);
      append_item_entry(session, item, item_ok, item_params, entry);
    }, batch_reply);
    if (ok) {
      reply(as_bytes(batch_reply));
    } else {
      reply_error(error_text_);
    }
    return;
  }

  RequestContext ctx(session, method, params, reply_);
  if (!run(ctx)) {
    reply_error(error_text_);
    return;
  }
  ByteView result = ctx.response_payload();
  if (!session.carries_bytes() && !is_view_of(result, params)) {
    try {
      result = as_bytes(session.json_result(as_text(result)));
    } catch (const ProtocolError& e) {
      reply_error(not_json(method, e));
      return;
    }
  }
  reply(result);
}

bool Server::run(RequestContext& ctx) {
  const ServerTiming::Started started(timing_);
  const bool ok = run_untimed(ctx);
  timing_.record(ctx.method(), started);
  return ok;
}

bool Server::run_untimed(RequestContext& ctx) {
  const std::string_view method = ctx.method();
  bool failed = true;
  const trace::ScopedSpan traced(ctx.trace(), trace::Kind::handler, 0, method);
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
    // may follow (RequestContext::call; tests/fuzz's seed
    // swallow-eof-during-call).
    if (ctx.channel_failure()) std::rethrow_exception(ctx.channel_failure());
  }
  return !failed;
}

bool Server::answer_batch(std::string_view params, const BatchItemRunner& run_item, std::string& reply) {
  const ServerTiming::Started started(timing_);
  const bool ok = answer_batch_untimed(params, run_item, reply);
  timing_.record(kBatchRequests, started);
  return ok;
}

bool Server::answer_batch_untimed(std::string_view params, const BatchItemRunner& run_item, std::string& reply) {
  try {
    const detail::BatchParams batch = detail::parse_batch_params(params);
    const std::size_t max_reply = options_.max_message_bytes > kReplyEnvelopeBytes
                                      ? options_.max_message_bytes - kReplyEnvelopeBytes
                                      : 1;
    const std::size_t page_limit = detail::batch_page_limit(batch.max_response_bytes_per_page, max_reply);
    if (batch.continuation_token) {
      reply = batch_pages_.next_page(*batch.continuation_token, page_limit);
      return true;
    }
    std::vector<std::string> entries;
    entries.reserve(batch.requests.size());
    for (const detail::BatchParams::Item& request : batch.requests) {
      std::string& entry = entries.emplace_back();
      if (request.method == kBatchRequests) {
        detail::append_batch_error(entry, request.method, kNestedBatch);
        continue;
      }
      run_item(request, entry);
      // An entry no page can carry (with the largest token it may need)
      // becomes an error that says so, never a cut or refused reply.
      if (entry.size() + kReplyEnvelopeBytes > max_reply) {
        const std::size_t size = entry.size();
        entry.clear();
        detail::append_batch_error(entry, request.method,
                                   "api: the result of " + request.method + " is " + std::to_string(size) +
                                       " bytes of JSON, more than a reply may carry (the message limit is " +
                                       std::to_string(options_.max_message_bytes) +
                                       " bytes: --max-message-bytes)");
      }
    }
    reply = batch_pages_.first_page(std::move(entries), page_limit);
    return true;
  } catch (const detail::BatchError& e) {
    error_text_.assign(e.what());
    return false;
  }
}

void Server::append_item_entry(detail::Session& session, RequestContext& item, bool ok, std::string_view params,
                               std::string& entry) {
  const std::string_view method = item.method();
  const ByteView result = item.response_payload();
  if (!ok) {
    detail::append_batch_error(entry, method, error_text_);
  } else if (session.carries_bytes() && item.reply_is_binary()) {
    detail::append_batch_binary_result(entry, method, as_text(result));
  } else if (is_view_of(result, as_bytes(params)) || (session.carries_bytes() && result.empty())) {
    detail::append_batch_result(entry, method, as_text(result));
  } else {
    try {
      detail::append_batch_result(entry, method, session.json_result(as_text(result)));
    } catch (const ProtocolError& e) {
      detail::append_batch_error(entry, method, not_json(method, e));
    }
  }
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
